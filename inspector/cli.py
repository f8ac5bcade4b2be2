"""Command line: `inspector query|tables|presets|demo|shot|sweep|report|check`, or
`inspector [STORE]` for the window.

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
    _add_tuning_parsers(sub)
    _add_version_parsers(sub)
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


def run_query(a: argparse.Namespace) -> Any:
    """Open the store, run the pipeline, analyse expected ids: the CLI and `shot` share this."""
    from inspector.core.expect import analyse, attach
    from inspector.core.inputs import build_query, parse_vector
    from inspector.core.pipeline import run

    given = [x for x in (a.vector, a.vector_of) if x is not None]
    if len(given) > 1:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    params = params_from_args(a)
    store = open_from_args(a)
    vector = parse_vector(a.vector) if a.vector is not None else None
    query = build_query(store, params.mode, text=a.text, vector=vector, vector_of=a.vector_of,
                        embedder=a.embedder)
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
        handler = {"query": _cmd_query, "tables": _cmd_tables, "presets": _cmd_presets,
                   "demo": _cmd_demo, "shot": _cmd_shot, "sweep": _cmd_sweep,
                   "report": _cmd_report, "check": _cmd_check, "versions": _cmd_versions,
                   "diff-versions": _cmd_diff_versions}[a.command]
        return handler(a)
    except InspectorError as exc:
        print(f"inspector: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


# --- tuning and evidence: sweep, report, check -------------------------------------------


def _add_tuning_parsers(sub: Any) -> None:
    sw = sub.add_parser("sweep", help="over-fetch x blend (x min score) grid over a query set")
    sw.add_argument("store")
    add_query_options(sw, need_query=False)
    sw.add_argument("--queries", metavar="FILE",
                    help="query set / judgments file (JSON or CSV); else the one --text query")
    sw.add_argument("--judgments", metavar="FILE", help="grades for the single --text query")
    _add_grid_options(sw)
    sw.add_argument("--json", action="store_true", help="one JSON object instead of text")
    sw.add_argument("--out", metavar="FILE", help="also write the JSON result to FILE")
    rp = sub.add_parser("report", help="write a receipt bundle (JSON + self-contained HTML)")
    rp.add_argument("store")
    add_query_options(rp, need_query=True)
    rp.add_argument("--out", required=True, metavar="PATH", help="writes PATH.json, PATH.html")
    rp.add_argument("--judgments", metavar="FILE", help="grades for this query (JSON or CSV)")
    rp.add_argument("--against-preset", choices=list(PRESETS), help="compare side by side")
    rp.add_argument("--against", action="append", default=[], metavar="KEY=VALUE",
                    help="compare with these parameter changes, e.g. --against filter=pushdown")
    rp.add_argument("--pool-depth", type=int, default=300, help="candidates kept in the bundle")
    rp.add_argument("--no-map", action="store_true", help="skip the PCA map (no vector lookup)")
    rp.add_argument("--no-html", action="store_true")
    _add_grid_options(rp)
    ck = sub.add_parser("check", help="run a checks file; exit 1 when an assertion fails")
    ck.add_argument("checks_file")
    ck.add_argument("--store", help="store to check (default: the file's \"store\")")
    ck.add_argument("--table")
    ck.add_argument("--json", action="store_true")


def _add_grid_options(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("grid ('a,b,c' or 'start:stop:step', inclusive)")
    g.add_argument("--grid-overfetch", default="1:10:1", metavar="SPEC")
    g.add_argument("--grid-blend", default="0:1:0.1", metavar="SPEC")
    g.add_argument("--grid-min-score", metavar="SPEC", help="default: the base min score")
    g.add_argument("--k", type=int, help="metric cut-off (default: the limit)")


def _grid(a: argparse.Namespace) -> Any:
    from inspector.core.sweep import Grid, parse_axis

    ms = parse_axis(a.grid_min_score, "min score") if a.grid_min_score else None
    return Grid(parse_axis(a.grid_overfetch, "over-fetch"), parse_axis(a.grid_blend, "blend"), ms)


def _store_query_params(a: argparse.Namespace, need_query: bool) -> tuple[Any, Any, Any]:
    from inspector.core.inputs import build_query, parse_vector

    params = params_from_args(a)
    store = open_from_args(a)
    if not need_query and a.text is None and a.vector is None and a.vector_of is None:
        return store, None, params
    if a.vector is not None and a.vector_of is not None:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    vector = parse_vector(a.vector) if a.vector is not None else None
    query = build_query(store, params.mode, text=a.text, vector=vector, vector_of=a.vector_of,
                        embedder=a.embedder)
    return store, query, params


def _grades(path: str | None, text: str | None, scope: str | None) -> dict[str, float] | None:
    if not path:
        return None
    from inspector.core.judgments import load_judgments

    return load_judgments(path).grades_for(text or "", scope) or None


def _progress(done: int, total: int, label: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r[{done}/{total}] {label[:60]:<60}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _cmd_sweep(a: argparse.Namespace) -> int:
    from inspector.core.judgments import load_judgments
    from inspector.core.sweep import Case, cases_from_judgments, run_sweep
    from inspector.core.tuning_text import format_sweep

    store, query, params = _store_query_params(a, need_query=False)
    if a.queries:
        cases = cases_from_judgments(store, load_judgments(a.queries), params.mode, a.embedder)
    elif query is not None:
        grades = _grades(a.judgments, a.text, params.scope) or {}
        cases = [Case(a.text or query.source, query, None, tuple(sorted(grades.items())))]
    else:
        raise InspectorError("Give a query set (--queries FILE) or one query (--text ...).")
    result = run_sweep(store, cases, params, _grid(a), k=a.k, progress=_progress)
    data = result.to_json()
    if a.out:
        _write_json(a.out, data)
    if a.json:
        json.dump(data, sys.stdout, allow_nan=False, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(format_sweep(result))
    return 0


def _write_json(path: str, data: Any) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, allow_nan=False, ensure_ascii=False)
    except OSError as exc:
        raise InspectorError(f"Cannot write {path}: {exc.strerror}.") from None


def _against(a: argparse.Namespace, params: Any) -> tuple[str, Any] | None:
    from inspector.core.inputs import build_params

    if not a.against_preset and not a.against:
        return None
    changes: dict[str, Any] = {}
    for pair in a.against:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise InspectorError(f"--against takes KEY=VALUE, not {pair!r}.")
        try:
            changes[key.replace("-", "_")] = json.loads(raw)
        except ValueError:
            changes[key.replace("-", "_")] = raw
    try:
        if a.against_preset:
            other = build_params(preset=a.against_preset, limit=params.limit, scope=params.scope,
                                 **changes)
        else:
            other = params.with_(**changes)
    except TypeError as exc:
        raise InspectorError(f"--against names an unknown parameter ({exc}).") from None
    label = a.against_preset or ", ".join(a.against)
    return label, other


def _cmd_report(a: argparse.Namespace) -> int:
    from inspector.core.bundle import save
    from inspector.core.receipt import build_receipt

    store, query, params = _store_query_params(a, need_query=True)
    if a.pool_depth < 1:
        raise InspectorError("--pool-depth must be at least 1.")
    grades = _grades(a.judgments, a.text, params.scope)
    bundle = build_receipt(store, query, params, grades=grades, against=_against(a, params),
                           label=a.preset or "given", grid=_grid(a), pool_depth=a.pool_depth,
                           with_map=not a.no_map)
    paths = save(bundle, a.out, html=not a.no_html)
    t = bundle["trace"]
    print(f"[{t['diagnosis']['code']}] {t['diagnosis']['message']}")
    if bundle["metrics"]:
        print("metrics " + "  ".join(f"{k}={'-' if v is None else f'{v:.3f}'}"
                                     for k, v in bundle["metrics"].items()))
    for p in paths:
        print(f"wrote {p}")
    return 0


def _cmd_check(a: argparse.Namespace) -> int:
    from inspector.core.checks import format_results, load_checks, run_checks

    results = run_checks(load_checks(a.checks_file), a.store, a.table)
    if a.json:
        print(json.dumps([r.to_json() for r in results], allow_nan=False, ensure_ascii=False))
    else:
        print(format_results(results))
    return 0 if all(r.passed for r in results) else 1


# --- real stores: storage options, versions -----------------------------------------------


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


def _add_version_parsers(sub: Any) -> None:
    v = sub.add_parser("versions", help="a table's versions: number, time, row count")
    v.add_argument("store")
    v.add_argument("--table")
    v.add_argument("--json", action="store_true")
    add_store_options(v, as_of=False)
    dv = sub.add_parser("diff-versions", help="one query on two versions: what left, what came")
    dv.add_argument("store")
    add_query_options(dv, need_query=True)
    dv.add_argument("--from", dest="version_a", type=int, required=True, metavar="V",
                    help="the older version")
    dv.add_argument("--to", dest="version_b", type=int, metavar="V",
                    help="the newer version (default: the latest)")
    dv.add_argument("--stage", default="final", choices=("raw", "scoped", "blended", "final"))
    dv.add_argument("--who-pushed-out", metavar="ID",
                    help="walk the versions in between: the first write after which ID is gone")
    dv.add_argument("--json", action="store_true")


def _cmd_versions(a: argparse.Namespace) -> int:
    from inspector.core.versions import list_versions

    store = open_from_args(a)
    got = list_versions(store)
    if a.json:
        print(json.dumps({"uri": store.uri, "table": store.table_name,
                          "versions": [v.to_json() for v in got]}))
        return 0
    print(f"store {store.uri}  table {store.table_name}")
    for v in got:
        ts = v.timestamp.isoformat(sep=" ", timespec="seconds") if v.timestamp else "-"
        print(f"  v{v.version:<6} {ts:<20} {'-' if v.rows is None else v.rows:>9} rows")
    return 0


def _cmd_diff_versions(a: argparse.Namespace) -> int:
    from inspector.core import versions as v
    from inspector.core.inputs import build_query, parse_vector

    if a.vector is not None and a.vector_of is not None:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    params = params_from_args(a)
    store = open_from_args(a, version=a.version_a)
    vector = parse_vector(a.vector) if a.vector is not None else None
    query = build_query(store, params.mode, text=a.text, vector=vector, vector_of=a.vector_of,
                        embedder=a.embedder)
    diff = v.compare_versions(store, query, params, a.version_a, a.version_b, a.stage)
    push = None
    if a.who_pushed_out:
        lo, hi = sorted((diff.version_a, diff.version_b))
        span = [x.version for x in v.list_versions(store) if lo <= x.version <= hi]
        push = v.find_push_out(store, query, params, a.who_pushed_out, span, a.stage)
    if a.json:
        doc = diff.to_json()
        doc["push_out"] = push.to_json() if push else None
        json.dump(doc, sys.stdout, allow_nan=False, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(v.format_diff(diff, push))
    return 0
