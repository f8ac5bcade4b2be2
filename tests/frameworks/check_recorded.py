"""Run every recorded case of record_round2.py (and record_cognee.py) through its preset and
compare: the rows (named through the case's `id_path`), their order, and where the system
returns one the score, bit for bit.

    .venv/bin/python tests/frameworks/check_recorded.py DIR [--system agno,...] [--show N]

DIR holds <system>/{store/, cases.json} as the recorders write them (the fixtures under
tests/frameworks/data, or a held-out recording with --seed N). Prints one line per system,
`agree/cases`, and the first disagreements; exits 1 when any case disagrees.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROUND2 = ("agno", "langchain2", "mem0", "llamaindex2", "llamaindex_ivf", "crewai2", "cognee")


def load(base: Path, system: str) -> dict[str, Any]:
    return json.loads((base / system / "cases.json").read_text(encoding="utf-8"))


def open_copy(base: Path, system: str, into: Path) -> Any:
    """The recorded store, copied (the recording stays untouched), opened read-only."""
    from inspector.core.stores.opening import open_store

    doc = load(base, system)
    dest = into / system
    if not dest.exists():
        shutil.copytree(base / system / "store", dest)
    return open_store(str(dest), doc["table"])


def run_case(store: Any, doc: dict[str, Any], case: dict[str, Any]) -> tuple[list[str],
                                                                                list[float],
                                                                                Any]:
    """The preset's final rows (named as the recording names them), scores and trace."""
    from inspector.core.engine.flow.question import Question, ask, parse_now
    from inspector.core.engine.flow.stages.lance_where import value_at

    now = doc.get("now")
    q = Question(store=store.uri, preset=case["preset"], text=case["text"],
                 vector=doc["vectors"][case["query"]], limit=case["limit"],
                 scopes=case["scopes"], set=case["sets"],
                 now=None if now is None else parse_now(now))
    trace, _ = ask(q, store)
    path = case.get("id_path") or doc["id_path"]
    ids = [str(value_at({**s.row.columns, "id": s.id}, path)) for s in trace.final.rows]
    return ids, [s.score for s in trace.final.rows], trace


def differs(store: Any, doc: dict[str, Any], case: dict[str, Any]) -> str | None:
    """None when the preset agrees with the recorded answer, else what differs."""
    ids, scores, trace = run_case(store, doc, case)
    want = [str(r["id"]) for r in case["results"]]
    if ids != want:
        return f"rows {ids} != {want}"
    if trace.inexact:
        return f"marked inexact: {trace.inexact}"
    if case.get("scores", True):
        for i, s, r in zip(ids, scores, case["results"], strict=True):
            if s != r["score"]:
                return f"{i}: score {s!r} != {r['score']!r}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--system", default=",".join(ROUND2))
    ap.add_argument("--show", type=int, default=5)
    a = ap.parse_args(argv)
    base = Path(a.dir)
    bad_total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for system in a.system.split(","):
            if not (base / system / "cases.json").exists():
                continue
            doc = load(base, system)
            store = open_copy(base, system, Path(tmp))
            bad = [(c["name"], why) for c in doc["cases"]
                   if (why := differs(store, doc, c)) is not None]
            print(f"{system}: {len(doc['cases']) - len(bad)}/{len(doc['cases'])} agree")
            for name, why in bad[: a.show]:
                print(f"  {name}: {why}")
            bad_total += len(bad)
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
