"""Issue 22 item 2: a sweep over a query log given by example, whole process.

`example_sweep`: `inspector sweep STORE --queries FILE` over 200 queries given by example
(`vector_of`, each in its row's repo) on a flat 50k x 384 table, the default 10 x 11 grid, as a
fresh process, against a fresh process running 200 bare LanceDB searches (the 200 vectors read
once, then `search(v).limit(10)` each); the runs alternate. Target: <= 0.25x.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from registry import register, row
from stores import bench_store

HERE = Path(__file__).resolve().parent

_BARE = r"""
import sys, json, lancedb
ids = json.load(open(sys.argv[2]))
tbl = lancedb.connect(sys.argv[1]).open_table("memories")
quoted = ", ".join("'" + i + "'" for i in ids)
got = tbl.search().where(f"id IN ({quoted})").select(["id", "vector"]).limit(None).to_arrow()
vec = dict(zip(got.column("id").to_pylist(), got.column("vector").to_pylist()))
for i in ids:
    tbl.search(vec[i]).limit(10).to_arrow()
"""


def _query_set(path: Path, n: int, folder: Path) -> tuple[Path, Path]:
    import lancedb

    tbl = lancedb.connect(str(path)).open_table("memories")
    rows = tbl.search().select(["id", "repo"]).limit(None).to_arrow().to_pylist()
    picked = random.Random(22).sample(rows, n)
    qs = {"format": "inspector-judgments", "version": 1,
          "queries": [{"query": f"example {r['id']}", "scope": r["repo"], "vector_of": r["id"],
                       "judgments": {}} for r in picked]}
    qfile, ids = folder / "examples.json", folder / "ids.json"
    qfile.write_text(json.dumps(qs))
    ids.write_text(json.dumps([r["id"] for r in picked]))
    return qfile, ids


def _timed(cmd: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, timeout=900)
    return time.perf_counter() - t


def bench_example_sweep(quick: bool) -> list[dict[str, Any]]:
    rows, n, runs = (10_000, 50, 1) if quick else (50_000, 200, 3)
    path = bench_store(rows, 384, fts=False)
    folder = Path(tempfile.mkdtemp(prefix="bench-example-"))
    qfile, ids = _query_set(path, n, folder)
    sweep = [sys.executable, "-m", "inspector", "sweep", str(path), "--queries", str(qfile),
             "--mode", "vector", "--scope-strategy", "column", "--scope-column", "repo",
             "--limit", "10", "--json"]
    bare = [sys.executable, "-c", _BARE, str(path), str(ids)]
    s_times, b_times = [], []
    for _ in range(runs):  # alternate: load drifts hit both
        s_times.append(_timed(sweep))
        b_times.append(_timed(bare))
    s, b = float(np.median(s_times)), float(np.median(b_times))
    return [row("example_sweep",
                f"{n} queries by example, {rows:,} x 384: {s:.2f} s against {n} bare searches "
                f"{b:.2f} s ({s / b:.2f}x)", target="<= 0.25x" if not quick else "",
                met=s / b <= 0.25 if not quick else None, rows=rows, queries=n,
                sweep_median_s=s, bare_median_s=b, ratio=s / b, runs=runs)]


register("example_sweep", bench_example_sweep, item="22.2",
         what="sweep of 200 queries given by example (flat 50k x 384), whole process, vs 200 "
              "bare searches")
