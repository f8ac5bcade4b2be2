"""A live session over a pipeline of stages equals a fresh run for any change of its
parameters, and only changes that shape a fetch search again."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine.flow.live import LiveFlow
from inspector.core.engine.flow.question import Question
from inspector.core.engine.flow.runner import FlowTrace, run
from inspector.core.stores.opening import open_store
from tests.core.engine.flow.fixtures import fixture_copy

NOW = 1796113042582.0


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> LiveFlow:
    fx = fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("live"))
    vec = json.loads((fx / "q_pg.json").read_text())
    q = Question(store=str(fx / "store"), preset="memory-lancedb-pro", vector=vec,
                 text="postgres connection pool size", limit=5,
                 scopes=["global", "agent:main", "reflection:agent:main"])
    return LiveFlow(open_store(str(fx / "store"), "memories"), q, NOW)


def shape(t: FlowTrace) -> list[Any]:
    return _nan_equal([(s.name, [(r.id, r.score, r.inputs) for r in s.rows],
                        [(d.id, d.code, d.detail) for d in s.dropped], s.deferred)
                       for s in t.stages] + [sorted((x.stage, x.ids) for x in t.ties)])


def _nan_equal(x: Any) -> Any:
    """x with every NaN as one marker: two runs that both give NaN agree (Python's == on
    tuples calls NaN unequal to a NaN it is not; a length anchor of 1e-313 makes NaN factors)."""
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    if isinstance(x, list | tuple):
        return type(x)(_nan_equal(v) for v in x)
    if isinstance(x, dict):
        return {k: _nan_equal(v) for k, v in x.items()}
    return x


def fresh(s: LiveFlow) -> FlowTrace:
    q = s.question
    return run(s.store, s.spec(), text=q.text, vector=s.vector, scopes=tuple(q.scopes or ()),
               limit=q.limit, now_ms=s.now_ms, query_source=s.source)


def values(decl: Any) -> st.SearchStrategy[Any]:
    if decl.type == "bool":
        return st.booleans()
    if decl.type == "int":
        return st.integers(int(max(decl.lo or 0, 0)), int(min(decl.hi or 100, 100)))
    lo = decl.lo if decl.lo is not None else -2.0
    hi = decl.hi if decl.hi is not None else 2.0
    return st.floats(max(lo, -2.0), min(hi, 2.0) if hi > max(lo, -2.0) else hi,
                     allow_nan=False)


@st.composite
def changes(draw: st.DrawFn, keys: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    picked = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4, unique_by=lambda k:
                           k[0]))
    return [(key, draw(values(decl))) for key, decl in picked if decl.type in
            ("bool", "int", "float")]


def test_a_live_session_equals_a_fresh_run_for_any_live_change(session: LiveFlow) -> None:
    keys = session.live_params()
    assert len(keys) > 20  # every scoring, cut and diversity stage offers its knobs
    session.sets = {}
    session.answer()  # the legs fetched once

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(changes(keys))
    def prop(change: list[tuple[str, Any]]) -> None:
        session.sets = {}
        for key, value in change:
            session.sets[key] = value
        misses = session.cache.misses
        live = session.answer()
        assert session.cache.misses == misses  # answered from the cached legs
        assert shape(live) == shape(fresh(session))

    prop()
    session.sets = {}


def test_a_fetch_parameter_searches_again_and_still_equals_a_fresh_run(session: LiveFlow
                                                                       ) -> None:
    session.sets = {}
    session.answer()
    misses = session.cache.misses
    t = session.set("vector_leg.fetch_cap", 40)
    assert session.cache.misses == misses + 1
    assert shape(t) == shape(fresh(session))
    session.sets = {}


def test_the_cache_is_bounded(session: LiveFlow) -> None:
    session.sets = {}
    for cap in range(10, 10 + session.cache.max_entries + 5):
        session.set("bm25_leg.fetch_cap", cap)
    assert len(session.cache.entries) <= session.cache.max_entries
    session.sets = {}


def test_the_answers_a_session_remembers_are_bounded(session: LiveFlow) -> None:
    """A slider swept over more values than the memo holds keeps MEMO_MAX answers (each holds
    every stage's rows), and an answer it forgot is run again, equal to a fresh run."""
    from inspector.core.engine.flow.runs import MEMO_MAX

    session.sets = {}
    session.answer()
    weights = [round(i / (MEMO_MAX + 40), 6) for i in range(MEMO_MAX + 40)]
    for w in weights:
        session.set("fused.vector_weight", w)
    assert len(session.runs._memo.entries) <= MEMO_MAX
    count = session.runs.count
    again = session.set("fused.vector_weight", weights[0])  # the oldest: forgotten
    assert session.runs.count == count + 1
    assert shape(again) == shape(fresh(session))
    session.set("fused.vector_weight", weights[-1])  # the newest: remembered
    assert session.runs.count == count + 1
    session.sets = {}


def test_every_stage_run_is_deterministic(session: LiveFlow) -> None:
    assert shape(fresh(session)) == shape(fresh(session))


def test_a_change_that_makes_nan_scores_still_equals_a_fresh_run(session: LiveFlow) -> None:
    """The example Hypothesis found: a denormal length anchor with strength 0 gives NaN length
    factors (0 x log2(inf)), the same in the live session and in a fresh run."""
    session.sets = {"length_norm.anchor": 2.2250738585e-313, "length_norm.strength": 0.0}
    live = session.answer()
    factors = [r.inputs for s in live.stages if s.name == "length_norm" for r in s.rows]
    assert any(math.isnan(v) for f in factors for k, v in f if k == "length_factor")
    assert shape(live) == shape(fresh(session))
