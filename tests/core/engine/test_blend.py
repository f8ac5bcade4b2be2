"""Importance blending as the proposal defines it, on real LanceDB tables."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.stores.opening import open_store
from tests.askkit import ask


def _line_store(make_store, importance, distances_sq):
    """Rows at chosen squared L2 distances from the origin query, one per importance value."""
    n = len(importance)
    vec = np.zeros((n, 2), np.float32)
    vec[:, 0] = np.sqrt(np.asarray(distances_sq, np.float64)).astype(np.float32)
    return make_store({"id": [f"r{i}" for i in range(n)], "text": ["t"] * n, "vector": vec,
                       "importance": pa.array(importance, pa.float64())})


ORIGIN = np.zeros(2, np.float32)


def run(store, **given):
    return ask(store, vector=ORIGIN, **given).trace


def _blend(trace) -> dict[str, dict[str, float]]:
    """Per row of the blend stage: its inputs and its blended score."""
    return {s.id: {**dict(s.inputs), "score": s.score} for s in trace.stage("blend").rows}


def test_l2_distance_is_squared_as_lancedb_defines_it(make_store):
    path = make_store({"id": ["a"], "text": ["t"], "vector": np.array([[3.0, 4.0]], np.float32)})
    t = run(open_store(str(path)), limit=1)
    c = dict(t.final.rows[0].inputs)
    assert c["distance"] == 25.0
    assert c["vector"] == 1 / 26


@pytest.mark.parametrize("importance,multiplier", [
    (0.0, 0.5), (0.7, 0.85), (1.0, 1.0), (None, 0.85), (1.5, 1.0), (-0.3, 0.5)])
def test_blend_multiplier_cases_from_the_proposal(make_store, importance, multiplier):
    path = _line_store(make_store, [importance], [1.0])
    t = run(open_store(str(path)), limit=1, blend=0.5)
    (row,) = t.final.rows
    assert dict(row.inputs)["multiplier"] == pytest.approx(multiplier, abs=1e-15)
    assert row.score == pytest.approx(0.5 * multiplier, abs=1e-15)  # vector score 1/(1+1)


def test_blend_formula_is_exact_for_any_weight(make_store):
    imps = [0.0, 0.2, 0.45, 0.7, 0.9, 1.0, None]
    path = _line_store(make_store, imps, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    store = open_store(str(path))
    for w in (0.0, 0.3, 0.5, 1.0):
        t = run(store, limit=10, blend=w)
        for s in t.final.rows:
            d = float(dict(s.inputs)["distance"])
            imp = s.row.importance
            imp = 0.7 if math.isnan(imp) else min(1.0, max(0.0, imp))
            assert s.score == (1 / (1 + d)) * ((1 - w) + w * imp)


def test_high_importance_row_outranks_a_closer_low_importance_row(make_store):
    path = _line_store(make_store, [0.1, 1.0], [0.50, 0.55])  # r0 closer, r1 important
    store = open_store(str(path))
    before = run(store, limit=2, blend=0.0)
    after = run(store, limit=2, blend=0.5)
    assert before.final.ids == ["r0", "r1"]
    assert after.final.ids == ["r1", "r0"]
    blend = after.stage("blend")
    assert [s.id for s in blend.rows_in].index("r1") + 1 == 2  # rank before the blend
    assert blend.ids.index("r1") + 1 == 1  # and after


def test_min_score_applies_to_the_blended_score(make_store):
    # vector score 1/(1+0.5) = 0.667 for both; blended 0.667*0.5 = 0.333 and 0.667*1.0
    path = _line_store(make_store, [0.0, 1.0], [0.5, 0.5])
    t = run(open_store(str(path)), limit=5, blend=0.5, min_score=0.5)
    assert t.final.ids == ["r1"]
    assert [d.id for d in t.stage("min_score").dropped] == ["r0"]
    unblended = run(open_store(str(path)), limit=5, blend=0.0, min_score=0.5)
    assert len(unblended.final.ids) == 2


def test_limit_is_applied_after_the_resort_and_results_are_descending(make_store):
    rng = np.random.default_rng(3)
    n = 40
    path = _line_store(make_store, list(rng.uniform(0, 1, n)), list(rng.uniform(0.1, 2.0, n)))
    t = run(open_store(str(path)), limit=5, overfetch=3, blend=0.5)
    scores = [s.score for s in t.final.rows]
    assert len(scores) == 5
    assert np.all(np.diff(scores) <= 0)
    # the final five are the five best blended scores of the whole 15-row pool
    pool_scores = sorted((v["score"] for v in _blend(t).values()), reverse=True)
    assert scores == pool_scores[:5]
    assert {st.name: len(st.rows) for st in t.stages if st.role != "query"} == {
        "fetch": 15, "scope": 15, "blend": 15, "min_score": 15, "final": 5}


def test_each_row_has_one_outcome_that_matches_the_drops(make_store):
    path = _line_store(make_store, [0.0, 1.0, 0.5, 0.9, float("nan")],
                       [0.1, 0.2, 0.3, 3.0, 0.4])
    store = open_store(str(path))
    t = run(store, limit=2, overfetch=2, blend=0.5, min_score=0.3)
    out = {i: "returned" for i in t.final.ids}
    for st in t.stages:
        out.update({d.id: d.code for d in st.dropped})
    assert out == {"r1": "returned", "r2": "returned", "r0": "past_limit",
                   "r4": "below_min_score"}
    assert t.stage("fetch").ids == ["r0", "r1", "r2", "r4"]  # r3 was never fetched
