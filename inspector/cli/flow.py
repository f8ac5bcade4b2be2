"""`inspector query` over any pipeline (a preset, --pipeline FILE, or LanceDB's own search
when none is named), and `inspector pipeline list|show|schema`. Arguments become one
Question; the engine answers it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from inspector.cli.options import PARAM_KEYS, open_options
from inspector.core.engine.flow.shipped import DEFAULT_PIPELINE
from inspector.core.errors import InspectorError
from inspector.core.jsonio import dumps

# the pipeline options of the command line: each sets the parameter of the stage that holds it
_OPTIONS = [k for k in PARAM_KEYS if k not in ("limit", "scope", "exact")] + ["scope_map"]


def pipeline_of(a: argparse.Namespace) -> tuple[str | None, str | None]:
    """(preset, pipeline file) the arguments name; LanceDB's own search when neither."""
    if a.preset is None and a.pipeline is None:
        return DEFAULT_PIPELINE, None
    return a.preset, a.pipeline


def scopes_from_args(a: argparse.Namespace) -> list[str] | None:
    """--scope (repeated) or --scope-list JSON; None: unscoped, []: deny everything."""
    if a.scope and a.scope_list is not None:
        raise InspectorError("Give --scope (repeated) or --scope-list, not both.")
    if a.scope_list is None:
        return list(a.scope) if a.scope else None
    try:
        scopes = json.loads(a.scope_list)
    except ValueError:
        scopes = None
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise InspectorError("--scope-list takes a JSON array of scope names, e.g. "
                             "'[\"global\", \"agent:main\"]' ([] denies everything).")
    return scopes


def _options_as_sets(a: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The pipeline options given (--overfetch, --blend, --rrf-k ...) as the --set assignments
    of the stages that hold them; an option no stage of this pipeline holds is refused."""
    from inspector.core.engine.flow.spec import held_options, load_file, load_shipped
    from inspector.core.engine.scope import load_scope_map

    given = {k: getattr(a, k) for k in _OPTIONS if getattr(a, k, None) is not None}
    if getattr(a, "scope_map", None):
        given["scope_map"] = load_scope_map(a.scope_map)
    if not given:
        return {}
    preset, file = pipeline_of(a)
    spec = load_shipped(preset) if preset else load_file(file)
    held = held_options(spec, given)
    missing = [f"--{k.replace('_', '-')}" for k in given if k not in held]
    if missing:
        raise InspectorError(f"{', '.join(missing)}: pipeline {spec.name} has no stage that "
                             f"takes {'it' if len(missing) == 1 else 'them'}; its parameters "
                             f"are set with --set STAGE.PARAM=VALUE (see `inspector pipeline "
                             f"show {preset or file}`).")
    return held


def widen_from_args(a: argparse.Namespace) -> dict[str, int]:
    """--widen STAGE=DEPTH (repeated): a what-if depth per stage."""
    out: dict[str, int] = {}
    for item in getattr(a, "widen", None) or []:
        stage, sep, depth = item.partition("=")
        try:
            n = int(depth)
        except ValueError:
            n = -1
        if not sep or not stage.strip() or not 1 <= n <= 10_000_000:
            raise InspectorError(f"--widen takes STAGE=DEPTH with a depth from 1 to "
                                 f"10,000,000, not {item!r}.")
        out[stage.strip()] = n
    return out


def question_from_args(a: argparse.Namespace, need_query: bool = True) -> Any:
    from inspector.core.engine.flow.question import make_question, parse_now
    from inspector.core.engine.flow.spec import parse_assignment
    from inspector.core.engine.inputs import parse_vector
    from inspector.core.stores.remote import parse_option_pairs
    from inspector.core.stores.safety.redact import redact_uri

    held = _options_as_sets(a)
    scopes = scopes_from_args(a)
    if a.vector is not None and a.vector_of is not None:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    vector = [float(x) for x in parse_vector(a.vector)] if a.vector is not None else None
    sets = {**{k: v for one in held.values() for k, v in one.items()},
            **dict(parse_assignment(x) for x in a.set)}
    if getattr(a, "where", None) is not None:
        if "where" in sets:
            raise InspectorError("Give --where or --set where=..., not both.")
        sets["where"] = a.where  # as given: SQL text, never read as JSON
    if need_query and not (a.text or vector or a.vector_of):
        raise InspectorError("Give a query: --text TEXT, --vector JSON or --vector-of ID.")
    preset, file = pipeline_of(a)
    return make_question(store=redact_uri(a.store), table=a.table, text=a.text, vector=vector,
                         vector_of=a.vector_of, embedder=a.embedder, preset=preset,
                         pipeline_file=file, system_config=a.system_config, set=sets,
                         widen=widen_from_args(a), exact=bool(getattr(a, "exact", None)),
                         columns=parse_option_pairs(getattr(a, "column", None) or [],
                                                    "--column", secret=False),
                         scopes=scopes, limit=a.limit,
                         now=parse_now(a.now) if a.now is not None else None,
                         expect=list(a.expect))


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


def cmd_sweep(a: argparse.Namespace) -> int:
    """`inspector sweep` over a pipeline of stages: --grid STAGE.PARAM=SPEC axes, one query
    (with --expect / --judgments) or a query set (--queries, texts embedded by the store's
    embedder or rows given by id)."""
    import time

    from inspector.core.analysis import flow_sweep
    from inspector.core.analysis.judgments import load_judgments
    from inspector.core.engine.flow.question import resolve
    from inspector.core.stores.opening import open_store

    q = question_from_args(a, need_query=not a.queries)
    spec, _, _ = resolve(q)
    axes = flow_sweep.parse_grid(spec, a.grid)
    store = open_store(a.store, a.table, **open_options(a).kwargs())
    now = q.now if q.now is not None else time.time() * 1000
    if a.queries:
        cases = []
        for item in load_judgments(a.queries).queries:
            grades = item.grade_map() or None
            vec = None if item.vector is None else list(item.vector)
            one = q.model_copy(update={"text": item.text, "vector": vec,
                                       "vector_of": item.vector_of, "expect": []})
            cases.append(flow_sweep.FlowCase(item.label, one, grades))
    else:
        grades = None
        if a.judgments:
            grades = load_judgments(a.judgments).grades_for(a.text or "", None) or None
        cases = [flow_sweep.FlowCase(a.text or a.vector_of or "query", q, grades)]
    result = flow_sweep.sweep(store, cases, axes, now, a.k)
    if a.out:
        from inspector.core.stores.safety.outputs import write_file

        write_file(a.out, dumps(result), [a.store], force=True)
    if a.json:
        print(dumps(result))
    else:
        print(flow_sweep.format_text(result))
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    """`inspector report` over a pipeline of stages: before (the question) and after
    (--against-preset, --against STAGE.PARAM=VALUE), verdict first."""
    from inspector.core.engine.flow.answer import to_json
    from inspector.core.engine.flow.question import ask, resolve
    from inspector.core.engine.flow.shipped import accepted_names
    from inspector.core.engine.flow.spec import parse_assignment
    from inspector.core.engine.presets import PRESETS
    from inspector.core.evidence import flow_receipt
    from inspector.core.stores.opening import open_store

    q = question_from_args(a)
    after_q = None
    if a.against_preset is not None:
        if a.against_preset in PRESETS or a.against_preset not in accepted_names():
            raise InspectorError(f"--against-preset {a.against_preset} is a fixed-pipeline "
                                 f"preset; a pipeline of stages is compared with another one.")
        after_q = q.model_copy(update={"preset": a.against_preset, "pipeline_file": None})
    if a.against:
        extra = dict(parse_assignment(x) for x in a.against)
        base = after_q or q
        after_q = base.model_copy(update={"set": {**base.set, **extra}})
    for each in (q, after_q):
        if each is not None:
            resolve(each)  # bad pipelines and assignments are said before the store opens
    store = open_store(a.store, a.table, **open_options(a).kwargs())
    before, _ = ask(q, store)
    label = q.preset or q.pipeline_file or "pipeline"
    if q.set:
        label += " with " + ", ".join(f"{k}={v}" for k, v in q.set.items())
    after = after_label = None
    if after_q is not None:
        after, _ = ask(after_q, store)
        after_label = after_q.preset or after_q.pipeline_file or "pipeline"
        if a.against:
            after_label += " with " + ", ".join(a.against)
    receipt = flow_receipt.build(q.model_dump(mode="json", by_alias=True), to_json(before),
                                 to_json(after) if after is not None else None, label,
                                 after_label)
    paths = flow_receipt.save(receipt, a.out, html=not a.no_html, stores=[a.store])
    v = receipt["verdict"]
    for side in ("before", "after"):
        if side in v:
            s = v[side]
            print(f"{side}: {s['label']}: {s['returned']} of {s['limit']} returned "
                  f"[{s['diagnosis']['code']}]")
    for p in paths:
        print(f"wrote {p}")
    return 0


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
        from inspector.core.evidence.schema import bundle_schema

        made = {"question": question_schema, "receipt": bundle_schema, "answer": answer_schema,
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
