"""Agreement measures on known lists, and a real side-by-side on the demo store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.analysis.compare import compare, jaccard, kendall_tau, rbo
from inspector.core.analysis.poolmap import pool_map, project
from inspector.core.engine.inputs import build_params, build_query
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pools import exhaustive_pool
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


def test_side_by_side_counts_rows_the_post_filter_starved(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    before = build_params(preset="docs-before-fix", scope="vault-agent", limit=10)
    after = build_params(preset="docs-pushdown", scope="vault-agent", limit=10)
    q = build_query(store, before.mode, text=SCOPE_QUERY)
    c = compare(store, q, before, after, labels=("before", "pushdown"))
    assert c.ids[0] == ()  # the scoped miss: nothing survives the post-filter
    assert len(c.ids[1]) == 10
    assert c.starved == (10, None)  # every truth row was starved; pushdown is not post-filter
    assert all(r.side == "b" and r.rank_a is None for r in c.rows)
    assert c.jaccard == 0.0 and c.rbo == 0.0 and c.kendall_tau is None
    assert c.recall[0] == 0.0 and c.recall[1] is not None and c.recall[1] > 0.5
    data = c.to_json()
    assert data["rbo_form"].startswith("extrapolated") and data["b"]["starved"] is None


def test_projection_is_deterministic_and_centred() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6)) * np.array([5, 2, 1, 1, 1, 1])
    xy, qxy, var = project(x, x[0])
    xy2, _, _ = project(x, x[0])
    assert np.allclose(xy, xy2) and np.allclose(xy.mean(axis=0), 0)
    assert np.allclose(qxy, xy[0]) and var[0] >= var[1] > 0


def test_pool_map_flags_scope_and_cut(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    p = build_params(mode="vector", scope="vault-agent", limit=10)
    q = build_query(store, p.mode, text=SCOPE_QUERY)
    trace = derive(exhaustive_pool(store, q, p, depth=200), p)
    m = pool_map(store, trace)
    assert len(m.ids) == 200 and m.xy.shape == (200, 2) and m.query_xy is not None
    assert int((m.raw_rank > 0).sum()) == m.cut_depth == 10
    assert np.array_equal(m.in_scope, trace.pool.in_scope[[trace.row_of(i) for i in m.ids]])
    assert m.cut_radius is not None and m.cut_radius > 0
