"""The named mutants: decision points of the engine where a past bug was, or a sibling of one,
each with the tests that must fail when it is changed. `bash scripts/dev mutants` applies
each mutant to the checkout's file in turn, runs its tests, and restores the file; it fails
when any mutant survives (its tests pass) or no longer applies (the code moved: update the
mutant, do not drop it).

    python tests/mutants/run.py [--list] [NAME ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = Path(__file__).with_name("mutants.toml")


def load() -> list[dict[str, object]]:
    return tomllib.loads(MUTANTS.read_text(encoding="utf-8"))["mutant"]


def run_one(m: dict[str, object], python: str) -> tuple[str, str]:
    """(verdict, detail): killed | survived | stale."""
    path = ROOT / str(m["file"])
    original = path.read_text(encoding="utf-8")
    find, repl = str(m["find"]), str(m["replace"])
    if original.count(find) != 1:
        return "stale", f"{m['file']}: the text to change occurs {original.count(find)} times"
    try:
        path.write_text(original.replace(find, repl), encoding="utf-8")
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONDONTWRITEBYTECODE": "1"}
        got = subprocess.run([python, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-n", "0",
                              *[str(t) for t in m["tests"]]], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=900)
    finally:
        path.write_text(original, encoding="utf-8")
    if got.returncode == 0:
        return "survived", "its tests passed"
    if got.returncode != 1:  # 1: tests failed; anything else: the tests did not run
        tail = (got.stdout + got.stderr).strip().splitlines()[-3:]
        return "stale", f"pytest exited {got.returncode}: {' / '.join(tail)}"
    return "killed", ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    mutants = load()
    if a.list:
        for m in mutants:
            print(f"{m['name']:34} {m['file']}: {m['why']}")
        return 0
    chosen = [m for m in mutants if not a.names or m["name"] in a.names]
    unknown = set(a.names) - {str(m["name"]) for m in mutants}
    if unknown:
        print(f"unknown mutant(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *{str(m["file"]) for m in
                                                                    chosen}],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if dirty:
        print(f"mutants change files in place; commit or stash these first:\n{dirty}",
              file=sys.stderr)
        return 2
    bad = 0
    for m in chosen:
        verdict, detail = run_one(m, sys.executable)
        bad += verdict != "killed"
        print(f"{verdict:9} {m['name']}" + (f": {detail}" if detail else ""), flush=True)
    print(f"{len(chosen) - bad} of {len(chosen)} mutants killed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
