"""Agreement measures on known lists, and a real side-by-side on the demo store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.analysis.compare import compare, jaccard, kendall_tau, rbo
from inspector.core.analysis.poolmap import pool_map, project
from inspector.core.analysis.truth import truth_trace
from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.stores.demo import SCOPE_QUERY
from inspector.core.stores.opening import open_store


def test_jaccard_on_known_lists() -> None:
    assert jaccard(["a", "b", "c"], ["b", "c", "d"]) == pytest.approx(2 / 4)
    assert jaccard([], []) == 1.0


def test_rbo_extrapolated_equal_lengths_by_hand() -> None:
    # X1 = 1, X2 = 1, X3 = 2: (1-p)/p * (0.9 + 0.405 + 0.486) + (2/3) * 0.729
    assert rbo(["a", "b", "c"], ["a", "c", "d"], 0.9) == pytest.approx(1.791 / 9 + 0.486)


def test_rbo_extrapolated_uneven_lengths_by_hand() -> None:
    # S = [a, b], L = [b, a, c]: X = 0, 2, 2; eq. 32 gives 1.539 / 9 + 0.729
    assert rbo(["a", "b"], ["b", "a", "c"], 0.9) == pytest.approx(1.539 / 9 + 0.729)
    assert rbo(["b", "a", "c"], ["a", "b"], 0.9) == pytest.approx(1.539 / 9 + 0.729)


def test_rbo_bounds() -> None:
    assert rbo(list("abcdef"), list("abcdef")) == pytest.approx(1.0)
    assert rbo(list("abc"), list("xyz")) == 0.0
    assert rbo([], []) == 1.0
    assert rbo(["a"], []) == 0.0


def test_kendall_tau_on_shared_items() -> None:
    assert kendall_tau(list("abcd"), list("acbd")) == pytest.approx((5 - 1) / 6)
    assert kendall_tau(list("abc"), list("cba")) == pytest.approx(-1.0)
    # only a and c are shared, in the same order; x and y are ignored
    assert kendall_tau(["a", "x", "c"], ["a", "c", "y"]) == pytest.approx(1.0)
    assert kendall_tau(["a", "b"], ["a", "z"]) is None


def _ask(demo: Path, preset: str, **more: object) -> Question:
    return Question(store=str(demo), preset=preset, scopes=["vault-agent"], limit=10,
                    text=SCOPE_QUERY, **more)


def test_side_by_side_counts_the_truth_rows_each_side_did_not_return(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    c, before, after = compare(store, _ask(demo_path, "docs-before-fix"),
                               _ask(demo_path, "docs-pushdown"), labels=("before", "pushdown"))
    assert c.ids[0] == ()  # the scoped miss: nothing survives the post-filter
    assert len(c.ids[1]) == 10 and c.ids[1] == tuple(after.trace.final.ids)
    assert c.pipelines == ("docs-before-fix", "docs-pushdown")
    assert c.starved == (10, 0) and c.recall == (0.0, 1.0)  # each side's own truth
    assert set(c.truth[1]) == set(c.ids[1])  # the prefiltered search: served as asked
    assert all(r.side == "b" and r.rank_a is None and r.text for r in c.rows)
    assert c.jaccard == 0.0 and c.rbo == 0.0 and c.kendall_tau is None
    assert before.diagnosis.code == "filter_after_cut" and not before.diagnosis.fixes
    assert c.counters[0]["scope"] == 0 and c.counters[1]["returned"] == 10
    data = c.to_json()
    assert data["rbo_form"].startswith("extrapolated") and data["b"]["starved"] == 0


def test_projection_is_deterministic_and_centred() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6)) * np.array([5, 2, 1, 1, 1, 1])
    xy, qxy, var = project(x, x[0])
    xy2, _, _ = project(x, x[0])
    assert np.allclose(xy, xy2) and np.allclose(xy.mean(axis=0), 0)
    assert np.allclose(qxy, xy[0]) and var[0] >= var[1] > 0


def test_the_map_shows_the_deep_rows_where_they_sit(demo_path: Path) -> None:
    """The rows of the probe (the stages searched deep), each ranked where the question's own
    run fetched it (the cut), flagged when a filter drops it, marked when returned."""
    store = open_store(str(demo_path))
    q = _ask(demo_path, "lancedb", set={"fetch.overfetch": 3.0})
    runs, _, _ = runs_for(q, store)
    trace, deep = runs.run(), truth_trace(runs)
    assert deep is not None
    m = pool_map(store, trace, deep, max_points=200)
    assert len(m.ids) == 200 and m.xy.shape == (200, 2) and m.query_xy is not None
    fetched = trace.stage("fetch").ids
    assert int((m.raw_rank > 0).sum()) == m.cut_depth == len(fetched) == 30
    assert [m.ids[i] for i in np.argsort(np.where(m.raw_rank > 0, m.raw_rank, 10**9))[:30]] \
        == fetched
    out = {d.id for d in deep.stage("scope").dropped}
    assert [not x for x in m.in_scope] == [i in out for i in m.ids]
    assert set(np.array(m.ids)[m.final]) == set(trace.final.ids)
    assert m.cut_radius is not None and m.cut_radius > 0 and m.stage == "fetch"
