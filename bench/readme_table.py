"""Write the benchmarks page's table from bench/results.json (never typed by hand).

    .venv/bin/python bench/readme_table.py [--results bench/results.json] [--check]

Rewrites the block between the BEGIN/END markers in docs/developer/benchmarks.md (the docs
site's Benchmarks page; `--readme FILE` names another). `--check` only says whether the page
matches the results (exit 1 when not).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
BEGIN = "<!-- bench-table:begin (bench/readme_table.py writes this block) -->"
END = "<!-- bench-table:end -->"
PAGE = HERE.parent / "docs" / "developer" / "benchmarks.md"
VERDICT = {True: "met", False: "**missed**", None: ""}


def table(data: dict[str, Any]) -> str:
    meta = data.get("meta", {})
    lines = [f"From `scripts/dev bench{' --quick' if meta.get('quick') else ''}` on "
             f"{meta.get('when', '?')} ({meta.get('cpus', '?')} cores, Python "
             f"{meta.get('python', '?')}); medians of one run, ratios interleaved."
             + _load(meta) + "".join(_later(m, later) for m, later in _merges(meta)), "",
             "| # | what | result | target | |", "|---|---|---|---|---|"]
    for r in data.get("results", []):
        if "result" not in r:
            continue  # a row from an older format carries no verdict: left out, not guessed
        cells = [r.get("item", ""), r.get("what", ""), r["result"], r.get("target", ""),
                 VERDICT[r.get("met")]]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines + _misses(data.get("results", [])))


def _misses(results: list[dict[str, Any]]) -> list[str]:
    """Every figure with a missed row, how many rows missed, and what its profile says."""
    from profiles import why

    missed: dict[str, int] = {}
    for r in results:
        if r.get("met") is False:
            missed[r["bench"]] = missed.get(r["bench"], 0) + 1
    if not missed:
        return []
    return ["", "Misses, and what the profile says:", ""] + [
        f"- `{name}` ({n} row{'s' if n > 1 else ''} missed): {why(name)}"
        for name, n in missed.items()]


def _load(meta: dict[str, Any]) -> str:
    """Other work on the machine slows every figure: the run says how busy it was."""
    load = meta.get("load_avg_1min")
    if not load:
        return ""
    cpus = meta.get("cpus") or 0
    shared = (" (above the core count: other work shared them)" if cpus and max(load) > cpus
              else "")
    return (f" Load average during the run: {min(load):.1f} to {max(load):.1f} on "
            f"{cpus or '?'} cores{shared}.")


def _merges(meta: dict[str, Any]) -> list[tuple[dict[str, Any], set[str]]]:
    """Each merged run with the figures a run after it measured again."""
    runs = meta.get("merged", [])
    return [(m, {f for later in runs[i + 1:] for f in later.get("figures", [])})
            for i, m in enumerate(runs)]


def _later(run: dict[str, Any], again: set[str] | None = None) -> str:
    """A later run of some figures, merged into the results (`run.py --merge`): only those
    no run after it measured again (the table shows the last run's figures)."""
    figures = [f for f in run.get("figures", []) if f not in (again or set())]
    if not figures:
        return ""
    load = run.get("load_avg_1min") or [0]
    return (f" {', '.join(f'`{f}`' for f in figures)}: run on "
            f"{run.get('when', '?')}{' (--quick)' if run.get('quick') else ''}, load "
            f"{min(load):.1f} to {max(load):.1f}.")


def rewrite(readme: str, block: str) -> str:
    if BEGIN not in readme or END not in readme:
        raise SystemExit(f"the page has no {BEGIN} ... {END} block")
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", default=str(HERE / "results.json"))
    ap.add_argument("--readme", default=str(PAGE))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    data = json.loads(Path(a.results).read_text())
    readme = Path(a.readme)
    new = rewrite(readme.read_text(), table(data))
    if a.check:
        same = new == readme.read_text()
        print(f"{readme.name}: the table matches results.json" if same else
              f"{readme.name}: the table differs from results.json", file=sys.stderr)
        return 0 if same else 1
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
