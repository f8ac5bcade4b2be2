"""Issue 22 item 2: the exact distances of a sweep's scan, three ways side by side, and how
the scan's cost grows.

`scan_kernels`: the same queries to depth 10,000 over 100k x 384 (20k with --quick), timed in
turn: the scan with the numpy kernels (the default install), with the compiled kernels (only
when numba, extra `scale`, is installed), and LanceDB's own multi-vector query
(`search([v1, v2, ...])`, one call); each row says whether its distances equal LanceDB's
per-query search bit for bit.
`scan_growth`: the numpy scan at three table sizes x two query counts, in ns per
(query x row): flat when the cost grows linearly with queries x rows.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from registry import register, row
from stores import bench_store


def _exact(store: Any, q: np.ndarray, k: int, rowids: np.ndarray, dist: np.ndarray) -> bool:
    """Distances and row ids equal LanceDB's own per-query flat search (ties by row id)."""
    ref = (store.table.search(q).select([store.roles.id]).with_row_id(True).limit(k)
           .to_arrow())
    d = ref.column("_distance").to_numpy(zero_copy_only=False)
    ids = ref.column("_rowid").to_numpy(zero_copy_only=False)
    order = np.lexsort((ids, d))
    n = int(np.sum(d < d[order][-1]))  # above a tie LanceDB's cut may split
    return bool(np.array_equal(d[order][:n], dist[:n]) and np.array_equal(ids[order][:n],
                                                                          rowids[:n]))


def bench_scan_kernels(quick: bool) -> list[dict[str, Any]]:
    from inspector.core.engine.pools.batched import ScanPlan, run_scan
    from inspector.core.stores.opening import open_store
    from inspector.core.stores.vectorscan import kernels
    from inspector.core.stores.vectorscan.scan import ScanRequest

    rows, n = (20_000, 20) if quick else (100_000, 100)
    store = open_store(str(bench_store(rows, 384, fts=False)))
    queries = np.random.default_rng(22).normal(size=(n, 384)).astype(np.float32)
    k = min(rows, 10_000)
    req = ScanRequest(queries, k, "l2", rows=store.rows)

    def lancedb_multi() -> tuple[np.ndarray, np.ndarray]:
        got = (store.table.search(list(queries)).select([store.roles.id]).with_row_id(True)
               .limit(k).to_arrow())
        first = got.filter(got.column("query_index").to_numpy() == 0)
        d = first.column("_distance").to_numpy(zero_copy_only=False)
        ids = first.column("_rowid").to_numpy(zero_copy_only=False)
        order = np.lexsort((ids, d))
        return ids[order], d[order]

    ways: dict[str, Any] = {
        "numpy kernels": lambda: _first(run_scan(store, req, ScanPlan(jit=False))),
        "LanceDB multi-vector query": lancedb_multi}
    if kernels.has_jit():
        ways["compiled kernels (numba)"] = lambda: _first(run_scan(store, req, ScanPlan()))
    times: dict[str, list[float]] = {w: [] for w in ways}
    exact: dict[str, bool] = {}
    for _ in range(1 if quick else 2):  # in turn: load drifts hit every way
        for w, fn in ways.items():
            t = time.perf_counter()
            ids, dist = fn()
            times[w].append(time.perf_counter() - t)
            exact[w] = _exact(store, queries[0], k, ids, dist)
    out = []
    base = float(np.median(times["numpy kernels"]))
    for w, ts in times.items():
        s = float(np.median(ts))
        out.append(row("scan_kernels", f"{w}: {s:.2f} s for {n} queries x {rows:,} rows, "
                                       f"depth {k:,} ({s / base:.2f}x numpy); bit-exact: "
                                       f"{'yes' if exact[w] else 'no'}", "", None, way=w,
                       median_s=s, queries=n, rows=rows, depth=k, exact=exact[w]))
    if not kernels.has_jit():
        out.append(row("scan_kernels", "compiled kernels (numba): numba is not installed "
                                       "here", "", None, way="compiled kernels"))
    return out


def _first(res: Any) -> tuple[np.ndarray, np.ndarray]:
    return res.rowids[0], res.distances[0]


def bench_scan_growth(quick: bool) -> list[dict[str, Any]]:
    from inspector.core.engine.pools.batched import ScanPlan, run_scan
    from inspector.core.stores.opening import open_store
    from inspector.core.stores.vectorscan.scan import ScanRequest

    sizes = (5_000, 10_000, 20_000) if quick else (25_000, 50_000, 100_000)
    counts = (10, 20) if quick else (50, 100)
    out = []
    for rows in sizes:
        store = open_store(str(bench_store(rows, 384, fts=False)))
        for n in counts:
            q = np.random.default_rng(n).normal(size=(n, 384)).astype(np.float32)
            req = ScanRequest(q, min(rows, 1_000), "l2", rows=store.rows)
            t = time.perf_counter()
            run_scan(store, req, ScanPlan(jit=False))
            s = time.perf_counter() - t
            out.append(row("scan_growth", f"{n} queries x {rows:,} rows (depth 1,000): {s:.2f} "
                                          f"s, {s / (n * rows) * 1e9:.0f} ns per query x row",
                           "", None, rows=rows, queries=n, seconds=s,
                           ns_per_pair=s / (n * rows) * 1e9))
    return out


register("scan_kernels", bench_scan_kernels, item="22.2", slow=True,
         what="a scan's exact distances: numpy kernels, compiled kernels, LanceDB multi-vector")
register("scan_growth", bench_scan_growth, item="22.2", slow=True,
         what="the numpy scan's cost against queries x rows, three table sizes")
