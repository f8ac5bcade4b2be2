"""`inspector query` over any pipeline (a preset, --pipeline FILE, or LanceDB's own search
when none is named), and `inspector pipeline list|show|schema`. Arguments become one
Question (`cli.options.question_from_args`); the engine answers it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from inspector.cli.options import (  # noqa: F401  (scopes_from_args: named here too)
    open_options,
    question_from_args,
    scopes_from_args,
)
from inspector.core.jsonio import dumps


def flow_answer(a: argparse.Namespace, store: Any = None) -> tuple[Any, Any]:
    """The question the arguments ask and the engine's answer (diagnosis with its fixes, the
    expected rows, the index facet); `store`: an already open store (a query set asks it
    many times)."""
    from inspector.core.engine.flow.question import answer, resolve
    from inspector.core.stores.opening import open_store

    q = question_from_args(a)
    resolve(q)  # a bad pipeline, config or --set is said before the store opens
    if store is None:
        store = open_store(a.store, a.table, **open_options(a).kwargs())
    got = answer(q, store, fixes=getattr(a, "fixes", "on") != "off",
                 facet_mode=getattr(a, "index_facet", None) or "auto")
    return q, got


def answer_json(q: Any, got: Any) -> dict[str, Any]:
    """What `inspector query --json` prints: the one answer, and the question it answers."""
    from inspector.core.engine.flow.answer import to_json

    out = json.loads(dumps(to_json(got)))
    out["question"] = q.model_dump(mode="json", by_alias=True)
    return out


def print_answer(a: argparse.Namespace, out: dict[str, Any], got: Any) -> None:
    from inspector.core.engine.flow.answer import format_text

    if a.json:
        print(dumps(out))
    else:
        print(format_text(got, max_rows=a.rows))
        for e in got.expected:
            print(_expect_line(e))


def _expect_line(e: dict[str, Any]) -> str:
    if e["reason"] == "returned":
        return f"expected {e['id']}: returned at rank {e['rank']}"
    head = f"expected {e['id']}: dropped at {e['dropped_at']} ({e['reason']})"
    fix = e.get("fix")
    if not fix:
        return head + "; " + e.get("no_fix", "no single change found")
    what = " ".join(fix["argv"])
    kind = "what-if" if fix["kind"] == "what_if" else "smallest change"
    return (head + f"; {kind}: {what} returns it at rank {fix['rank']}" +
            (f", gains {fix['gained']}" if fix["gained"] else "") +
            (f", loses {fix['lost']}" if fix["lost"] else ""))


def add_parser(sub: Any) -> None:
    p = sub.add_parser("pipeline", help="pipeline files: list, show one, print JSON Schemas")
    ps = p.add_subparsers(dest="pipeline_command", required=True, parser_class=type(p))
    ls = ps.add_parser("list", help="the shipped pipelines")
    ls.add_argument("--json", action="store_true", help="each pipeline's name, title, "
                    "system, version, entry point and what it was checked against")
    show = ps.add_parser("show", help="a pipeline's routes, stages and every parameter")
    show.add_argument("name", help="a shipped pipeline's name, or a pipeline file")
    show.add_argument("--json", action="store_true")
    sch = ps.add_parser("schema", help="the JSON Schema of a question, a pipeline file, a "
                        "receipt, an answer (query --json), or a judgments, checks or "
                        "scope-map file")
    sch.add_argument("what", choices=("question", "pipeline", "receipt", "answer", "judgments",
                                      "checks", "scope-map"))
    ps.add_parser("stages", help="every registered stage kind and its parameters")


def cmd_pipeline(a: argparse.Namespace) -> int:
    from inspector.core.engine.flow import spec as flow_spec
    from inspector.core.engine.flow.registry import KINDS, kind_of
    from inspector.core.engine.flow.shipped import ALIASES, accepted_names

    if a.pipeline_command == "list" and a.json:
        out = []
        for name in flow_spec.shipped_names():
            s = flow_spec.load_shipped(name)
            out.append({"name": name, "title": s.title, "system": s.system,
                        "version": s.version, "entry_point": s.entry_point,
                        "checked_against": s.checked_against, "engine": s.engine})
        out += [{"name": old, "alias_of": new} for old, new in ALIASES.items()]
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0
    if a.pipeline_command == "list":
        for name in flow_spec.shipped_names():
            s = flow_spec.load_shipped(name)
            print(f"{name:28} {s.title}")
        for old, new in ALIASES.items():
            print(f"{old:28} the former name of {new} (an alias)")
        return 0
    if a.pipeline_command == "schema":
        from inspector.core.engine.flow.question import question_schema
        from inspector.core.evidence.answer_schema import answer_schema
        from inspector.core.evidence.file_schemas import SCHEMAS
        from inspector.core.evidence.schema import receipt_schema

        made = {"question": question_schema, "receipt": receipt_schema, "answer": answer_schema,
                "pipeline": lambda: flow_spec.PipelineSpec.model_json_schema(by_alias=True)}
        schema = made.get(a.what, SCHEMAS.get(a.what, dict))()
        print(json.dumps(schema, indent=1))
        return 0
    if a.pipeline_command == "stages":
        for k in sorted(KINDS):
            kind = KINDS[k]
            print(f"{k} ({kind.role}): {kind.doc}")
            for p in kind.params:
                print(f"    {p.name} = {json.dumps(_plain(p.default), ensure_ascii=False)}"
                      f"  [{p.type}{'' if p.live else ', new search'}] {p.doc}"[:160])
        return 0
    name = a.name
    spec = flow_spec.load_shipped(name) if name in accepted_names() else \
        flow_spec.load_file(name)
    if a.json:
        out = spec.to_json()
        for route in out["routes"]:
            for st in route["stages"]:
                kind = kind_of(st["kind"])
                st["role"] = kind.role
                st["effective"] = {k: _plain(v) for k, v in
                                   kind.resolve(st["params"], st["name"]).items()}
                st["declared"] = [p.to_json() for p in kind.params]
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0
    print(_show(spec))
    return 0


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def _show(spec: Any) -> str:
    from inspector.core.engine.flow.registry import kind_of

    lines = [f"{spec.name}: {spec.title}"]
    for label, value in (("system", spec.system), ("version", spec.version),
                         ("entry point", spec.entry_point),
                         ("checked against", spec.checked_against), ("path", spec.path),
                         ("ties", spec.ties),
                         ("not reproduced", "; ".join(spec.not_reproduced))):
        if value:
            lines.append(f"  {label}: {value}")
    lines.append(f"  limit: default {spec.limit.default}, clamped to "
                 f"{spec.limit.min}..{spec.limit.max}")
    lines.append("  settings: " + ", ".join(f"{k}={json.dumps(_plain(v))}"
                                           for k, v in spec.settings.items()))
    for route in spec.routes:
        lines.append(f"\nroute {route.name} (when {' or '.join(route.when)}):")
        for i, st in enumerate(route.stages, start=1):
            kind = kind_of(st.kind)
            eff = kind.resolve(st.params, st.name)
            lines.append(f"  {i:>2}. {st.name} [{st.kind}, {kind.role}] {kind.doc}")
            for p in kind.params:
                v = eff[p.name]
                shown = f"{len(v)} entries" if isinstance(v, dict) else json.dumps(_plain(v))
                mark = "" if p.name not in st.params else " (set)"
                lines.append(f"        {p.name} = {shown}{mark}")
    if spec.system_config:
        lines.append(f"\n--system-config reads: {spec.system_config.format}")
    return "\n".join(lines)
