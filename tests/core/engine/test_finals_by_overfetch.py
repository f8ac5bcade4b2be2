"""A sweep's cells along over-fetch from one blended order (`finals_by_overfetch`) equal
`derive` cell by cell: rows that tie on distance and on blended score, missing and
out-of-range importance, both tie rules, both filter placements, min scores that cut."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.expect import exhaustive_pool
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive, finals_by_overfetch
from inspector.core.engine.pool import Query

OVERFETCH = (1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 24.0)


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
def test_cells_along_overfetch_equal_derive_cell_by_cell(tied_store, tie_rule: str,  # noqa: ANN001
                                                         placement: str) -> None:
    q = Query(vector=np.array([0.3, -1.0, 0.5, 0.2], np.float32))
    base = Params(mode="vector", limit=5, cap=0, scope="repo1", filter=placement,
                  tie_rule=tie_rule)
    pool = exhaustive_pool(tied_store, q, base, depth=tied_store.rows)
    compared = 0
    for w in (0.0, 0.5, 1.0):
        for ms in (0.0, 0.25, 0.4):
            p = base.with_(blend=w, min_score=ms)
            along = finals_by_overfetch(pool, p, OVERFETCH)
            assert along is not None
            for f, rows in zip(OVERFETCH, along, strict=True):
                want = derive(pool, p.with_(overfetch=f)).stage("final").rows
                assert np.array_equal(rows, want), (w, ms, f)
                compared += len(want)
    assert compared > 100  # the cells return rows, not just empty lists


def test_hybrid_cells_are_left_to_derive(random_store) -> None:  # noqa: ANN001
    from inspector.core.stores.opening import open_store

    store = open_store(str(random_store()))
    q = Query(text="note about keys", vector=np.ones(8, np.float32))
    p = Params(mode="hybrid", limit=5, cap=0)
    pool = exhaustive_pool(store, q, p, depth=store.rows)
    assert finals_by_overfetch(pool, p, OVERFETCH) is None
