"""One window for any pipeline, tried as a user would: the demo's stories, the fixes offered by
the banner (each one the engine ran), the sliders generated from the declarations re-ranking
the cached fetches, the question as one evented model, a second store, the tour twice, the
palette. Every number on screen is the one `inspector query --json` prints for the same
question."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, Qt

from tests.qt.qtkit import assert_shows, move, query_json


def count_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every search of the store the pool source makes, counted."""
    from inspector.core.engine import pools

    calls: list[int] = []
    for name in ("fetch", "fetch_for"):
        real = getattr(pools, name)
        monkeypatch.setattr(pools, name, lambda *a, _r=real, **k: (calls.append(1),
                                                                   _r(*a, **k))[1])
    return calls


def story(win: Any, n: int) -> None:
    win.vm.load_suggested(n)
    win.vm.jobs.wait_idle(60)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_the_window_shows_what_inspector_query_json_gives(window, capsys, n: int) -> None:
    story(window, n)
    j = query_json(capsys, window.vm.question.plain())
    assert_shows(window, j)


def test_the_scoped_miss_fix_applied_from_the_banner_returns_what_it_said(
        window, qtbot, capsys) -> None:
    story(window, 0)
    vm, banner = window.vm, window.banner
    assert vm.answer.diagnosis.code == "filter_after_cut"
    fix = vm.answer.diagnosis.fixes[0]
    assert fix.kind == "own"
    qtbot.mouseClick(banner.buttons[0], Qt.MouseButton.LeftButton)
    vm.jobs.wait_idle(60)
    assert vm.question.set == {k: v for k, v in fix.change.sets}
    assert len(vm.trace.final.rows) == fix.returns
    assert_shows(window, query_json(capsys, vm.question.plain()))


def test_a_what_if_fix_is_marked_and_the_way_back_is_offered(window, qtbot) -> None:
    story(window, 0)
    vm, banner = window.vm, window.banner
    k = next(i for i, f in enumerate(vm.answer.diagnosis.fixes) if f.kind == "what_if")
    assert banner.buttons[k].objectName() == "bannerWhatIf"
    assert "what-if" in banner.buttons[k].toolTip().lower()
    qtbot.mouseClick(banner.buttons[k], Qt.MouseButton.LeftButton)
    vm.jobs.wait_idle(60)
    assert vm.trace.what_if and vm.question.widen
    assert banner.title.text().startswith("What-if")
    assert "not the system's behaviour" in banner.message.text()
    assert banner.back.isVisible()
    qtbot.mouseClick(banner.back, Qt.MouseButton.LeftButton)
    vm.jobs.wait_idle(60)
    assert not vm.trace.what_if and vm.question.widen == {} and not banner.back.isVisible()


def test_the_classic_sliders_are_generated_and_tell_the_importance_story(
        window, capsys, monkeypatch) -> None:
    story(window, 1)
    monkeypatch.setattr(window.vm, "_find_full", lambda *a: None)  # its probes search
    vm = window.vm
    assert {"fetch.overfetch", "blend.weight"} <= set(window.sliders.sliders)
    expected = vm.question.expect[0]
    assert vm.trace.final.ids[0] != expected  # at blend 0 the low-importance one leads
    live, searches = vm.live, count_searches(monkeypatch)
    move(window, "blend.weight", 0.5)
    assert vm.live is live and not searches  # answered from the cached fetches
    assert vm.trace.final.ids[0] == expected  # the important one overtakes it
    assert vm.driven == "blend" and window.scatter.stage == "blend"
    monkeypatch.undo()
    vm._find_full()
    vm.jobs.wait_idle(60)
    assert_shows(window, query_json(capsys, vm.question.plain()))


def test_the_over_fetch_slider_answers_from_the_cached_pool(window, capsys,
                                                          monkeypatch) -> None:
    story(window, 0)
    vm = window.vm
    monkeypatch.setattr(vm, "_find_full", lambda *a: None)  # the fix search's probes search
    live, searches = vm.live, count_searches(monkeypatch)
    move(window, "fetch.overfetch", 2.5)
    assert vm.live is live and not searches  # the pool fetched deep at once answers it
    assert vm.trace.stage("fetch").facts["depth"] == 25
    assert vm.trace.final.rows  # the first vault-agent doc comes in at depth 25
    monkeypatch.undo()
    vm.set_param("fetch.overfetch", 2.5)  # the same question: its diagnosis found now
    vm._find_full()
    vm.jobs.wait_idle(60)
    window._answer_changed()
    monkeypatch.undo()
    vm._find_full()
    vm.jobs.wait_idle(60)
    assert_shows(window, query_json(capsys, vm.question.plain()))


def test_fixes_and_expected_rows_are_found_in_a_worker(window, monkeypatch) -> None:
    from inspector.core.engine.flow.live import LiveFlow

    threads: list[bool] = []
    full = LiveFlow.full

    def spy(self: Any, *a: Any, **k: Any) -> Any:
        threads.append(threading.current_thread() is threading.main_thread())
        return full(self, *a, **k)

    monkeypatch.setattr(LiveFlow, "full", spy)
    story(window, 0)
    move(window, "fetch.overfetch", 1.5)
    assert threads and not any(threads)


def test_the_question_is_one_evented_model_and_a_slider_is_never_echoed(window) -> None:
    from pydantic import ValidationError

    story(window, 1)
    q = window.vm.question
    seen: list[str] = []
    q.events.connect(lambda info: seen.append(info.signal.name))
    slider = window.sliders.sliders["blend.weight"]
    values: list[float] = []
    slider.valueChanged.connect(values.append)
    move(window, "blend.weight", 0.35)
    assert seen == ["set"]  # one event, for the one field that changed
    assert values == [pytest.approx(0.35)]  # the answer never set the slider again
    with pytest.raises(ValidationError):
        q.vector = [float("nan")]
    assert q.vector is None and seen == ["set"]
    window.vm.put(limit=3, scopes=["ops"])
    assert sorted(seen[1:]) == ["limit", "scopes"]


def test_opening_another_store_starts_from_that_store(window, tmp_path) -> None:
    import numpy as np

    from tests.storekit import vectors_column, write_table

    store = tmp_path / "other"
    rng = np.random.default_rng(1)
    write_table(store, {"id": [f"r{i}" for i in range(40)],
                        "text": [f"row {i}" for i in range(40)],
                        "vector": vectors_column(rng.normal(size=(40, 8)).astype(np.float32))})
    vm = window.vm
    vm.put(vector=[0.1] * 256, text=None)  # a vector of the demo's 256 dimensions
    vm.jobs.wait_idle(60)
    vm.open_store(str(store))
    vm.jobs.wait_idle(60)
    q = vm.question
    assert q.store == vm.store.uri and q.preset == "lancedb"
    assert q.vector is None and q.scopes is None and q.set == {} and q.expect == []
    assert "256 dimensions" in window.error_bar.label.text()
    assert "8-dimensional" in window.error_bar.label.text()
    assert window.stages.visible_sections() == []  # no stale stage stubs


def test_the_tour_started_a_second_time_works(window, qtbot) -> None:
    tour = window.tour
    tour.start()
    n = len(tour.steps)
    tour.go(n - 1)
    assert tour.where.text().endswith(f"step {n} of {n}")
    tour.hide()
    window.action("tour").trigger()
    assert tour.where.text().endswith(f"step 1 of {n}")
    qtbot.mouseClick(tour.next, Qt.MouseButton.LeftButton)
    assert tour.where.text().endswith(f"step 2 of {n}")
    qtbot.mouseClick(tour.back, Qt.MouseButton.LeftButton)
    assert tour.where.text().endswith(f"step 1 of {n}")
    assert window.vm.error is None
    tour.hide()


def test_the_palette_finds_the_demo_stories(window) -> None:
    from inspector.qt.help_menu import commands, matches

    found = [c for c in commands(window) if matches(c, "importance")]
    assert any("editor theme" in c.text for c in found)
    hit = next(c for c in commands(window) if "Tie" in c.text)
    hit.action.trigger()
    window.vm.jobs.wait_idle(60)
    assert window.vm.question.preset == "memory-plugin"


def test_a_store_with_no_embedder_offers_the_routes_that_need_none(window, tmp_path) -> None:
    import numpy as np

    from tests.storekit import vectors_column, write_table

    store = tmp_path / "noemb"
    rng = np.random.default_rng(2)
    write_table(store, {"id": [f"r{i}" for i in range(30)],
                        "text": [f"row {i}" for i in range(30)],
                        "vector": vectors_column(rng.normal(size=(30, 32)).astype(np.float32))})
    vm = window.vm
    vm.open_store(str(store))
    vm.jobs.wait_idle(60)
    vm.set_query("anything at all")
    vm.jobs.wait_idle(60)
    routes = [b.text() for b in window.error_bar.routes]
    assert window.error_bar.isVisible()
    assert "Query vector from a file…" in routes and "Query by a row's id…" in routes
    # with no rows on screen it points to those buttons, not to a row to right-click
    said = window.error_bar.label.text()
    assert "right-click" not in said and "the buttons here" in said, said
    vm.use_as_query("r3")
    vm.jobs.wait_idle(60)
    assert vm.trace is not None and vm.trace.final.ids[0] == "r3"


def test_the_detail_pane_keeps_operators_whole() -> None:
    from inspector.qt.pipeline.detail import nobreak

    assert "!\u2060=" in nobreak("repo != 'x'") and "!=" not in nobreak("a != b")


def test_shot_renders_the_window_for_a_pipeline_preset(tmp_path, data_root) -> None:
    from inspector.cli.main import main
    from inspector.core.stores.demo import DEMO_VERSION

    out = tmp_path / "shot.png"
    code = main(["shot", str(data_root / f"demo-store-v{DEMO_VERSION}"), "--preset",
                 "importance-blend", "--text", "which editor theme does the user prefer",
                 "--blend", "0.5", "--out", str(out), "--size", "1366x768"])
    QCoreApplication.processEvents()
    assert code == 0 and out.stat().st_size > 10_000


def test_suggested_queries_shows_its_whole_label_beside_its_menu_arrow(window) -> None:
    from PySide6.QtWidgets import QStyle, QStyleOptionToolButton

    b = window.query_bar.suggested
    opt = QStyleOptionToolButton()
    b.initStyleOption(opt)
    arrow = b.style().pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, opt, b)
    assert b.width() >= b.fontMetrics().horizontalAdvance(b.text()) + arrow + 8


def test_a_switched_store_shows_no_plot_of_the_last_one(window, tmp_path) -> None:
    """The demo's question plotted, then a store whose embedder is unknown opened and a text
    asked (no answer): the score plot shows its empty range and note, not the demo's score
    range and stage names (its note sat outside that range, so the plot looked like data)."""
    from PySide6.QtWidgets import QWidget

    from inspector.qt.pipeline.plots import EMPTY_RANGE
    from tests.core.engine.flow.fixtures import fixture_copy

    window.resize(1600, 1000)
    vm = window.vm
    vm.jobs.wait_idle(60)
    scatter = window.findChild(QWidget, "scoreScatter")
    window.flush_plots()
    assert vm.trace is not None and scatter.stage is not None
    plot = scatter.getPlotItem()
    assert plot.getViewBox().viewRange()[0] != list(EMPTY_RANGE)  # the demo's scores
    store = fixture_copy("memory-lancedb-pro", tmp_path) / "store"
    vm.open_store(str(store), "memories")
    vm.jobs.wait_idle(60)
    vm.set_query("postgres connection pool size")
    vm.jobs.wait_idle(60)
    window.flush_plots()
    assert vm.trace is None and window.error_bar.isVisible()
    assert scatter.stage is None and scatter.empty.isVisible()
    (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
    assert (x0, x1, y0, y1) == pytest.approx((*EMPTY_RANGE, *EMPTY_RANGE))
    assert plot.getAxis("bottom").labelText == "" and plot.getAxis("left").labelText == ""


def test_another_repos_expected_row_is_out_of_scope_in_the_banner_and_the_panel(
        window, qtbot, capsys) -> None:
    """The scoped-miss story with another repo's row typed in as expected: the run never
    fetched it, and once the answer is found the banner and the expected rows say what
    `inspector query --expect ID` says: out of scope at the scope filter, no change returns
    it (the banner said "not fetched" until then, and after it before 2026-12-06)."""
    story(window, 0)
    rid = "agent-memory-theme-far"
    qtbot.keyClicks(window.expected.entry, rid)
    qtbot.keyClick(window.expected.entry, Qt.Key.Key_Return)
    window.vm.jobs.wait_idle(60)
    assert window.vm.question.expect == [rid]
    (e,) = query_json(capsys, window.vm.question.plain())["expect"]
    assert (e["reason"], e["dropped_at"], e["fix"], e["tried"]) == \
        ("out_of_scope", "scope", None, 0)
    assert f"★ expected {rid}: out of scope at scope" in window.banner.message.text()
    body = window.expected.body.text()
    assert "out of scope at <b>scope</b>" in body and \
        "repo &#x27;agent-memory&#x27; != &#x27;vault-agent&#x27;" in body
