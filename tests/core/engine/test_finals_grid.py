"""A sweep's grid from one blended order per blend weight (`finals_grid`) equals `derive`
cell by cell: rows that tie on distance and on blended score, missing and
out-of-range importance, both tie rules, both filter placements, min scores that cut."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.expect import exhaustive_pool
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive, finals_grid
from inspector.core.engine.pool import Query

OVERFETCH = (1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 24.0)
BLEND = (0.0, 0.5, 1.0)
MIN_SCORE = (0.0, 0.25, 0.4)


@pytest.fixture
def tied_store(make_store):  # noqa: ANN001, ANN201
    """120 rows over 12 distinct vectors (every distance shared by ~10 rows) and 7 importance
    values (None and out of 0-1 among them): blended scores tie too."""
    from inspector.core.stores.opening import open_store

    rng = np.random.default_rng(7)
    shapes = rng.normal(size=(12, 4)).astype(np.float32)
    n = 120
    levels = [None, 0.2, 0.5, 0.8, 1.0, 1.3, -0.1]
    return open_store(str(make_store({
        "id": [f"m{(i * 37) % n:03d}" for i in range(n)],  # id order is not row order
        "text": [f"note {i}" for i in range(n)],
        "vector": shapes[rng.integers(0, 12, n)],
        "importance": pa.array([levels[int(rng.integers(0, 7))] for _ in range(n)],
                               pa.float64()),
        "repo": [f"repo{int(rng.integers(0, 3))}" for _ in range(n)]})))


@pytest.mark.parametrize("tie_rule", ["lancedb", "id"])
@pytest.mark.parametrize("placement", ["post", "pushdown"])
def test_the_grid_equals_derive_cell_by_cell(tied_store, tie_rule: str,  # noqa: ANN001
                                                         placement: str) -> None:
    q = Query(vector=np.array([0.3, -1.0, 0.5, 0.2], np.float32))
    base = Params(mode="vector", limit=5, cap=0, scope="repo1", filter=placement,
                  tie_rule=tie_rule)
    pool = exhaustive_pool(tied_store, q, base, depth=tied_store.rows)
    grid = finals_grid(pool, base, OVERFETCH, BLEND, MIN_SCORE)
    assert grid is not None
    compared = 0
    for j, w in enumerate(BLEND):
        for m, ms in enumerate(MIN_SCORE):
            for i, f in enumerate(OVERFETCH):
                cell = base.with_(overfetch=f, blend=w, min_score=ms)
                want = derive(pool, cell).stage("final").rows
                assert np.array_equal(grid[j][m][i], want), (w, ms, f)
                compared += len(want)
    assert compared > 100  # the cells return rows, not just empty lists


def test_hybrid_cells_are_left_to_derive(random_store) -> None:  # noqa: ANN001
    from inspector.core.stores.opening import open_store

    store = open_store(str(random_store()))
    q = Query(text="note about keys", vector=np.ones(8, np.float32))
    p = Params(mode="hybrid", limit=5, cap=0)
    pool = exhaustive_pool(store, q, p, depth=store.rows)
    assert finals_grid(pool, p, OVERFETCH, BLEND, MIN_SCORE) is None
