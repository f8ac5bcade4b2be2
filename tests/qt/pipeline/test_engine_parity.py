"""The window shows exactly what `inspector query` (pipeline.run) returns for the same
parameters, at every slider position tried: ids, order and scores per stage, counters and
the diagnosis."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine.inputs import build_params
from inspector.core.stores.demo import BLEND_QUERY, SCOPE_QUERY
from tests.qt.qtkit import assert_matches_engine, move, shown


def test_demo_opens_on_the_scoped_miss_story(window) -> None:
    vm = window.vm
    assert vm.opened.demo
    assert vm.text == SCOPE_QUERY
    assert vm.params == build_params(preset="docs-before-fix", scope="vault-agent", limit=10)
    assert vm.trace.diagnosis.code == "scope_starvation"
    assert window.banner.isVisible()
    assert "Scope starvation" in window.banner.title.text()
    assert vm.trace.diagnosis.message in window.banner.message.text()
    assert_matches_engine(window)


OVERFETCH_GRID = (1.0, 2.5, 3.0, 4.9, 5.0, 7.3, 12.0, 20.0)


def test_overfetch_slider_matches_engine_at_every_tried_position(window) -> None:
    for f in OVERFETCH_GRID:
        move(window, "overfetch", f)
        assert window.vm.params.overfetch == pytest.approx(f)
        assert_matches_engine(window)


def test_overfetch_past_the_first_in_scope_rank_fills_the_scoped_stage(window) -> None:
    move(window, "overfetch", 1.0)
    assert window.vm.trace.counters["scopedCandidates"] == 0
    move(window, "overfetch", 3.0)
    assert window.vm.trace.counters["scopedCandidates"] > 0
    assert shown(window, "final")


@pytest.fixture
def blend_window(window, ready):
    window.vm.load_suggested(1)
    ready(window.vm)
    assert window.vm.text == BLEND_QUERY
    return window


@pytest.mark.parametrize("w", [0.0, 0.1, 0.3, 0.5, 0.77, 1.0])
@pytest.mark.parametrize("m", [0.0, 0.3, 0.5])
def test_blend_and_min_score_match_engine(blend_window, w: float, m: float) -> None:
    move(blend_window, "blend", w)
    move(blend_window, "min_score", m)
    assert blend_window.vm.params.blend == pytest.approx(w)
    assert blend_window.vm.params.min_score == pytest.approx(m)
    assert_matches_engine(blend_window)


def test_blending_swaps_the_demo_pair(blend_window) -> None:
    def first() -> str:
        return shown(blend_window, "final")[0][0]

    move(blend_window, "blend", 0.0)
    assert first() == "agent-memory-theme-close"
    move(blend_window, "blend", 0.5)
    assert first() == "agent-memory-theme-far"
    view = blend_window.stages.view("blended")
    r = view.model.row_for_id("agent-memory-theme-far")
    delta = view.model.data(view.model.index(r, view.model.columns.index("Δ")))
    assert delta.startswith("▲")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(f=st.floats(1.0, 20.0), w=st.floats(0.0, 1.0), m=st.floats(0.0, 0.8))
def test_random_slider_positions_match_engine(blend_window, f: float, w: float,
                                              m: float) -> None:
    for key, value in (("overfetch", f), ("blend", w), ("min_score", m)):
        move(blend_window, key, value)
    p = blend_window.vm.params
    assert math.isclose(p.overfetch, round(f, 1), abs_tol=0.051)
    assert_matches_engine(blend_window)


def test_both_placements_side_by_side_each_match_engine(window, ready) -> None:
    window.vm.set_compare(True)
    ready(window.vm)
    assert window.vm.placements == ("post", "pushdown")
    assert window.stages.lanes[1].isVisible()
    for lane in (0, 1):
        assert_matches_engine(window, lane)
    assert not shown(window, "final", 0)  # post-filter starves ...
    assert shown(window, "final", 1)  # ... pushdown finds the vault-agent docs
    move(window, "overfetch", 3.0)
    for lane in (0, 1):
        assert_matches_engine(window, lane)
