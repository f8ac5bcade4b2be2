"""Pool depth D = ceil(limit x F), capped after rounding: fractional products round up, a
factor written as D / limit comes back to exactly D, and a real run fetches that many rows."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.engine.params import Depths, Params, depths, pool_depth
from inspector.core.stores.opening import open_store
from tests.askkit import ask


@pytest.mark.parametrize(("limit", "overfetch", "want"), [
    (3, 2.5, 8),  # 7.5: floor and round-half-to-even would both say 7 or 8 by luck
    (7, 1.1, 8),  # 7.700000000000001
    (3, 1.1, 4),  # 3.3000000000000003: round() says 3
    (10, 1.01, 11),  # 10.1: round() says 10
    (1, 2.5, 3),  # 2.5: round() says 2 (half to even)
])
def test_pool_depth_rounds_a_fractional_product_up(limit, overfetch, want):
    assert pool_depth(limit, overfetch, 0) == want
    assert depths(Params(limit=limit, overfetch=overfetch, cap=0)).pool == want


@pytest.mark.parametrize("limit", [1, 3, 7, 10])
def test_pool_depth_of_a_whole_product_is_that_product(limit):
    """F = 1 and F = 2 fetch exactly limit and 2 x limit rows, never one more."""
    assert pool_depth(limit, 1.0, 0) == limit
    assert pool_depth(limit, 2.0, 0) == 2 * limit


def test_an_overfetch_written_as_depth_over_limit_round_trips_to_that_depth():
    """F = D / limit times limit lands a hair above D for some pairs (7 x (29/7) is
    29.000000000000004): the depth is still D, not D + 1."""
    assert 7 * (29 / 7) > 29 and 19 * (21 / 19) > 21  # the float noise this is about
    assert pool_depth(7, 29 / 7, 0) == 29
    assert pool_depth(19, 21 / 19, 0) == 21
    for limit in range(1, 40):
        for d in range(limit, 120):
            assert pool_depth(limit, d / limit, 0) == d, (limit, d)


def test_the_cap_applies_to_the_rounded_up_depth():
    assert pool_depth(3, 2.5, 7) == 7  # 7.5 -> 8, then capped to 7
    assert pool_depth(3, 2.5, 8) == 8  # the cap is not hit
    assert pool_depth(3, 2.5, 9) == 8
    assert pool_depth(7, 1.1, 7) == 7
    assert pool_depth(3, 2.5, 0) == 8  # cap 0: none


def test_depths_widen_every_leg_to_the_rounded_up_pool():
    assert depths(Params(limit=3, overfetch=2.5, cap=0)) == Depths(pool=8, vec_k=8, fts_k=0)
    d = depths(Params(mode="fts", limit=7, overfetch=1.1, cap=0))
    assert (d.pool, d.vec_k, d.fts_k) == (8, 0, 8)
    d = depths(Params(mode="hybrid", limit=3, overfetch=2.5, cap=0, vec_k=5, fts_k=2))
    assert (d.pool, d.vec_k, d.fts_k) == (8, 8, 8)  # over legs' floors of 5 and 2
    d = depths(Params(mode="hybrid", limit=3, overfetch=2.5, cap=7, vec_k=5, fts_k=2))
    assert (d.pool, d.vec_k, d.fts_k) == (7, 7, 7)
    d = depths(Params(mode="hybrid", limit=7, overfetch=29 / 7, cap=0))
    assert (d.pool, d.vec_k, d.fts_k) == (29, 29, 29)


@pytest.fixture
def line_store(make_store):
    """40 rows at squared distance 0.01 x (i + 1)^2 from the origin's neighbour (1, 0, 0, 0):
    the raw stage is the first D ids in order, no ties."""
    n = 40
    vec = np.zeros((n, 4), np.float32)
    vec[:, 0] = 1.0 + 0.1 * np.arange(1, n + 1)
    return open_store(str(make_store({"id": [f"r{i:02d}" for i in range(n)],
                                      "text": ["t"] * n, "vector": vec})))


@pytest.mark.parametrize(("limit", "overfetch", "cap", "want"), [
    (3, 2.5, 50, 8), (7, 1.1, 50, 8), (7, 29 / 7, 0, 29), (3, 2.5, 7, 7), (10, 1.01, 50, 11),
])
def test_a_real_run_fetches_the_rounded_up_depth(line_store, limit, overfetch, cap, want):
    t = ask(line_store, vector=np.array([1, 0, 0, 0], np.float32), limit=limit,
            overfetch=overfetch, cap=cap).trace
    assert t.stage("fetch").facts["depth"] == want
    assert t.stage("fetch").ids == [f"r{i:02d}" for i in range(want)]
    assert len(t.final.ids) == limit
