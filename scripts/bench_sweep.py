"""Time a 10 over-fetch x 11 blend sweep over 50 queries on the demo store (retrievals included).

Usage: .venv/bin/python scripts/bench_sweep.py [--runs 5] [--store PATH]
Prints the median and every run per preset; not a test (timings are never asserted).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _queries(store, n: int = 50):  # noqa: ANN001, ANN202 - a throwaway script
    """n queries: the first words of random demo rows, each scoped to its row's repo."""
    from inspector.core.judgments import Judgments

    rows = store.table.search().select(["text", "repo"]).limit(None).to_arrow().to_pylist()
    rng = random.Random(7)
    j = Judgments()
    for r in rng.sample(rows, n):
        words = r["text"].split()
        j = j.with_query(" ".join(words[: max(4, len(words) * 2 // 3)]), r["repo"])
    return j


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--store")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-sweep-")
    os.environ.setdefault("INSPECTOR_CACHE_DIR", str(Path(tmp) / "cache"))
    from inspector.core.demo import build_demo
    from inspector.core.inputs import build_params
    from inspector.core.store import open_store
    from inspector.core.sweep import Grid, cases_from_judgments, run_sweep

    path = a.store or str(build_demo(Path(tmp) / "demo"))
    store = open_store(path)
    judged = _queries(store)
    grid = Grid()  # over-fetch 1..10 x blend 0..1 step 0.1 = 110 cells
    setups = {
        "docs-before-fix (hybrid, post-filter, repo scope)":
            build_params(preset="docs-before-fix", limit=10, scope="x", cap=0),
        "vector, post-filter, repo scope, min score 0":
            build_params(mode="vector", limit=10, scope="x", min_score=0.0, cap=0),
    }
    print(f"store {path}: {store.rows} rows; 50 queries; grid {grid.shape}")
    for name, base in setups.items():
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()  # query embedding is part of the timed work
            cases = cases_from_judgments(store, judged, base.mode)
            r = run_sweep(store, cases, base, grid)
            times.append(time.perf_counter() - t0)
        print(f"{name}: median {statistics.median(times):.2f} s over {a.runs} runs "
              f"(runs: {', '.join(f'{t:.2f}' for t in times)}; last run retrieving "
              f"{r.fetch_seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
