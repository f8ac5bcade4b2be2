"""`inspector sweep|report|check`: tuning and evidence over any pipeline, on the one engine
that answers `inspector query`: the same options ask the same question (`cli.flow`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inspector.cli import flow as cli_flow
from inspector.cli.options import add_query_options, open_options
from inspector.core.engine.flow.shipped import accepted_names
from inspector.core.errors import InspectorError
from inspector.core.jsonio import dumps


def add_parsers(sub: Any) -> None:
    sw = sub.add_parser("sweep", help="a grid of stage parameters over one query or a query "
                                      "set: recall, nDCG and the safe depth per cell")
    sw.add_argument("store")
    add_query_options(sw)
    sw.add_argument("--queries", metavar="FILE",
                    help="query set / judgments file (JSON or CSV); else the one --text query")
    sw.add_argument("--judgments", metavar="FILE", help="grades for the single --text query")
    _add_grid_options(sw)
    sw.add_argument("--json", action="store_true", help="one JSON object instead of text")
    sw.add_argument("--out", metavar="FILE", help="also write the JSON result to FILE")
    sw.add_argument("--jobs", type=_jobs, metavar="N",
                    help="processes sharing a query set's queries, this one included, each "
                         "opening the table read-only at the same version; the same answers "
                         "(default: one per processor when each gets 32 queries or more; 1: "
                         "this process alone)")
    rp = sub.add_parser("report", help="write a receipt (JSON + self-contained HTML): the "
                                       "verdict, the fixes, the evidence")
    rp.add_argument("store")
    add_query_options(rp)
    rp.add_argument("--out", required=True, metavar="PATH", help="writes PATH.json, PATH.html")
    rp.add_argument("--judgments", metavar="FILE", help="grades for this query (JSON or CSV)")
    rp.add_argument("--against-preset", choices=accepted_names(), metavar="PRESET",
                    help="compare side by side with another pipeline (same query, scopes, "
                         "limit)")
    rp.add_argument("--against", action="append", default=[], metavar="KEY=VALUE",
                    help="compare with these changes: STAGE.PARAM=VALUE, a query option "
                         "(overfetch=3, filter=pushdown, blend=0.3), limit=N or scope=S")
    rp.add_argument("--no-map", action="store_true", help="skip the PCA map (no vector lookup)")
    rp.add_argument("--no-sweep", action="store_true", help="skip the one-query sweep")
    rp.add_argument("--no-html", action="store_true")
    _add_grid_options(rp)
    ck = sub.add_parser("check", help="run a checks file; exit 1 when an assertion fails")
    ck.add_argument("checks_file")
    ck.add_argument("--store", help="store to check (default: the file's \"store\")")
    ck.add_argument("--table")
    ck.add_argument("--json", action="store_true")


def _add_grid_options(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("grid (default: a depth-like by a weight-like parameter, from "
                              "the stages' declarations; SPEC is 'a,b,c' or "
                              "'start:stop:step', inclusive)")
    g.add_argument("--grid", action="append", default=[], metavar="STAGE.PARAM=SPEC",
                   help="an axis over one stage parameter (up to three)")
    g.add_argument("--grid-overfetch", metavar="SPEC", help="an axis over the over-fetch")
    g.add_argument("--grid-blend", metavar="SPEC", help="an axis over the blend weight")
    g.add_argument("--grid-min-score", metavar="SPEC", help="an axis over the min score")
    g.add_argument("--grid-nprobes", metavar="SPEC", help="an axis over nprobes (IVF index)")
    g.add_argument("--grid-index", action="store_true",
                   help="indexed table: the index knobs its vector legs pass (nprobes or ef, "
                        "by refine factor), recall measured against the exact search")
    g.add_argument("--k", type=int, help="metric cut-off (default: the limit)")


def _axes(a: argparse.Namespace, spec: Any, store: Any = None) -> list[Any]:
    """The grid the options describe (checked against the pipeline's declarations)."""
    from inspector.core.analysis import grid

    if a.k is not None and not 1 <= a.k <= 10_000:
        raise InspectorError(f"--k must be between 1 and 10000, not {a.k}.")
    given = {k: getattr(a, k) for k in grid.GRID_OPTIONS if getattr(a, k, None)}
    for arg, text in given.items():  # a bad value is said with the option the user typed
        try:
            grid.parse_grid(spec, grid.option_items(spec, {arg: text}))
        except InspectorError as exc:
            flag = "--" + arg.replace("_", "-")
            said = str(exc)
            raise InspectorError(said if said.startswith(flag) else
                                 f"{flag} {text}: {said[0].lower()}{said[1:]}") from None
    items = [*a.grid, *grid.option_items(spec, given)]
    if items and a.grid_index:
        raise InspectorError("--grid-index takes the index knobs' own grid; give it or grid "
                             "axes, not both.")
    if items:
        axes = grid.parse_grid(spec, items)
    elif a.grid_index:
        if store is None:
            return []  # said once the store (and its index) is open
        from inspector.core.analysis.index_sweep import index_axes

        axes = index_axes(spec, getattr(store, "vector_index", None))
    else:
        axes = grid.default_axes(spec)
    grid.check_size(axes)
    return axes


def _open(a: argparse.Namespace) -> Any:
    from inspector.core.stores.opening import open_store

    return open_store(a.store, a.table, **open_options(a).kwargs())


def _grades(path: str | None, text: str | None, scopes: list[str] | None
            ) -> dict[str, float] | None:
    if not path:
        return None
    from inspector.core.analysis.judgments import load_judgments

    scope = scopes[0] if scopes else None
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


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes (0: "
                                          f"automatic), got {text!r}")
    return n


def _cmd_sweep(a: argparse.Namespace) -> int:
    from inspector.core.analysis.judgments import load_judgments
    from inspector.core.analysis.sweep import Case, cases_from_judgments, run_sweep
    from inspector.core.analysis.sweep_jobs import processes
    from inspector.core.analysis.tuning_text import format_sweep
    from inspector.core.engine.flow.question import resolve

    if a.out:
        check_out(a, a.out)
    q = cli_flow.question_from_args(a, need_query=not a.queries)
    spec, _, _ = resolve(q)
    _axes(a, spec)  # a bad grid is said before the store opens
    store = _open(a)
    axes = _axes(a, spec, store)
    if a.queries:
        cases = cases_from_judgments(q, load_judgments(a.queries), store)
    else:
        grades = _grades(a.judgments, q.text, q.scopes) or {}
        cases = [Case(q.text or q.vector_of or "query", q, tuple(sorted(grades.items())))]
    warn_unknown_ids(store, [rid for c in cases for rid, _ in c.grades])
    why = processes(store, len(cases), a.jobs)[1]
    if why:
        print(f"inspector: --jobs {a.jobs}: {why}", file=sys.stderr)
    result = run_sweep(store, q, cases, axes, k=a.k, progress=_progress, jobs=a.jobs)
    data = result.to_json()
    if a.out:
        write_out(a, data)
    print(dumps(data) if a.json else format_sweep(result))
    return 0


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


def _against(a: argparse.Namespace, q: Any) -> Any:
    """The question the other side asks: another preset (the same query, scopes, limit and
    clock), and/or the changes of --against on top."""
    from inspector.core.analysis.compare import other_side

    if a.against_preset is None and not a.against:
        return None
    return other_side(q, a.against_preset, a.against)


def _cmd_report(a: argparse.Namespace) -> int:
    from inspector.core.engine.flow.question import resolve
    from inspector.core.evidence.receipt import build_receipt, label_of, receipt_paths, save

    check_out(a, *receipt_paths(a.out, not a.no_html))

    q = cli_flow.question_from_args(a)
    spec, _, _ = resolve(q)
    other = _against(a, q)
    if other is not None:
        resolve(other)  # a bad preset or assignment is said before the store opens
    _axes(a, spec)
    store = _open(a)
    axes = _axes(a, spec, store)
    grades = _grades(a.judgments, q.text, q.scopes)
    warn_unknown_ids(store, grades or {})
    labels = (label_of(q), None if other is None else (
        a.against_preset or label_of(q)) + (f" with {', '.join(a.against)}"
                                            if a.against else ""))
    receipt = build_receipt(store, q, other, labels, grades, axes, a.k,
                            with_map=not a.no_map, with_sweep=not a.no_sweep)
    paths = save(receipt, a.out, html=not a.no_html, stores=[a.store])
    print(_verdict_text(receipt))
    for p in paths:
        print(f"wrote {p}")
    return 0


def _verdict_text(r: dict[str, Any]) -> str:
    """The receipt's first screen for a terminal: each side's rows, diagnosis and fixes,
    then the safe depth and the metrics."""
    lines = []
    for role in ("before", "after"):
        s = r["verdict"].get(role)
        if s is None:
            continue
        lines.append(f"{role}: {s['label']}: {s['returned']} of {s['limit']} returned "
                     f"[{s['code']}] {s['message']}")
        lines += [f"  fix: {f['label']}    [{' '.join(f['argv'])}]" for f in s["fixes"]]
    safe = r["evidence"].get("safe")
    if safe:
        from inspector.core.analysis.safe import safe_words

        lines.append(f"safe depth: {safe_words(safe)}")
    for role in ("before", "after"):
        ev = r["evidence"].get(role)
        if ev and ev["metrics"]:
            lines.append(f"metrics ({role}) " + "  ".join(
                f"{k}={'-' if v is None else f'{v:.3f}'}" for k, v in ev["metrics"].items()))
    return "\n".join(lines)


def _cmd_check(a: argparse.Namespace) -> int:
    from inspector.core.evidence.checks import format_results, load_checks, run_checks

    results = run_checks(load_checks(a.checks_file), a.store, a.table)
    if a.json:
        print(dumps([r.to_json() for r in results]))
    else:
        print(format_results(results))
    return 0 if all(r.passed for r in results) else 1


HANDLERS = {"sweep": _cmd_sweep, "report": _cmd_report, "check": _cmd_check}
