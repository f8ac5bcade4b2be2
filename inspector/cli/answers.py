"""`inspector query` (any pipeline) with `--export DIR`, and `inspector run-trec`: a query
set's final lists as a TREC run. Each answer is the object `inspector query --json` prints;
core.evidence.exports turns it into files, written only where the user asked."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from inspector.cli import flow as cli_flow
from inspector.cli.options import add_query_options, open_from_args
from inspector.core.errors import InspectorError


def add_export_options(ap: argparse.ArgumentParser) -> None:
    x = ap.add_argument_group("export (files written only here, never into the store)")
    x.add_argument("--export", metavar="DIR",
                   help="write every stage table, the final list (results) and the answer "
                        "(answer.json) into DIR")
    x.add_argument("--format", choices=("csv", "parquet"), help="--export's format (csv)")
    x.add_argument("--force", action="store_true", help="replace files that exist")


def add_parsers(sub: Any) -> None:
    r = sub.add_parser("run-trec", help="a query set's final lists as a TREC run file")
    r.add_argument("store")
    add_query_options(r)
    r.add_argument("--queries", metavar="FILE", required=True,
                   help="query set / judgments file (JSON or CSV), as sweep reads it")
    r.add_argument("--out", metavar="RUN", required=True, help="the run file to write")
    r.add_argument("--tag", help="the run's tag (default: the preset or pipeline name)")
    r.add_argument("--score", choices=("system", "rank"), default="system",
                   help="system: the pipeline's score; rank: n - rank + 1, so tools that sort "
                        "by score (trec_eval) keep the system's order")
    r.add_argument("--qrels", metavar="FILE", help="also write the set's judgments as qrels")
    r.add_argument("--force", action="store_true", help="replace files that exist")


def answer(a: argparse.Namespace, store: Any = None) -> dict[str, Any]:
    """The `query --json` object the arguments ask for."""
    return cli_flow.answer_json(*cli_flow.flow_answer(a, store))


def cmd_query(a: argparse.Namespace) -> int:
    _check_export_options(a)
    q, got = cli_flow.flow_answer(a)
    out = cli_flow.answer_json(q, got)
    if a.export:  # before anything is printed: a refused export prints no answer
        from inspector.core.evidence.exports import export_answer

        paths = export_answer(out, a.export, a.format or "csv", force=a.force,
                              stores=[a.store])
        print(f"inspector: wrote {len(paths)} files to {a.export}", file=sys.stderr)
    cli_flow.print_answer(a, out, got)
    return 0


def _check_export_options(a: argparse.Namespace) -> None:
    """--format and --force need --export; a target inside the store is refused up front."""
    from inspector.core.stores.safety.outputs import refuse_inside_store

    if not a.export:
        given = [o for o, v in (("--format", a.format), ("--force", a.force)) if v]
        if given:
            raise InspectorError(f"{' and '.join(given)} appl{'y' if len(given) > 1 else 'ies'}"
                                 f" to --export DIR.")
        return
    target = Path(a.export).expanduser()
    if target.exists() and not target.is_dir():
        raise InspectorError(f"--export {a.export} is a file; exports go into a folder.")
    refuse_inside_store(target, [a.store])


def cmd_run_trec(a: argparse.Namespace) -> int:
    from inspector.core.analysis.judgments import load_judgments
    from inspector.core.evidence import exports

    given = [o for o, v in (("--text", a.text), ("--vector", a.vector),
                            ("--vector-of", a.vector_of), ("--expect", a.expect)) if v]
    if given:
        raise InspectorError(f"run-trec takes its queries from --queries, not {given[0]}.")
    from inspector.core.stores.safety.outputs import check_target

    stores = [a.store]
    for path in (a.out, a.qrels):
        if path is not None:  # said before any query runs
            check_target(path, stores, a.force)
    tag = exports.check_token(a.tag or a.preset or (Path(a.pipeline).stem if a.pipeline
                                                    else "inspector"), "run tag")
    queries = load_judgments(a.queries).queries
    if not queries:
        raise InspectorError(f"The query set {a.queries} is empty.")
    qids = exports.query_ids(queries)
    for qid, item in zip(qids, queries, strict=True):
        if item.name and qid != item.name:
            print(f"inspector: query {item.name!r} has the TREC id {qid!r} (a TREC line "
                  f"splits on whitespace)", file=sys.stderr)
    cli_flow.question_from_args(a, need_query=False)  # bad options before the store opens
    store = open_from_args(a)
    lines: list[str] = []
    reordered = 0
    for qid, item in zip(qids, queries, strict=True):
        vec = None if item.vector is None else json.dumps(list(item.vector))
        one = argparse.Namespace(**{**vars(a), "text": item.text, "vector": vec,
                                    "vector_of": item.vector_of, "expect": [],
                                    "scope": [item.scope] if item.scope else a.scope,
                                    "fixes": "off", "index_facet": "off"})
        out = answer(one, store)
        lines += exports.trec_lines(qid, out, tag, a.score)
        reordered += a.score == "system" and not exports.score_order_kept(out)
    exports.write_text_file(a.out, "".join(f"{ln}\n" for ln in lines), stores, a.force)
    print(f"wrote {a.out}: {len(lines)} lines for {len(queries)} queries (tag {tag})")
    if a.qrels:
        qrels = [ln for qid, item in zip(qids, queries, strict=True)
                 for ln in exports.qrels_lines(qid, item.grades)]
        exports.write_text_file(a.qrels, "".join(f"{ln}\n" for ln in qrels), stores,
                                a.force)
        print(f"wrote {a.qrels}: {len(qrels)} judgments")
    if reordered:
        print(f"inspector: warning: in {reordered} of {len(queries)} queries the scores do not "
              f"fall strictly along the final order (ties, or a stage that reorders); tools "
              f"that sort a run by score will not see the system's order: --score rank keeps "
              f"it", file=sys.stderr)
    return 0


HANDLERS = {"run-trec": cmd_run_trec}
