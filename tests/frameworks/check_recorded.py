"""Run every recorded case of record_round2.py (and record_cognee.py) through its preset and
compare: the rows (named through the case's `id_path`), their order, and where the system
returns one the score, bit for bit.

    .venv/bin/python tests/frameworks/check_recorded.py DIR [--system agno,...] [--show N]
        [--fixes]

DIR holds <system>/{store/, cases.json} as the recorders write them (the fixtures under
tests/frameworks/data, or a held-out recording with --seed N). Prints one line per system,
`agree/cases`, and the first disagreements; exits 1 when any case disagrees.

--fixes also diagnoses every case the package answered with fewer rows than its limit: one
starved by a filter after a cut must get a fix that returns more rows, and every 4th such
case has its fixes' `argv` applied by `inspector query`, which must return what the fix
said; the counts per diagnosis code are printed. Exits 1 when one does not hold.
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


def question_of(store: Any, doc: dict[str, Any], case: dict[str, Any]) -> Any:
    """The question the case asked, as the inspector's Question."""
    from inspector.core.engine.flow.question import Question, parse_now

    now = doc.get("now")
    return Question(store=store.uri, preset=case["preset"], text=case["text"],
                    vector=doc["vectors"][case["query"]], limit=case["limit"],
                    scopes=case["scopes"], set=case["sets"],
                    now=None if now is None else parse_now(now))


def run_case(store: Any, doc: dict[str, Any], case: dict[str, Any]) -> tuple[list[str],
                                                                                list[float],
                                                                                Any]:
    """The preset's final rows (named as the recording names them), scores and trace."""
    from inspector.core.engine.flow.question import ask
    from inspector.core.engine.flow.stages.lance_where import value_at

    q = question_of(store, doc, case)
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


def cli_rows(store: Any, q: Any, extra: list[str]) -> int:
    """How many rows `inspector query` returns for the question with `extra` (a fix's argv)
    added; -1 when the command fails."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from inspector.cli.main import main as cli

    args = ["query", store.uri, "--table", store.table_name, "--preset", q.preset, "--vector",
            json.dumps(q.vector), "--limit", str(q.limit), "--json", "--fixes", "off"]
    args += ["--text", q.text] if q.text else []
    for k, v in q.set.items():
        args += ["--set", f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
    for s in q.scopes or ():
        args += ["--scope", s]
    args += ["--now", str(q.now)] if q.now is not None else []
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        if cli(args + extra) != 0:
            return -1
    return len(json.loads(out.getvalue())["stages"][-1]["candidates"])


def starved_fixes(store: Any, doc: dict[str, Any]) -> tuple[dict[str, int], list[str]]:
    """Counts per diagnosis code (and of fixes) over the starved cases, and what failed."""
    from inspector.core.engine.flow.question import answer

    counts: dict[str, int] = {}
    bad: list[str] = []
    after_cut = 0
    for case in doc["cases"]:
        if len(case["results"]) >= case["limit"]:
            continue
        q = question_of(store, doc, case)
        got = answer(q, store)
        d, have = got.diagnosis, len(got.trace.final.rows)
        counts[d.code] = counts.get(d.code, 0) + 1
        more = [f for f in d.fixes if f.returns > have]
        if d.code == "filter_after_cut":
            after_cut += 1
            if not more:
                bad.append(f"{case['name']}: a filter after the cut and no fix returns more")
            counts["full page"] = counts.get("full page", 0) + any(f.full for f in d.fixes)
            if after_cut % 4 == 1:
                for f in more:
                    n = cli_rows(store, q, f.to_json()["argv"])
                    counts["argv applied"] = counts.get("argv applied", 0) + 1
                    if n != f.returns:
                        bad.append(f"{case['name']}: {f.label} said {f.returns}, its argv "
                                   f"returned {n}")
    return counts, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--system", default=",".join(ROUND2))
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--fixes", action="store_true",
                    help="also diagnose the starved cases and apply their fixes")
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
            if a.fixes:
                counts, failed = starved_fixes(store, doc)
                print(f"  starved: {', '.join(f'{k} {v}' for k, v in counts.items()) or 'none'}")
                for why in failed[: a.show]:
                    print(f"  {why}")
                bad_total += len(failed)
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
