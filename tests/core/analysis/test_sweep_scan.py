"""A sweep whose vector legs come from one batched scan equals the per-query sweep exactly
(every pool, every cell, the JSON), and falls back to per-query search where the scan cannot
reproduce LanceDB (small dimensions)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import lancedb
import numpy as np
import pytest

from inspector.core.analysis.sweep import Case, Grid, case_depth, fetch_case, run_sweep
from inspector.core.engine import pools
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Query
from inspector.core.engine.pools import batched
from inspector.core.stores.opening import open_store

GRID = Grid(overfetch=(1.0, 2.0, 5.0), blend=(0.0, 0.5), min_score=(0.0, 0.4))
OFF = batched.ScanPlan(mode="off")


def _cases(store_path: Path, dim: int, n: int = 6) -> list[Case]:
    rng = np.random.default_rng(dim)
    tbl = lancedb.connect(str(store_path)).open_table("memories")
    stored = tbl.search().select(["vector"]).limit(2).to_arrow().column("vector")
    vecs = [rng.normal(size=dim).astype(np.float32) for _ in range(n - 2)]
    vecs += [np.asarray(stored[i].values.to_numpy(), np.float32) for i in range(2)]
    scopes = ["repo0", "repo1", None, "repo2", "repo0", "repo3"]
    return [Case(name=f"q{i}", query=Query(text="note keys tokens", vector=v),
                 scope=scopes[i % len(scopes)]) for i, v in enumerate(vecs)]


def _plain(result: object) -> dict:
    data = result.to_json()  # type: ignore[attr-defined]
    data.pop("seconds"), data.pop("fetch_seconds")
    return data


@pytest.mark.parametrize(("mode", "placement", "distance"), [
    ("vector", "post", "l2"), ("vector", "pushdown", "cosine"),
    ("hybrid", "pushdown", "l2"), ("hybrid", "post", "cosine")])
def test_sweep_from_one_scan_equals_per_query_sweep(random_store: Callable[..., Path],
                                                    mode: str, placement: str,
                                                    distance: str) -> None:
    path = random_store(n=700, dim=24, seed=5)
    store = open_store(str(path))
    base = Params(mode=mode, limit=5, cap=0, filter=placement, distance=distance, fts_k=8,
                  vec_k=8)
    cases = _cases(path, 24)
    calls: list[int] = []
    real = batched.run_scan
    batched.run_scan = lambda *a, **k: calls.append(1) or real(*a, **k)  # type: ignore
    try:
        scanned = run_sweep(store, cases, base, GRID, truth_depth=300)
    finally:
        batched.run_scan = real  # type: ignore[assignment]
    assert calls == [1]  # one pass for every query
    legs = pools.vector_legs(store, cases, base, lambda c: case_depth(store, c, base, GRID,
                                                                         300))
    assert len(legs) == len(cases)
    per_query = run_sweep(store, cases, base, GRID, truth_depth=300, scan=OFF)
    assert _plain(scanned) == _plain(per_query)
    for i, case in enumerate(cases):
        leg = legs.pop(i)
        assert leg is not None  # the scan answered, no fallback
        a = fetch_case(store, case, base, GRID, 300, leg)
        b = fetch_case(store, case, base, GRID, 300)
        assert list(a.ids) == list(b.ids)
        assert np.array_equal(a.vec_dist, b.vec_dist, equal_nan=True)
        assert a.vec_leg is not None and b.vec_leg is not None
        assert a.vec_leg.exhausted == b.vec_leg.exhausted


def test_small_dimensions_fall_back_to_per_query_search(small_store: Path) -> None:
    store = open_store(str(small_store))  # 8 dimensions: LanceDB takes other code paths
    assert batched.scannable(store) is not None
    cases = [Case("q", Query(text="x", vector=np.ones(8, np.float32)), "repo0")]
    legs = pools.vector_legs(store, cases, Params(mode="vector"), lambda c: 20)
    assert len(legs) == 0 and legs.pop(0) is None


def test_a_query_set_larger_than_one_pass_is_scanned_in_several(
        random_store: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = random_store(n=400, dim=24, seed=7)
    store = open_store(str(path))
    base = Params(mode="hybrid", limit=5, cap=0, filter="pushdown", fts_k=8, vec_k=8)
    cases = _cases(path, 24, n=7)
    monkeypatch.setattr(batched, "SCAN_QUERIES", 3)
    calls: list[int] = []
    real = batched.run_scan
    monkeypatch.setattr(batched, "run_scan",
                        lambda s, req, *a: calls.append(len(req.vectors)) or real(s, req, *a))
    scanned = run_sweep(store, cases, base, GRID, truth_depth=200)
    assert calls == [3, 3, 1]  # one pass per three queries, each when its first is swept
    assert _plain(scanned) == _plain(run_sweep(store, cases, base, GRID, truth_depth=200,
                                               scan=OFF))
