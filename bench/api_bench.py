"""The Python API against the bare LanceDB call that returns the same rows (issue 34).

`.venv/bin/python bench/api_bench.py [--rows 100000] [--repeat 30]` reuses the flat and
IVF_PQ stores of bench/index_bench.py (100k x 384, built once under bench/.data/) and prints
JSON: per table and case (vector unscoped, scope pushed down, scope post-filtered, hybrid on
the flat store), the median of

- `api`: `store.query(vector=v, ...)` through the Python API, then its final ids (what a
  notebook or script reads); the diagnosis, the expected rows and the JSON are not asked for,
  so they are not made (the API makes them when first read);
- `engine`: the engine's own run of the same question (`flow.question.run_question`);
- `bare`: the LanceDB call that returns the same rows (same depth, filter, reranker),

each round on a fresh random vector (no cache answers), the three interleaved with the
order rotating. Then it checks on other vectors that the API returned the bare call's rows
(or rows that differ only between rows the answer reports tied where LanceDB's order is
arbitrary: BM25 ties of the full-text leg). Target: the API within 1.10x of the bare call
(ratio of medians), where the engine's own run allows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("INSPECTOR_CACHE_DIR", str(HERE / ".data" / "cache"))
os.environ.setdefault("LANCEDB_LOG", "error")

from index_bench import DIM, SCOPE, build  # noqa: E402

LIMIT = 10
POST_DEPTH = 50  # the post-filtered case fetches 5x the limit, then filters
TEXT = "rotate key token"
TARGET = 1.10
SCOPED = {"scope": SCOPE, "scope_strategy": "column", "scope_column": "repo"}


def cases(kind: str) -> list[tuple[str, dict[str, Any]]]:
    """(case, the API's keywords); LanceDB's own search (no preset named) with the
    command line's options, each set on the stage that holds it."""
    out = [("vector", {}),
           ("vector+pushdown", {**SCOPED, "filter": "pushdown"}),
           ("vector+post-filter", {**SCOPED, "filter": "post", "overfetch": POST_DEPTH / LIMIT})]
    if kind == "flat":
        out.append(("hybrid", {"mode": "hybrid", "text": TEXT}))
    return out


def bare_call(table: Any, case: str) -> Callable[[np.ndarray], list[str]]:
    """The bare LanceDB call returning the rows the API returns for this case, as ids."""
    from lancedb.rerankers import RRFReranker

    where = f"repo = '{SCOPE}'"

    def call(v: np.ndarray) -> list[str]:
        if case == "hybrid":
            q = (table.search(query_type="hybrid").vector(v).text(TEXT)
                 .rerank(RRFReranker()).limit(LIMIT))
        elif case == "vector+pushdown":
            q = table.search(v).where(where, prefilter=True).limit(LIMIT)
        elif case == "vector+post-filter":
            q = table.search(v).where(where, prefilter=False).limit(POST_DEPTH)
        else:
            q = table.search(v).limit(LIMIT)
        return q.to_arrow().column("id").to_pylist()[:LIMIT]

    return call


def rounds(fns: dict[str, Callable[[np.ndarray], Any]], vectors: np.ndarray
           ) -> dict[str, list[float]]:
    """Every function once a round, the order rotating round by round (load drifts hit each
    alike), each call on a vector of its own that nothing searched before: a fresh question,
    never answered from a cache (the pool source keeps pools by query)."""
    names = list(fns)
    fresh = iter(vectors)
    for name in names:
        fns[name](next(fresh))  # warm: the index, the tables' files, the engine's imports
    times: dict[str, list[float]] = {k: [] for k in names}
    for i in range((len(vectors) - len(names)) // len(names)):
        order = names[i % len(names):] + names[: i % len(names)]
        for name in order:
            v = next(fresh)
            t = time.perf_counter()
            fns[name](v)
            times[name].append(time.perf_counter() - t)
    return times


def run_bench(rows: int, repeat: int) -> dict[str, Any]:
    import inspector
    from inspector.core.engine.flow.question import run_question

    paths = build(rows)
    rng = np.random.default_rng(34)
    results = []
    for kind, path in paths.items():
        store = inspector.open(str(path))
        for case, kw in cases(kind):
            n = repeat if kind == "flat" else 3 * repeat  # an ANN search takes milliseconds
            vectors = rng.normal(size=(3 * (n + 1), DIM)).astype(np.float32)
            bare = bare_call(store.engine_store.table, case)
            template = store.query(vector=vectors[0], limit=LIMIT, **kw).question

            def api(v: np.ndarray, kw: dict[str, Any] = kw, store: Any = store) -> Any:
                return store.query(vector=v, limit=LIMIT, **kw).final_ids

            def engine(v: np.ndarray, q: Any = template, st: Any = store.engine_store) -> Any:
                asked = q.model_copy(update={"vector": [float(x) for x in v]})
                return run_question(asked, st).trace.final.ids

            times = rounds({"api": api, "engine": engine, "bare": bare}, vectors)
            same = [_same(store, kw, bare, v) for v in rng.normal(size=(5, DIM))
                    .astype(np.float32)]
            med = {k: float(np.median(t) * 1e3) for k, t in times.items()}
            ratio = med["api"] / med["bare"]
            rows_ok = all(x != "differ" for x in same)
            results.append({
                "table": kind, "case": case, "rows": rows, "rounds": n,
                **{f"{k}_ms": round(v, 2) for k, v in med.items()},
                "ratio": round(ratio, 3), "engine_ratio": round(med["engine"] / med["bare"], 3),
                "api_vs_engine": round(med["api"] / med["engine"], 3),
                "same_rows": same.count("same"), "tied_rows": same.count("tied"),
                "checked": len(same), "target": f"<= {TARGET}",
                "met": ratio <= TARGET and rows_ok})
    return {"bench": "api", "repeat": repeat, "results": results}


def _same(store: Any, kw: dict[str, Any], bare: Callable[[np.ndarray], list[str]],
          v: np.ndarray) -> str:
    """same: the API returned the bare call's rows; tied: they differ only between rows the
    answer reports tied where LanceDB's order is arbitrary (BM25 ties of the full-text leg:
    LanceDB keeps any order among them, the engine shows them by row id); differ: else."""
    r = store.query(vector=v, limit=LIMIT, **kw)
    got, want = r.final_ids, bare(v)
    if got == want:
        return "same"
    tied = {i for t in r.trace.ties if t.arbitrary for i in (*t.ids, *t.members)}
    if len(got) == len(want) and all(a == b or a in tied and b in tied
                                     for a, b in zip(got, want, strict=True)):
        return "tied"
    return "differ"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=30)
    a = ap.parse_args()
    print(json.dumps(run_bench(a.rows, a.repeat), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def bench_api(quick: bool) -> list[dict[str, Any]]:
    """The figures for bench/run.py: one row per table and case."""
    from registry import row

    out = []
    for r in run_bench(10_000 if quick else 100_000, 8 if quick else 30)["results"]:
        same = "" if r["met"] or r["same_rows"] + r["tied_rows"] == r["checked"] else \
            "; NOT the bare call's rows"
        out.append(row("api", f"{r['table']} {r['case']}, {r['rows']:,} rows: ratio "
                       f"{r['ratio']} ({r['api_ms']} / {r['bare_ms']} ms; the engine's own "
                       f"run {r['engine_ratio']}){same}", r["target"], r["met"],
                       **{k: v for k, v in r.items() if k not in ("met", "target")}))
    return out


try:
    from registry import register
except ImportError:  # run as a script: nothing to register with
    pass
else:
    register("api", bench_api, item="2", slow=True,
             what="Python API answer vs the bare LanceDB call returning the same rows")
