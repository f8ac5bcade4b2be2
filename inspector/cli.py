"""Command line: `inspector query|tables|presets|demo|shot`, the shared options, and
`inspector [STORE]` for the window; `sweep|report|check` live in cli_tuning and
`versions|diff-versions` in cli_stores.

Bad input exits with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.params import DISTANCES, FILTERS, MODES
from inspector.core.presets import PRESETS
from inspector.core.scope import STRATEGIES

COMMANDS = ("query", "tables", "presets", "demo", "shot", "sweep", "report", "check",
            "versions", "diff-versions")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2
        raise InspectorError(f"{self.prog}: {message}")


def add_query_options(ap: argparse.ArgumentParser, need_query: bool) -> None:
    """Options shared by `query` and `shot`; None means 'not given' so presets can fill in."""
    ap.add_argument("--table", help="table name (default: the only table, or 'memories')")
    q = ap.add_argument_group("query input (text drives full-text; a vector drives vector search)")
    q.add_argument("--text", help="query text, embedded for vector search unless --mode fts")
    q.add_argument("--vector", help="query vector as a JSON array, or @FILE")
    q.add_argument("--vector-of", metavar="ID", help="use a stored row's vector (query by example)")
    q.add_argument("--embedder", help="embedder for --text (default: the one the store records)")
    g = ap.add_argument_group("pipeline")
    g.add_argument("--preset", choices=list(PRESETS), help="reproduce a real system's parameters")
    g.add_argument("--mode", choices=MODES)
    g.add_argument("--distance", choices=DISTANCES)
    g.add_argument("--limit", type=int)
    g.add_argument("--overfetch", type=float, help="raw pool depth = ceil(limit * F), F >= 1")
    g.add_argument("--cap", type=int, help="largest pool depth (0 = none; default 50)")
    g.add_argument("--fts-k", type=int, help="floor for the full-text leg's k (hybrid)")
    g.add_argument("--vec-k", type=int, help="floor for the vector leg's k (hybrid)")
    g.add_argument("--blend", type=float, help="importance blend weight w in [0, 1]")
    g.add_argument("--default-importance", type=float, help="importance used when missing")
    g.add_argument("--min-score", type=float, help="drop results whose blended score is lower")
    s = ap.add_argument_group("scope")
    s.add_argument("--scope", help="the caller's scope (empty or 'global' = everything)")
    s.add_argument("--scope-strategy", choices=STRATEGIES)
    s.add_argument("--scope-map", metavar="FILE", help="JSON {scope: [prefix, ...]}")
    s.add_argument("--scope-column", help="column compared for --scope-strategy column")
    s.add_argument("--filter", choices=FILTERS, help="post: after the cut; pushdown: prefilter")
    ap.add_argument("--expect", action="append", default=[], metavar="ID",
                    help="report where this id is dropped and what depth returns it")
    ap.add_argument("--column", action="append", default=[], metavar="ROLE=COL",
                    help="override a detected column role, e.g. --column importance=weight")
    add_store_options(ap)


def add_store_options(ap: argparse.ArgumentParser, as_of: bool = True) -> None:
    """Where and which version: object storage options, a table version, a docs model."""
    st = ap.add_argument_group("store location and version")
    st.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                    help="object storage / db:// option, e.g. aws_endpoint=http://127.0.0.1:9000 "
                    "(also from INSPECTOR_STORAGE_OPTIONS)")
    if as_of:
        st.add_argument("--as-of", type=int, metavar="VERSION",
                        help="open the table as of this version (see `inspector versions`)")
    st.add_argument("--docs-model", metavar="MODEL",
                    help="SQLite docs store: which docs_embeddings model to search")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="inspector", description="Inspect an agent memory store's retrieval.")
    sub = ap.add_subparsers(dest="command", parser_class=_Parser)
    q = sub.add_parser("query", help="run the pipeline and print every stage")
    q.add_argument("store")
    add_query_options(q, need_query=True)
    q.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    q.add_argument("--rows", type=int, default=15, help="rows shown per stage (text output)")
    t = sub.add_parser("tables", help="tables, columns, detected roles and row counts")
    t.add_argument("store")
    t.add_argument("--json", action="store_true")
    add_store_options(t, as_of=False)
    sub.add_parser("presets", help="the named presets and their candidate depths")
    d = sub.add_parser("demo", help="write the demo store to PATH")
    d.add_argument("path")
    sh = sub.add_parser("shot", help="render the window offscreen after a query and save a PNG")
    sh.add_argument("store", nargs="?")
    sh.add_argument("--out", required=True)
    sh.add_argument("--size", default="1600x1000", help="window size WIDTHxHEIGHT")
    add_query_options(sh, need_query=False)
    from inspector import cli_stores, cli_tuning

    cli_tuning.add_parsers(sub)
    cli_stores.add_parsers(sub)
    return ap


def _roles(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        role, sep, col = pair.partition("=")
        if not sep or not role or not col:
            raise InspectorError(f"--column takes ROLE=COLUMN, not {pair!r}.")
        out[role] = col
    return out


def params_from_args(a: argparse.Namespace) -> Any:
    from inspector.core.inputs import build_params

    return build_params(
        preset=a.preset, scope_map_file=a.scope_map, mode=a.mode, distance=a.distance,
        limit=a.limit, overfetch=a.overfetch, cap=a.cap, fts_k=a.fts_k, vec_k=a.vec_k,
        blend=a.blend, default_importance=a.default_importance, min_score=a.min_score,
        scope=a.scope, scope_strategy=a.scope_strategy, scope_column=a.scope_column,
        filter=a.filter)


def query_from_args(a: argparse.Namespace, store: Any, params: Any) -> Any:
    """The query the options describe: --vector, --vector-of or --text (with --embedder)."""
    from inspector.core.inputs import build_query, parse_vector

    if a.vector is not None and a.vector_of is not None:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    vector = parse_vector(a.vector) if a.vector is not None else None
    return build_query(store, params.mode, text=a.text, vector=vector, vector_of=a.vector_of,
                       embedder=a.embedder)


def run_query(a: argparse.Namespace) -> Any:
    """Open the store, run the pipeline, analyse expected ids: the CLI and `shot` share this."""
    from inspector.core.expect import analyse, attach
    from inspector.core.pipeline import run

    params = params_from_args(a)
    store = open_from_args(a)
    query = query_from_args(a, store, params)
    trace = run(store, query, params)
    if a.expect:
        trace = attach(trace, analyse(store, query, trace, a.expect))
    return trace


def _cmd_query(a: argparse.Namespace) -> int:
    from inspector.core.report import format_trace

    trace = run_query(a)
    if a.json:
        json.dump(trace.to_json(), sys.stdout, allow_nan=False, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(format_trace(trace, max_rows=a.rows))
    return 0


def _cmd_tables(a: argparse.Namespace) -> int:
    from inspector.core.report import format_tables
    from inspector.core.store import describe_tables

    infos = describe_tables(a.store, storage_from_args(a))
    if a.json:
        print(json.dumps([{"name": t.name, "rows": t.rows, "version": t.version, "dim": t.dim,
                           "fts_indexed": t.fts_indexed, "columns": t.columns,
                           "roles": t.roles.as_dict()} for t in infos]))
    else:
        print(format_tables(a.store, infos))
    return 0


def _cmd_demo(a: argparse.Namespace) -> int:
    from inspector.core.demo import build_demo

    path = build_demo(a.path)
    print(f"demo store written to {path}")
    return 0


def _cmd_presets(a: argparse.Namespace) -> int:
    from inspector.core.report import format_presets

    print(format_presets())
    return 0


def _cmd_shot(a: argparse.Namespace) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from inspector.qt.app import shot

    return shot(a)


def _launch(argv: Sequence[str]) -> int:
    ap = _Parser(prog="inspector", description="Open the inspector window on a store "
                 "(the demo store when none is given). Commands: " + ", ".join(COMMANDS) + ".")
    ap.add_argument("store", nargs="?")
    ap.add_argument("--table")
    add_store_options(ap)
    a = ap.parse_args(list(argv))
    from inspector.qt.app import launch
    from inspector.qt.store_options import options_from_args

    return launch(a.store, a.table, options_from_args(a))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in ("-h", "--help"):
            _parser().print_help()
            return 0
        if not argv or argv[0] not in COMMANDS:
            return _launch(argv)
        a = _parser().parse_args(argv)
        from inspector import cli_stores, cli_tuning

        handler = {"query": _cmd_query, "tables": _cmd_tables, "presets": _cmd_presets,
                   "demo": _cmd_demo, "shot": _cmd_shot, **cli_tuning.HANDLERS,
                   **cli_stores.HANDLERS}[a.command]
        return handler(a)
    except InspectorError as exc:
        print(f"inspector: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def storage_from_args(a: argparse.Namespace) -> dict[str, str] | None:
    from inspector.core.remote import parse_option_pairs

    return parse_option_pairs(getattr(a, "storage_option", None) or []) or None


def open_from_args(a: argparse.Namespace, version: int | None = None) -> Any:
    """open_store with every store option given on the command line."""
    from inspector.core.store import open_store

    return open_store(a.store, a.table, roles=_roles(getattr(a, "column", [])),
                      version=version if version is not None else getattr(a, "as_of", None),
                      storage_options=storage_from_args(a),
                      embedding_model=getattr(a, "docs_model", None))
