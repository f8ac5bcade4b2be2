"""What the profile says about each figure that misses its target: one sentence per figure,
written when it was profiled (cProfile, or the figure's own split), shown beside every missed
row of the docs' table by bench/readme_table.py. A missed figure without a sentence here is
shown as "not profiled yet", never left unexplained."""

from __future__ import annotations

WHY: dict[str, str] = {
    "tick": "Profiled on the one engine's window (2026-12-04, cProfile and a timeline of "
            "each tick's events, old and new code in one sitting with the same bench): the "
            "rows 'key to frame' press an arrow key on the focused slider in a running event "
            "loop and stop once the frame showing the new answer is painted. Fixed: every "
            "tick redrew both plots (the flag they read was cleared before the re-rank came "
            "back), an over-fetch past 20 searched LanceDB on every tick, every stage's cells "
            "were formatted (~4,000 rows; now only the rows on screen), the banner and busy "
            "bar came and went each tick, re-laying out the window (4-5 frames a tick), and "
            "rows a tick added were painted a frame late; pool 1,000 medians went from 42-47 "
            "ms to 16-24 ms and the 13-stage view's from 24-25 ms to 15-17 ms offscreen. "
            "Later the same day: each tick set the limit box's unchanged range again, which "
            "re-laid out the window and repainted the rows above the tables in three frames "
            "before the answer (now one frame of the slider row); stage summaries read each "
            "list once and the selected row is looked up from the last stage back. Neither "
            "moved the table's figures beyond the run-to-run noise. 2026-12-05, from a "
            "timeline and gc callbacks: about one tick in twenty paid a full garbage "
            "collection (40 to over 300 ms, walking every answer the session had kept: all "
            "of them, ~0.8 MB each at pool 1,000); they now wait until the question rests "
            "(qt/quiet_gc.py) and a session keeps its last 128 answers. A tick whose re-rank "
            "is known to be quick and needs no search runs in the tick, not in a job (the "
            "handover and the wait for the GIL were ~1-2 ms), and a stage's rows are made "
            "without the frozen dataclasses' __init__. Old and new code in turn (a script "
            "driving this bench's key routine, not a row of it), offscreen, 120 key ticks "
            "each, three rounds: pool 1,000 blend median 13.2-13.8 -> "
            "11.1-11.9 ms and slowest tick 109-134 -> 22-26 ms; over-fetch median 18.9-20.9 "
            "-> 16.5-17.5 ms and slowest 272-306 -> 23-26 ms. What is left of a tick is "
            "spread over the re-rank, the widgets' update (the stage summaries most), the "
            "layout requests it posts, and Qt's paint; the over-fetch rows' pool grows past "
            "1,000 rows as the key moves past 20, and each doubling of the depth searches once.",
    "index": "IVF_PQ + post-filter, cProfile: the engine's own Python is ~0.5 ms a query; the "
             "rest is its one LanceDB search, which reads the columns of all 50 candidates (the "
             "stage tables show the rows the post-filter drops) where bare post-filtered LanceDB "
             "reads only the in-scope survivors (the 1,000-deep probe no longer runs by "
             "default). Flat + post-filter fetches pool and probe in one 1,000-deep search, so "
             "1,000 rows are read. The default IVF_PQ query is ~1.0 ms over bare LanceDB's 7.5 ms "
             "(1.14x): the pool's columns and the stage bookkeeping, not profiled further.",
    "api": "Profiled (cProfile and timers around each piece, 100k x 384 IVF_PQ, load 5-6): "
           "the API adds 0.1-0.3 ms to the engine's own run of the same question (the "
           "question model with its vector, the options' stages; the pipeline file is parsed "
           "once per process, it was parsed two to four times a query; no diagnosis, fix "
           "search or JSON is made until read), so it tracks the engine's own run, which is "
           "the limit: unscoped, the pool source's one search plus its merge is ~1.0x the bare "
           "call and the stages ~0.5 ms more (1.13-1.3x over 6-8 ms searches); post-filtered, "
           "the pool reads the columns of all 51 candidates to show the rows the filter drops, "
           "where LanceDB's own post-filter reads only the ~3 survivors (the pool alone "
           "1.34x, the run 1.5-1.7x). Flat tables' 100k searches (~0.4 s at this load) vary by "
           "10 % run to run, within which API and bare are equal.",
    "overhead": "Hybrid at 10k rows: the engine runs the two legs and fuses them itself (it "
                "shows each leg's ranking), where bare LanceDB fuses in one call; at 100k the "
                "searches dominate and the ratio is 1.02.",
    "startup": "The first paint is the window's frame, painted with PySide6 alone (no numpy, "
               "pyarrow, pyqtgraph, engine or lancedb: a test checks sys.modules at that "
               "paint); first results still wait for those imports (one per turn of the event "
               "loop, ~1.2 s), the window's build, `import lancedb` in the open job and the "
               "first query. Old and new code launched in turn (8 launches, the same "
               "timeline probe on both: signal to first results): 2.2 s median each, so the "
               "frame moved the first paint from ~1.1 s to ~0.25 s without delaying the "
               "results. Imports (-X importtime, 2026-12-04): lancedb 0.74 s (pandas 0.28 s "
               "of it, which pyarrow.dataset imports; its namespace client, 0.23 s more, the "
               "inspector's lazy client skips), "
               "pyqtgraph 0.26 s, the engine's pipeline specs 0.15 s, the window 0.14 s. "
               "Importing lancedb in a thread from the first paint, beside the window's own "
               "imports and build, was tried: 1.93-1.97 s with the thread, 1.93-2.03 s without "
               "(3 x 5 launches each, in turn): no clear gain, as module code runs under the "
               "GIL; dropped.",
    "example_sweep": "cProfile of the 200-query sweep (50k rows) after the grid is evaluated "
                     "in one call per query (one blended order per blend weight, "
                     "`pipeline.finals_grid`; h23s, load ~12): building each query's "
                     "10,000-row pool (`pool._merge`: columns to Python, scope and importance "
                     "per row) ~36 %, the rest of the per-query evaluation (the truths' "
                     "`derive` over each scoped pool, safe over-fetch) ~24 %, the one-pass "
                     "scan ~21 % (its numpy exact distances to depth 10,000 most of it), "
                     "opening the store and the imports most of the rest; process CPU time "
                     "11.8 / 11.3 s before, 10.2 / 9.8 s after (two runs each, interleaved); "
                     "the figure, old and new code in turn at load ~3.5: 0.62x before, 0.52x "
                     "after.",
    "sweep": "The demo sweep builds each query's 3,022-row pool and derives its 110 cells in "
             "Python (retrieval is under half of it); the run of 2026-12-01 01:23, at load "
             "1.1-1.6, gave 2.69 s for the same hybrid sweep.",
    "memory": "A post-filtered scope on a flat table fetches its pool and the 1,000-deep "
              "diagnosis probe in one search (bare LanceDB: 50 rows); both peaks are mostly "
              "LanceDB's brute-force scan of 1M vectors, which varies by ~100 MB between runs.",
    "audit": "Since the outrank shortcut (h23f) a probe proved found among the rows within "
             "its outrank radius skips its search and its pipeline; audit_design in the run "
             "of 2026-12-01 22:14 (load 3.7): read 0.36 s, the shortcut 0.62 s (the "
             "projection's setup and the bound's pass over 1,000 probes x 100k rows), scan "
             "0 s, answers 0.01 s of 1.24 s per 1,000 probes, against 4.10 s for the design "
             "before it (every probe scanned and run: read 0.61 s, scan 1.24 s, stages "
             "0.68 s at 19:37). A miss now means probes fell back: `shortcut_refused` in the "
             "audit's JSON says how many and why (docs/guide/audits.md).",
    "scan": "The default install has no numba: the numpy kernels that reproduce LanceDB's "
            "float32 distance order bit for bit take the 500-query scan to 6.5 s in the run "
            "of 2026-12-01 19:37 "
            "(2.23 s with numba, run of 2026-12-01 01:23). Side by side (`scan_kernels`): 100 "
            "queries x 100k to depth 10,000 take 1.36 s with numpy and 3.66 s with LanceDB's "
            "multi-vector query (bit-exact too, one flat search per query): it stays numpy. "
            "How deep (h23s): each query gets 12,660 exact distances for its 10,000 rows "
            "(the first block's guess, 1.25 k B / N + 16, and the margin: 1.27x the least), "
            "and the numpy kernel's floor is ~0.4 us a distance (384 dims, cache-warm), so "
            "500 queries at depth 10,000 need >= 2 s of exact arithmetic alone: the target "
            "needs a compiled kernel (extra `scale`) or a shallower depth.",
}


def why(bench: str) -> str:
    return WHY.get(bench, "not profiled yet")
