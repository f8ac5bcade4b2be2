"""A sweep's memory is bounded by one query's pool, not by the number of queries (issue 21:
about 2.1 MB more per query; issues 33 and 34: 260 KB a query on the fixed engine's sweep).
Measured, not timed: Python objects by tracemalloc (retained after the sweep, and the peak
during it) and Arrow buffers by pyarrow's allocator (retained, and the largest seen at any
query's end), over N and 4N queries; what 3N more queries add, per query, must be a small
fraction of one query's deep run (the truth's: every row its deep search fetched). On a flat
table the queries' vector legs come from batched scans, whose memory is one pass's."""

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

from inspector.core.analysis.grid import parse_grid
from inspector.core.analysis.sweep import Case, run_sweep
from inspector.core.analysis.truth import truth_trace
from inspector.core.engine.flow.question import Question, resolve, runs_for
from inspector.core.stores.opening import open_store

N = 3
DIM = 24


def _question(store: Any, mode: str) -> Question:
    return Question(store=store.uri, preset="lancedb", text="note keys tokens", limit=5,
                    vector=[0.0] * DIM, set={"fetch.mode": mode, "fetch.cap": 0,
                                             "scope_rule.strategy": "column",
                                             "scope_rule.column": "repo"})


def _cases(q: Question, n: int) -> list[Case]:
    """n queries over three (vector, scope) pairs, in turn: N and 4N queries reach the same
    largest query, so a peak that grows with n is memory kept from query to query."""
    rng = np.random.default_rng(7)
    asked = [q.model_copy(update={"vector": [float(x) for x in rng.normal(size=DIM)],
                                  "scopes": [f"repo{i}"]}) for i in range(3)]
    return [Case(f"q{i}", asked[i % 3]) for i in range(n)]


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


def _sweep(store: Any, q: Question, n: int) -> tuple[Any, dict[str, int]]:
    cases = _cases(q, n)
    axes = parse_grid(resolve(q)[0], ["fetch.overfetch=1,2,4", "blend.weight=0,0.5"])
    with _measured() as m:
        def seen(_done: int, _total: int, _name: str) -> None:
            m["arrow_peak"] = max(m["arrow_peak"], pa.total_allocated_bytes())

        result = run_sweep(store, q, cases, axes, progress=seen)
    return result, m


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_sweep_memory_grows_by_the_result_not_by_a_pool_per_query(
        random_store: Callable[..., Path], mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batched scan's working memory is one pass's (its queries' top-k lists and distance
    tiles, SCAN_QUERIES queries a pass): here a pass is N queries, so N and 4N queries peak
    alike unless something is kept from query to query or from pass to pass."""
    from inspector.core.engine.pools import batched

    monkeypatch.setattr(batched, "SCAN_QUERIES", N)
    store = open_store(str(random_store(n=2000, dim=DIM, seed=4)))
    q = _question(store, mode)
    _sweep(store, q, 2)  # warm: the full-text copy, imports, LanceDB's caches
    with _measured() as one:
        runs, _, _ = runs_for(_cases(q, 1)[0].question, store)
        deep = truth_trace(runs)
    assert deep is not None and len(deep.stage("fetch").rows) == 2000
    small, at_n = _sweep(store, q, N)
    large, at_4n = _sweep(store, q, 4 * N)
    assert len(small.queries) == N and len(large.queries) == 4 * N
    per_query = {k: (at_4n[k] - at_n[k]) / (3 * N) for k in
                 ("retained", "python_peak", "arrow_peak")}
    budget = one["retained"] / 20  # 5% of one query's deep run per extra query
    assert per_query["retained"] < budget, (per_query, one)
    assert per_query["python_peak"] < budget, (per_query, one)
    assert per_query["arrow_peak"] < budget, (per_query, one)
    del deep, runs
