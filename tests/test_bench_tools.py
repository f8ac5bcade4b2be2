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
