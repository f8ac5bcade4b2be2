"""`inspector sweep|report|check`: tuning and evidence over the same engine as `query`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inspector.cli import flow as cli_flow
from inspector.cli.options import add_query_options, fixed_question, is_flow, open_from_args
from inspector.core.engine.flow.shipped import accepted_names
from inspector.core.engine.presets import PRESETS
from inspector.core.errors import InspectorError
from inspector.core.jsonio import dumps


def add_parsers(sub: Any) -> None:
    sw = sub.add_parser("sweep", help="over-fetch x blend (x min score) grid over a query set")
    sw.add_argument("store")
    add_query_options(sw)
    sw.add_argument("--queries", metavar="FILE",
                    help="query set / judgments file (JSON or CSV); else the one --text query")
    sw.add_argument("--judgments", metavar="FILE", help="grades for the single --text query")
    _add_grid_options(sw)
    sw.add_argument("--grid", action="append", default=[], metavar="STAGE.PARAM=SPEC",
                    help="pipelines of stages: an axis over one parameter (up to three)")
    sw.add_argument("--grid-nprobes", metavar="N,N,...",
                    help="indexed table: scoped recall against nprobes x over-fetch, measured "
                    "against the exact search (e.g. 5,10,20,40)")
    sw.add_argument("--json", action="store_true", help="one JSON object instead of text")
    sw.add_argument("--out", metavar="FILE", help="also write the JSON result to FILE")
    sw.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                    help="split the vector scan over a Ray cluster (a local one without "
                         "ADDRESS); needs the extra 'scale'")
    rp = sub.add_parser("report", help="write a receipt bundle (JSON + self-contained HTML)")
    rp.add_argument("store")
    add_query_options(rp)
    rp.add_argument("--out", required=True, metavar="PATH", help="writes PATH.json, PATH.html")
    rp.add_argument("--judgments", metavar="FILE", help="grades for this query (JSON or CSV)")
    rp.add_argument("--against-preset", choices=[*PRESETS, *(n for n in accepted_names()
                                                             if n not in PRESETS)],
                    help="compare side by side")
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


def _grid(a: argparse.Namespace, base: Any) -> Any:
    """The grid the options describe, each axis bounded and every cell's depth checked."""
    from inspector.core.analysis.sweep import Grid, parse_axis
    from inspector.core.engine.inputs import MAX_DEPTH, check_bounds

    ms = parse_axis(a.grid_min_score, "min score") if a.grid_min_score else None
    grid = Grid(parse_axis(a.grid_overfetch, "over-fetch"), parse_axis(a.grid_blend, "blend"), ms)
    for f in (min(grid.overfetch), max(grid.overfetch)):
        check_bounds(base.with_(overfetch=f))
    if max(grid.overfetch) > MAX_DEPTH:  # depths are computed as integers from each value
        raise InspectorError(f"--grid-overfetch {max(grid.overfetch):g} is above "
                             f"{MAX_DEPTH:,}; an over-fetch lies between 1 and {MAX_DEPTH:,}.")
    if a.k is not None and not 1 <= a.k <= 10_000:
        raise InspectorError(f"--k must be between 1 and 10000, not {a.k}.")
    return grid


def _question(a: argparse.Namespace) -> tuple[Any, Any]:
    """The question the options ask of the fixed pipeline and the base parameters it gives,
    checked before any store opens."""
    from inspector.core.engine.inputs import question_params

    q = fixed_question(a)
    return q, question_params(q)


def _store_query(a: argparse.Namespace, q: Any, params: Any, need_query: bool
                 ) -> tuple[Any, Any]:
    """The store the options name, and the query the question asks of it (None when no
    query input is given and none is needed: a query set)."""
    from inspector.core.engine.inputs import question_query

    store = open_from_args(a)
    if not need_query and q.text is None and q.vector is None and q.vector_of is None:
        return store, None
    return store, question_query(store, q, params.mode)


def _grades(path: str | None, text: str | None, scope: str | None) -> dict[str, float] | None:
    if not path:
        return None
    from inspector.core.analysis.judgments import load_judgments

    return load_judgments(path).grades_for(text or "", scope) or None


def warn_unknown_ids(store: Any, ids: Any, what: str = "judged") -> None:
    """One stderr line when ids in a judgments or checks file match no row of the store:
    metrics over them would silently be 0."""
    missing = store.missing_ids(ids)
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (", ..." if len(missing) > 5 else "")
        print(f"inspector: warning: {len(missing)} {what} id(s) match no row in table "
              f"'{store.table_name}': {shown}", file=sys.stderr)


def _progress(done: int, total: int, label: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r[{done}/{total}] {label[:60]:<60}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _cmd_sweep(a: argparse.Namespace) -> int:
    from inspector.core.analysis.judgments import load_judgments
    from inspector.core.analysis.sweep import Case, cases_from_judgments, run_sweep
    from inspector.core.analysis.tuning_text import format_sweep

    if a.out:
        check_out(a, a.out)
    if is_flow(a):
        return cli_flow.cmd_sweep(a)
    if a.grid:
        raise InspectorError("--grid STAGE.PARAM=SPEC sweeps a pipeline of stages; the fixed "
                             "pipeline's axes are --grid-overfetch, --grid-blend and "
                             "--grid-min-score.")
    q, params = _question(a)
    grid = _grid(a, params)  # checked before the store opens
    nprobes = _nprobes_axis(a.grid_nprobes, params) if a.grid_nprobes else None
    store, query = _store_query(a, q, params, need_query=False)
    if a.queries:
        cases = cases_from_judgments(store, load_judgments(a.queries), params.mode, q.embedder)
    elif query is not None:
        grades = _grades(a.judgments, q.text, params.scope) or {}
        cases = [Case(q.text or query.source, query, None, tuple(sorted(grades.items())))]
    else:
        raise InspectorError("Give a query set (--queries FILE) or one query (--text ...).")
    warn_unknown_ids(store, [rid for c in cases for rid, _ in c.grades])
    if nprobes is not None:
        return _nprobes_sweep(a, q, store, cases, params, grid, nprobes)
    result = run_sweep(store, cases, params, grid, k=a.k, progress=_progress,
                       scan=_scan_plan(a))
    return _emit(a, _with_question(result.to_json(), q), lambda: format_sweep(result))


def _with_question(data: dict[str, Any], q: Any) -> dict[str, Any]:
    """A sweep's JSON with the question it swept around (its base parameters and query)."""
    return {**data, "question": q.model_dump(mode="json", by_alias=True)}


def _emit(a: argparse.Namespace, data: Any, text: Any) -> int:
    """A tuning result: JSON to --out, then JSON or text (text() builds it) on stdout."""
    if a.out:
        write_out(a, data)
    if a.json:
        print(dumps(data))
    else:
        print(text())
    return 0


def _nprobes_axis(spec: str, base: Any) -> tuple[int, ...]:
    """The --grid-nprobes values, each within what LanceDB honours (checked as Params)."""
    from inspector.core.analysis.index_sweep import parse_nprobes

    values = parse_nprobes(spec)
    for n in values:
        base.with_(nprobes=n)
    return values


def _nprobes_sweep(a: argparse.Namespace, q: Any, store: Any, cases: Any, params: Any,
                   grid: Any, nprobes: tuple[int, ...]) -> int:
    """`sweep --grid-nprobes`: recall against nprobes x over-fetch on an indexed table."""
    from inspector.core.analysis.index_sweep import format_nprobes, nprobes_sweep

    result = nprobes_sweep(store, cases, params, grid, nprobes, a.k)
    return _emit(a, _with_question(result.to_json(), q), lambda: format_nprobes(result))


def _scan_plan(a: argparse.Namespace) -> Any:
    from inspector.core.engine.pools.batched import AUTO, ScanPlan

    return AUTO if a.ray is None else ScanPlan(mode="ray", ray_address=a.ray or None)


def write_out(a: argparse.Namespace, data: Any) -> None:
    """A sweep's JSON result to --out, by the guarded writer (an existing file replaced)."""
    from inspector.core.stores.safety.outputs import write_file

    write_file(a.out, dumps(data), [a.store], force=True)


def check_out(a: argparse.Namespace, *paths: Any) -> None:
    """The files --out will write, refused before anything runs: inside the store (by any of
    its names, links followed), a folder, or a device."""
    from inspector.core.stores.safety.outputs import check_target

    for p in paths:
        check_target(p, [a.store], force=True)


def _against(a: argparse.Namespace, params: Any) -> tuple[str, Any] | None:
    from inspector.core.engine.inputs import params_with_changes, parse_changes

    if not a.against_preset and not a.against:
        return None
    other = params_with_changes(params, a.against_preset, parse_changes(a.against))
    return a.against_preset or ", ".join(a.against), other


def _cmd_report(a: argparse.Namespace) -> int:
    from inspector.core.evidence.bundle import save
    from inspector.core.evidence.flow_receipt import receipt_paths
    from inspector.core.evidence.receipt import build_receipt

    check_out(a, *receipt_paths(a.out, not a.no_html))
    if is_flow(a):
        return cli_flow.cmd_report(a)
    if not 1 <= a.pool_depth <= 100_000:
        raise InspectorError("--pool-depth must be between 1 and 100000.")
    q, params = _question(a)
    grid = _grid(a, params)
    against = _against(a, params)
    store, query = _store_query(a, q, params, need_query=True)
    grades = _grades(a.judgments, q.text, params.scope)
    warn_unknown_ids(store, grades or {})
    bundle = build_receipt(store, query, params, grades=grades, against=against,
                           label=a.preset or "given", grid=grid, pool_depth=a.pool_depth,
                           with_map=not a.no_map, question=q)
    paths = save(bundle, a.out, html=not a.no_html, stores=[a.store])
    t = bundle["trace"]
    print(f"[{t['diagnosis']['code']}] {t['diagnosis']['message']}")
    if bundle["metrics"]:
        print("metrics " + "  ".join(f"{k}={'-' if v is None else f'{v:.3f}'}"
                                     for k, v in bundle["metrics"].items()))
    for p in paths:
        print(f"wrote {p}")
    return 0


def _cmd_check(a: argparse.Namespace) -> int:
    from inspector.core.evidence.checks import format_results, load_checks, run_checks

    results = run_checks(load_checks(a.checks_file), a.store, a.table)
    if a.json:
        print(dumps([r.to_json() for r in results]))
    else:
        print(format_results(results))
    return 0 if all(r.passed for r in results) else 1


HANDLERS = {"sweep": _cmd_sweep, "report": _cmd_report, "check": _cmd_check}
