"""A sweep's memory is bounded by one query's pool, not by the number of queries (issue 21:
about 2.1 MB more per query, 3.6 GB for 1,600 queries). Measured, not timed: Python objects
by tracemalloc (retained after the sweep, and the peak during it) and Arrow buffers by
pyarrow's allocator (retained, and the largest seen at any query's end), over N and 4N
queries; what 3N more queries add, per query, must be a small fraction of one pool."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.analysis.sweep import Case, Grid, fetch_case, run_sweep
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Query
from inspector.core.engine.pools import batched
from inspector.core.stores.opening import open_store

GRID = Grid(overfetch=(1.0, 2.0, 4.0), blend=(0.0, 0.5), min_score=(0.0,))
N = 6
DIM = 24  # above 16: the batched scan answers the vector legs


def _cases(n: int, seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    return [Case(name=f"q{i}", query=Query(text="note keys tokens",
                                           vector=rng.normal(size=DIM).astype(np.float32)),
                 scope=f"repo{i % 3}") for i in range(n)]


@contextmanager
def _measured() -> Iterator[dict[str, int]]:
    """Bytes retained (Python + Arrow) when the block ends, and the peaks during it."""
    gc.collect()
    out: dict[str, int] = {}
    arrow0 = pa.total_allocated_bytes()
    out["arrow_peak"] = 0
    tracemalloc.start()
    try:
        yield out
        gc.collect()
        out["python"], out["python_peak"] = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    out["arrow"] = pa.total_allocated_bytes() - arrow0
    out["arrow_peak"] = max(out["arrow_peak"] - arrow0, out["arrow"])
    out["retained"] = out["python"] + out["arrow"]


def _sweep(store: Any, n: int, base: Params) -> tuple[Any, dict[str, int]]:
    cases = _cases(n, seed=n)
    with _measured() as m:
        def seen(_done: int, _total: int, _name: str) -> None:
            m["arrow_peak"] = max(m["arrow_peak"], pa.total_allocated_bytes())

        result = run_sweep(store, cases, base, GRID, progress=seen)
    return result, m


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_sweep_memory_grows_by_the_result_not_by_a_pool_per_query(
        random_store: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    monkeypatch.setattr(batched, "SCAN_QUERIES", 4, raising=False)  # several scan passes
    store = open_store(str(random_store(n=2000, dim=DIM, seed=4)))
    base = Params(mode=mode, limit=5, cap=0)
    _sweep(store, 2, base)  # warm: the full-text copy, imports, LanceDB's caches
    with _measured() as one:
        pool = fetch_case(store, _cases(1, 0)[0], base, GRID)
    assert pool.size == 2000
    small, at_n = _sweep(store, N, base)
    large, at_4n = _sweep(store, 4 * N, base)
    assert len(small.queries) == N and len(large.queries) == 4 * N
    per_query = {k: (at_4n[k] - at_n[k]) / (3 * N) for k in
                 ("retained", "python_peak", "arrow_peak")}
    budget = one["retained"] / 20  # 5% of one pool per extra query
    assert per_query["retained"] < budget, (per_query, one)
    assert per_query["python_peak"] < budget, (per_query, one)
    assert per_query["arrow_peak"] < budget, (per_query, one)
    del pool
