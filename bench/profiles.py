"""What the profile says about each figure that misses its target: one sentence per figure,
written when it was profiled (cProfile, or the figure's own split), shown beside every missed
row of the docs' table by bench/readme_table.py. A missed figure without a sentence here is
shown as "not profiled yet", never left unexplained."""

from __future__ import annotations

WHY: dict[str, str] = {
    "tick": "About 8 ms of a tick is the stage tables' own Python at any window size (per-cell "
            "`data()`, text shaping); the rest grows with the window's area (painting and the "
            "flush to X); the re-rank itself is ~0.1 ms.",
    "index": "IVF_PQ + post-filter, cProfile: the engine's own Python is ~0.5 ms a query; the "
             "rest is its one LanceDB search, which reads the columns of all 50 candidates (the "
             "stage tables show the rows the post-filter drops) where bare post-filtered LanceDB "
             "reads only the in-scope survivors (the 1,000-deep probe no longer runs by "
             "default). Flat + post-filter fetches pool and probe in one 1,000-deep search, so "
             "1,000 rows are read; flat vector was 1.04 at load 1.1 (01:23 run), not "
             "reprofiled at this run's load.",
    "overhead": "Vector at 10k rows was 1.07 in the 01:23 run (load 1.1-1.6) and is not "
                "reprofiled at this run's load; hybrid: the engine runs the two legs and fuses "
                "them itself (it shows each leg's ranking), bare LanceDB fuses in one call.",
    "startup": "Before the first paint the window imports PySide6, pyqtgraph and its own modules "
               "(the bare Qt + pyqtgraph window beside it is the floor); first results also "
               "wait for `import lancedb` and the first query.",
    "example_sweep": "cProfile (40 of the queries, 50k rows): the per-cell `derive` over each "
                     "cell's ~100-row head and the per-query truths is ~35 % (cells are not yet "
                     "evaluated in batch across cells and queries), merging each query's "
                     "10,000-row truth pool ~17 % (scope, importance and pushdown verdicts per "
                     "row), the one-pass distance scan ~11 %.",
    "sweep": "The demo sweep builds each query's 3,022-row pool and derives its 110 cells in "
             "Python (retrieval is under half of it); the run of 2026-12-01 01:23, at load "
             "1.1-1.6, gave 2.69 s for the same hybrid sweep.",
    "memory": "A post-filtered scope on a flat table fetches its pool and the 1,000-deep "
              "diagnosis probe in one search (bare LanceDB: 50 rows); both peaks are mostly "
              "LanceDB's brute-force scan of 1M vectors, which varies by ~100 MB between runs.",
    "audit": "audit_design's split: the store read ~23 %, the scan ~54 % (the exact float32 "
             "matrix product of every probe with every row alone is about half the audit) and "
             "each probe's own pipeline run ~23 % (about 1 ms a probe, what makes each verdict "
             "equal `inspector query`); audit_bounds: no provable distance bound rules out a "
             "row of a probe's pool on random 384-dim vectors, so the product is the floor "
             "(docs/guide/audits.md says what design could pass it).",
    "scan": "The default install has no numba: the numpy kernels that reproduce LanceDB's "
            "float32 distance order bit for bit take the 500-query scan to ~10 s (2.23 s with "
            "numba, run of 2026-12-01 01:23). Side by side (`scan_kernels`, a separate run at "
            "16:09): 100 queries x 100k to depth 10,000 took 4.86 s with numpy and 4.28 s with "
            "LanceDB's multi-vector query (bit-exact too), which runs one flat search per query "
            "and so grows with the queries where the scan reads the table once: it stays numpy.",
}


def why(bench: str) -> str:
    return WHY.get(bench, "not profiled yet")
