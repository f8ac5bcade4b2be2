"""Issue 13 item 3: a sweep's vector legs from one streamed pass (speed and memory).

`scan`: every query's exact flat ranking to the sweep's depth (10,000 rows), one pass over
the table (`engine.pools.batched.run_scan`), against LanceDB's flat search per query, interleaved.
`scan_memory`: the scan's peak memory against bare LanceDB's single-query peak, each in a
fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from registry import interleaved, register, row
from stores import bench_store

HERE = Path(__file__).resolve().parent


def _setup(quick: bool) -> tuple[Any, np.ndarray, int]:
    from inspector.core.stores.opening import open_store

    rows, n = (20_000, 100) if quick else (100_000, 500)
    store = open_store(str(bench_store(rows, 384, fts=False)))
    queries = np.random.default_rng(13).normal(size=(n, 384)).astype(np.float32)
    return store, queries, min(store.rows, 10_000)


def bench_scan(quick: bool) -> list[dict[str, Any]]:
    from inspector.core.engine.pools.batched import run_scan
    from inspector.core.stores.vectorscan import kernels
    from inspector.core.stores.vectorscan.scan import ScanRequest

    store, queries, k = _setup(quick)
    req = ScanRequest(queries, k, "l2", rows=store.rows)
    picks = iter(range(10**6))

    def per_query() -> None:  # LanceDB's flat search of one query, to the same depth
        v = queries[next(picks) % len(queries)]
        store.table.search(v).select([]).with_row_id(True).limit(k).to_arrow()

    t = time.perf_counter()  # a process's first large scan loads (or compiles) the kernels
    kernels.has_jit()
    first = time.perf_counter() - t
    scan_s, bare_s = interleaved(lambda: run_scan(store, req), per_query, 2 if quick else 3)
    scan, bare = float(np.median(scan_s)), float(np.median(bare_s))
    n = len(queries)
    kernels_note = (f"compiled kernels, loaded once a process in {first:.2f} s, not timed"
                    if kernels.has_jit() else "numpy kernels")
    return [row("scan", f"{scan:.2f} s for {n} queries ({kernels_note}); LanceDB per query "
                        f"{bare * 1e3:.0f} ms (x{n} = {bare * n:.1f} s): {bare * n / scan:.0f}x "
                        f"faster",
                target=f"{n} queries <= 2 s" if not quick else "", met=scan <= 2.0,
                rows=store.rows, queries=n, depth=k, scan_median_s=scan,
                lancedb_per_query_median_s=bare, jit=kernels.has_jit(), first_scan_s=first)]


_CHILD = r"""
import json, sys, numpy as np
from inspector.core.engine.pools.batched import run_scan
from inspector.core.stores.opening import open_store
from inspector.core.stores.vectorscan.scan import ScanRequest
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
store = open_store(sys.argv[1])
n = int(sys.argv[3])
queries = np.random.default_rng(13).normal(size=(n, 384)).astype(np.float32)
k = min(store.rows, 10_000)
if sys.argv[2] == "scan":  # load the compiled kernels and run them on a few rows first: numba
    # and its kernels are not the scan's memory (a scan this small alone stays in numpy)
    from inspector.core.stores.vectorscan import kernels
    kernels.has_jit()
    run_scan(store, ScanRequest(queries[:2], 5, "l2", rows=store.rows))
base = status("VmRSS")
if sys.argv[2] == "scan":
    got = run_scan(store, ScanRequest(queries, k, "l2", rows=store.rows))
    out = sum(a.nbytes + b.nbytes for a, b in zip(got.rowids, got.distances))
else:
    got = store.table.search(queries[0]).limit(50).to_arrow()
    out = 0
print(json.dumps({"baseline_mb": base, "peak_mb": status("VmHWM"), "output_mb": out / 2**20}))
"""


def _peak(path: Path, who: str, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), who, str(n)],
                          capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_scan_memory(quick: bool) -> list[dict[str, Any]]:
    rows, n = (20_000, 100) if quick else (100_000, 500)
    path = bench_store(rows, 384, fts=False)
    scan, bare = _peak(path, "scan", n), _peak(path, "bare", 1)
    s = scan["peak_mb"] - scan["baseline_mb"]
    b = bare["peak_mb"] - bare["baseline_mb"]
    return [row("scan_memory",
                f"{s:.0f} MB above baseline for {n} queries (their {scan['output_mb']:.0f} MB "
                f"of results included); bare LanceDB, one query: {b:.0f} MB ({s / b:.2f}x)",
                target="<= 1.0x bare", met=s <= b, rows=rows, queries=n,
                scan_above_baseline_mb=s, bare_above_baseline_mb=b,
                results_mb=scan["output_mb"])]


register("scan", bench_scan, item="3",
         what="a sweep's vector legs, 500 queries over 100k x 384 (depth 10,000), one pass")
register("scan_memory", bench_scan_memory, item="3",
         what="memory of that scan vs bare LanceDB's single-query peak")
