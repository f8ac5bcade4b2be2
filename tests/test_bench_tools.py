"""The benchmark's plumbing (no benchmark runs here): figures register once, every row says
met or missed, and the docs' Benchmarks table is generated from results.json alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import readme_table  # noqa: E402
import registry  # noqa: E402


def test_a_figure_registers_with_one_line_and_only_once() -> None:
    before = dict(registry.FIGURES)
    try:
        registry.register("probe", lambda quick: [], item="9", what="a probe")
        assert registry.FIGURES["probe"].item == "9"
        with pytest.raises(ValueError, match="twice"):
            registry.register("probe", lambda quick: [], item="9", what="again")
        r = registry.row("probe", "1.5 s", "< 2 s", True, seconds=1.5)
        assert r == {"bench": "probe", "item": "9", "what": "a probe", "result": "1.5 s",
                     "target": "< 2 s", "met": True, "seconds": 1.5}
    finally:
        registry.FIGURES.clear()
        registry.FIGURES.update(before)


def test_readme_block_is_rewritten_from_results_only() -> None:
    data = {"meta": {"quick": False, "when": "2026-11-30 22:00", "cpus": 2, "python": "3.11"},
            "results": [
                {"bench": "scan", "item": "3", "what": "one pass", "result": "1.8 s",
                 "target": "<= 2 s", "met": True},
                {"bench": "memory", "item": "6", "what": "peak | memory", "result": "1.1x",
                 "target": "<= 1.0x", "met": False},
                {"bench": "old", "median_ms": 3.0}]}  # an old row without a verdict
    readme = f"# Title\n\nintro\n{readme_table.BEGIN}\nstale text\n{readme_table.END}\nrest\n"
    new = readme_table.rewrite(readme, readme_table.table(data))
    assert new.startswith("# Title\n\nintro\n") and new.endswith(f"{readme_table.END}\nrest\n")
    assert "stale text" not in new and "median_ms" not in new
    assert "| 3 | one pass | 1.8 s | <= 2 s | met |" in new
    assert "| 6 | peak \\| memory | 1.1x | <= 1.0x | **missed** |" in new
    assert readme_table.rewrite(new, readme_table.table(data)) == new


def test_every_builtin_figure_is_registered_by_run() -> None:
    import run

    run._discover()
    assert {"rerank", "tick", "overhead", "sweep", "startup", "memory", "scan",
            "scan_memory"} <= set(registry.FIGURES)


def test_a_merged_run_replaces_only_its_figures_and_says_when_it_ran() -> None:
    import run

    run._discover()
    old = {"meta": {"when": "2026-12-01 01:23", "cpus": 2, "figures": ["rerank", "scan"],
                    "load_avg_1min": [1.0, 1.5]},
           "results": [{"bench": "rerank", "item": "1", "what": "re-rank", "result": "0.2 ms",
                        "target": "", "met": None},
                       {"bench": "scan", "item": "3", "what": "one pass", "result": "2 s",
                        "target": "", "met": None}]}
    new = {"meta": {"when": "2026-12-01 15:30", "cpus": 2, "figures": ["audit"],
                    "load_avg_1min": [5.0, 7.5], "quick": False},
           "results": [{"bench": "audit", "item": "23.5", "what": "recall audit",
                        "result": "9 s", "target": "<= 10x", "met": False}]}
    got = run.merge(old, new)
    order = list(registry.FIGURES)  # rows in the order figures register
    assert [r["bench"] for r in got["results"]] == sorted(["rerank", "scan", "audit"],
                                                          key=order.index)
    assert got["meta"]["figures"] == ["rerank", "scan"]
    text = readme_table.table(got)
    assert "| 23.5 | recall audit | 9 s | <= 10x | **missed** |" in text
    assert "`audit`: run on 2026-12-01 15:30, load 5.0 to 7.5." in text
    again = run.merge(got, {**new, "results": [{**new["results"][0], "result": "8 s"}]})
    assert {r["bench"]: r["result"] for r in again["results"]} == {
        "rerank": "0.2 ms", "scan": "2 s", "audit": "8 s"}
    assert len(again["meta"]["merged"]) == 2
    # the table's audit row is the last run's: the header names only that run for it
    later = {**new["meta"], "when": "2026-12-01 16:00"}
    again = run.merge(got, {**new, "meta": later})
    text = readme_table.table(again)
    assert "`audit`: run on 2026-12-01 16:00" in text
    assert "2026-12-01 15:30" not in text


def test_every_missed_figure_is_named_with_what_its_profile_says() -> None:
    import profiles

    data = {"meta": {}, "results": [
        {"bench": "index", "item": "2", "what": "w", "result": "1.3x", "target": "<= 1.1",
         "met": False},
        {"bench": "index", "item": "2", "what": "w", "result": "1.2x", "target": "<= 1.1",
         "met": False},
        {"bench": "unprofiled", "item": "9", "what": "w", "result": "2 s", "target": "<= 1 s",
         "met": False},
        {"bench": "scan", "item": "3", "what": "w", "result": "1 s", "target": "<= 2 s",
         "met": True}]}
    text = readme_table.table(data)
    assert f"- `index` (2 rows missed): {profiles.WHY['index']}" in text
    assert "- `unprofiled` (1 row missed): not profiled yet" in text
    assert "`scan`" not in text  # met: not listed
    assert "Misses" not in readme_table.table({"meta": {}, "results": data["results"][3:]})


def test_a_subset_run_keeps_the_other_figures_rows_unless_told_to_replace(
        tmp_path: Path, monkeypatch) -> None:
    """`scripts/dev bench --only tick` (as the docs suggest) once replaced results.json with
    the tick's rows alone, and the next table lost every other figure."""
    import json

    import run

    run._discover()
    before = dict(registry.FIGURES)
    out = tmp_path / "results.json"
    old = {"meta": {"when": "2026-12-01 10:00", "quick": False, "cpus": 2, "python": "3.11",
                    "figures": ["other"], "load_avg_1min": [0.5]},
           "results": [{"bench": "other", "result": "kept", "met": True}]}
    out.write_text(json.dumps(old))
    try:
        registry.register("probe", lambda quick: [registry.row("probe", "1 s", "< 2 s", True)],
                          item="9", what="a probe")
        monkeypatch.setattr(sys, "argv", ["run.py", "--only", "probe", "--out", str(out)])
        assert run.main() == 0
        got = {r["bench"]: r["result"] for r in json.loads(out.read_text())["results"]}
        assert got == {"other": "kept", "probe": "1 s"}
        monkeypatch.setattr(sys, "argv", ["run.py", "--only", "probe", "--out", str(out),
                                          "--replace"])
        assert run.main() == 0
        got = {r["bench"]: r["result"] for r in json.loads(out.read_text())["results"]}
        assert got == {"probe": "1 s"}
    finally:
        registry.FIGURES.clear()
        registry.FIGURES.update(before)


def test_the_launch_bench_refuses_what_an_install_of_the_app_alone_lacks(
        tmp_path: Path) -> None:
    """`scripts/dev app` and the wheel install the app's own requirements; this environment
    has the test extras too. The startup bench launches as the former: pandas (which `import
    lancedb` imports wherever it can) is refused as absent, the app's requirements are not."""
    import os
    import subprocess

    import startup

    absent = set(startup.not_installed())
    assert {"pandas", "pytest", "hypothesis"} <= absent
    assert not absent & {"numpy", "pyarrow", "lancedb", "PySide6", "pyqtgraph", "superqt",
                         "pydantic", "numba", "inspector"}
    probe = ("import sys, startup; startup.refuse(set(sys.argv[1].split(',')))\n"
             "import lancedb, pyarrow.dataset\n"
             "try:\n    import pandas\nexcept ModuleNotFoundError as e:\n"
             "    print('refused', e.name)\n"
             "print('pandas' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe, ",".join(sorted(absent))],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(BENCH)})
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.split() == ["refused", "pandas", "False"]


def test_a_pair_is_timed_in_rounds_whose_order_alternates() -> None:
    """Neither side of a ratio always runs first (on the caches the other left): the
    issue's measure is interleaved with the order alternating. The overhead pair still
    searches the same vector in each round, whichever runs first."""
    import run

    calls: list[str] = []
    sa, sb = registry.interleaved(lambda: calls.append("a"), lambda: calls.append("b"), 4)
    assert len(sa) == len(sb) == 4
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]  # warm-up, 4 rounds
    seen: list[tuple[str, int]] = []
    engine, bare = run._same_vector(lambda i: seen.append(("engine", i)),
                                    lambda i: seen.append(("bare", i)))
    registry.interleaved(engine, bare, 3)
    assert seen == [("engine", 0), ("bare", 0), ("engine", 1), ("bare", 1),
                    ("bare", 2), ("engine", 2), ("engine", 3), ("bare", 3)]


def test_the_index_bench_rotates_its_calls_and_times_the_exact_search_apart() -> None:
    """Each of the index bench's calls takes every place in a round in turn; and the index
    facet's exact search (~0.2 s at 100k rows) runs in rounds of its own, never between the
    engine and the bare LanceDB call whose ratio is the row's verdict."""
    import inspect

    import index_bench

    calls: list[tuple[str, int]] = []
    fns = {n: (lambda i, n=n: calls.append((n, i))) for n in ("x", "y", "z")}
    got = index_bench.interleaved(fns, 3)
    assert set(got) == {"x", "y", "z"}
    assert calls == [("x", 0), ("y", 0), ("z", 0),  # the warm-up
                     ("x", 0), ("y", 0), ("z", 0), ("y", 1), ("z", 1), ("x", 1),
                     ("z", 2), ("x", 2), ("y", 2)]
    src = inspect.getsource(index_bench.run_bench)
    main_rounds = src[src.index('fns = {"engine"'):src.index("med = interleaved(fns")]
    assert "bypass_vector_index" not in main_rounds and "engine+facet" not in main_rounds


def test_the_sweeps_numpy_anchor_finds_what_lancedbs_flat_search_finds(tmp_path: Path) -> None:
    """The example sweep's second anchor (a numpy process: every vector read, one product,
    an argpartition a query) answers the sweep's queries as an exact search does: each
    query's 10 nearest ids, in LanceDB's own flat order, on a table written here."""
    import json
    import os
    import subprocess

    import example_bench
    import lancedb
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(34)
    vecs = rng.normal(size=(400, 16)).astype(np.float32)
    ids = [f"m{i:03d}" for i in range(400)]
    db = lancedb.connect(str(tmp_path / "store"))
    tbl = db.create_table("memories", pa.table({
        "id": ids, "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), 16)}))
    asked = ids[::37]
    (tmp_path / "ids.json").write_text(json.dumps(asked))
    done = subprocess.run([sys.executable, "-c", example_bench._NUMPY, str(tmp_path / "store"),
                           str(tmp_path / "ids.json"), "--print"], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-800:]
    got = json.loads(done.stdout)
    want = [tbl.search(vecs[ids.index(a)]).limit(10).to_arrow().column("id").to_pylist()
            for a in asked]
    assert len(got) == len(asked) == 11
    assert got == want
