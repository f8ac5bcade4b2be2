"""`inspector query` over a pipeline file (a pipeline preset or --pipeline FILE), and
`inspector pipeline list|show|schema`. Arguments become one Question; the engine answers it."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from inspector.cli.options import PARAM_KEYS, open_options
from inspector.core.errors import InspectorError

# classic options a pipeline expresses through its stages instead
_CLASSIC = [k for k in PARAM_KEYS if k not in ("limit", "scope")] + ["scope_map"]


def question_from_args(a: argparse.Namespace) -> Any:
    from pydantic import ValidationError

    from inspector.core.engine.flow.question import Question, parse_now
    from inspector.core.engine.flow.spec import parse_assignment
    from inspector.core.engine.inputs import parse_vector

    classic = [f"--{k.replace('_', '-')}" for k in _CLASSIC if getattr(a, k, None) is not None]
    if classic:
        raise InspectorError(f"{', '.join(classic)} set the fixed pipeline's parameters; a "
                             f"pipeline file takes --set STAGE.PARAM=VALUE (see `inspector "
                             f"pipeline show {a.preset or a.pipeline}`).")
    if a.scope and a.scope_list is not None:
        raise InspectorError("Give --scope (repeated) or --scope-list, not both.")
    scopes = list(a.scope) if a.scope else None
    if a.scope_list is not None:
        try:
            scopes = json.loads(a.scope_list)
        except ValueError:
            scopes = None
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise InspectorError("--scope-list takes a JSON array of scope names, e.g. "
                                 "'[\"global\", \"agent:main\"]' ([] denies everything).")
    if a.vector is not None and a.vector_of is not None:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    vector = [float(x) for x in parse_vector(a.vector)] if a.vector is not None else None
    sets = dict(parse_assignment(x) for x in a.set)
    if getattr(a, "where", None) is not None:
        if "where" in sets:
            raise InspectorError("Give --where or --set where=..., not both.")
        sets["where"] = a.where  # as given: SQL text, never read as JSON
    try:
        return Question(store=a.store, table=a.table, text=a.text, vector=vector,
                        vector_of=a.vector_of, embedder=a.embedder, preset=a.preset,
                        pipeline_file=a.pipeline, system_config=a.system_config, set=sets,
                        scopes=scopes, limit=a.limit,
                        now=parse_now(a.now) if a.now is not None else None,
                        expect=list(a.expect))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InspectorError(f"The question is not valid: {first['msg']}.") from None


def cmd_query(a: argparse.Namespace) -> int:
    from inspector.core.engine.flow.answer import format_text, to_json
    from inspector.core.engine.flow.question import ask, resolve
    from inspector.core.stores.opening import open_store

    q = question_from_args(a)
    resolve(q)  # a bad pipeline, config or --set is said before the store opens
    store = open_store(a.store, a.table, **open_options(a).kwargs())
    trace, expected = ask(q, store)
    if a.json:
        out = to_json(trace, expected)
        out["question"] = q.model_dump(mode="json", by_alias=True)
        json.dump(out, sys.stdout, allow_nan=False, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(format_text(trace, max_rows=a.rows))
        for e in expected:
            print(_expect_line(e))
    return 0


def _expect_line(e: dict[str, Any]) -> str:
    if e["reason"] == "returned":
        return f"expected {e['id']}: returned at rank {e['rank']}"
    head = f"expected {e['id']}: dropped at {e['dropped_at']} ({e['reason']})"
    fix = e.get("fix")
    if not fix:
        return head + "; " + e.get("no_fix", "no single change found")
    name = f"{fix['stage']}.{fix['param']}" if fix["stage"] else fix["param"]
    return (head + f"; smallest change: {name} {fix['from']} -> "
            f"{fix['to']} returns it at rank {fix['rank']}" +
            (f", gains {fix['gained']}" if fix["gained"] else "") +
            (f", loses {fix['lost']}" if fix["lost"] else "") +
            ("" if fix["live"] else " (needs a new search)"))


def add_parser(sub: Any) -> None:
    p = sub.add_parser("pipeline", help="pipeline files: list, show one, print JSON Schemas")
    ps = p.add_subparsers(dest="pipeline_command", required=True, parser_class=type(p))
    ps.add_parser("list", help="the shipped pipelines")
    show = ps.add_parser("show", help="a pipeline's routes, stages and every parameter")
    show.add_argument("name", help="a shipped pipeline's name, or a pipeline file")
    show.add_argument("--json", action="store_true")
    sch = ps.add_parser("schema", help="the JSON Schema of a question or a pipeline file")
    sch.add_argument("what", choices=("question", "pipeline"))
    ps.add_parser("stages", help="every registered stage kind and its parameters")


def cmd_pipeline(a: argparse.Namespace) -> int:
    from inspector.core.engine.flow import spec as flow_spec
    from inspector.core.engine.flow.registry import KINDS, kind_of

    if a.pipeline_command == "list":
        for name in flow_spec.shipped_names():
            s = flow_spec.load_shipped(name)
            print(f"{name:28} {s.title}")
        return 0
    if a.pipeline_command == "schema":
        from inspector.core.engine.flow.question import question_schema

        schema = question_schema() if a.what == "question" else \
            flow_spec.PipelineSpec.model_json_schema(by_alias=True)
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
    spec = flow_spec.load_shipped(name) if name in flow_spec.shipped_names() else \
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
                         ("path", spec.path), ("ties", spec.ties),
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
