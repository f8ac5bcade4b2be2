"""Assertions for CI: the checks a person runs in the window, guarding a real configuration.

A checks file (JSON) lists queries with parameters and assertions such as
"scopedCandidates > 0", "recall@5 >= 0.8", "scoped_recall@10 == 1", "diagnosis != scope_starvation",
"id X in top 3" or {"id": "X", "top": 3}; or a store-wide audit's assertions
({"audit": "recall", ..., "assert": ["no_never_recallable"]}, see `audit_checks`).
Malformed files raise InspectorError (exit 2); failed assertions are reported one per line
with the reason (exit 1).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.analysis.judgments import Judgments, load_judgments
from inspector.core.analysis.metrics import metric, parse_metric
from inspector.core.engine.params import Params, freeze_map
from inspector.core.engine.presets import PRESETS, former_note
from inspector.core.engine.scope import load_scope_map, parse_scope_map
from inspector.core.engine.trace import Trace
from inspector.core.errors import InspectorError
from inspector.core.evidence.audit_checks import parse_audit_check, run_audit_check
from inspector.core.jsonio import read_json

FORMAT = "inspector-checks"
COUNTERS = ("rawCandidates", "scopedCandidates", "filteredByScope", "belowMinScore", "returned")
OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
    ">": operator.gt, "<": operator.lt}
_CMP = re.compile(r"^\s*([A-Za-z_]+(?:@\d+)?)\s*(>=|<=|==|!=|>|<)\s*(\S+)\s*$")
_TOP = re.compile(r"^\s*id\s+(.+?)\s+(not\s+)?in\s+top\s+(\d+)\s*$", re.I)


@dataclass(frozen=True)
class Assertion:
    """kind: counter | metric | diagnosis | id. For id: target is the id, value is k."""

    text: str
    kind: str
    target: str
    op: str
    value: Any
    k: int | None = None


def parse_assertion(item: Any, where: str, default_k: int,
                    counters: tuple[str, ...] = COUNTERS) -> Assertion:
    """One assertion from its string or object form; a clear error otherwise."""
    if isinstance(item, dict) and "id" in item:
        top, neg = item.get("top"), item.get("not_in_top")
        k = top if top is not None else neg
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise InspectorError(f"{where}: an id assertion needs \"top\": K (a whole number).")
        op = "in" if top is not None else "not in"
        return Assertion(f"id {item['id']} {op} top {k}", "id", str(item["id"]), op, k)
    if not isinstance(item, str):
        raise InspectorError(f"{where}: an assertion must be a string or an id object.")
    m = _TOP.match(item)
    if m:
        return Assertion(item.strip(), "id", m.group(1).strip(), "not in" if m.group(2) else "in",
                         int(m.group(3)))
    m = _CMP.match(item)
    if not m:
        raise InspectorError(f"{where}: cannot read assertion {item!r}; write e.g. "
                             "'scopedCandidates > 0', 'recall@5 >= 0.8' or 'id X in top 3'.")
    lhs, op, rhs = m.groups()
    if lhs == "diagnosis":
        if op not in ("==", "!="):
            raise InspectorError(f"{where}: diagnosis can only be compared with == or !=.")
        return Assertion(item.strip(), "diagnosis", lhs, op, rhs)
    try:
        num = float(rhs)
    except ValueError:
        raise InspectorError(f"{where}: {rhs!r} in {item!r} is not a number.") from None
    if not math.isfinite(num):
        raise InspectorError(f"{where}: {item!r} compares with {rhs}, which is not a finite "
                             "number, so it could never be judged.")
    if lhs in counters:
        return Assertion(item.strip(), "counter", lhs, op, num)
    name, k = parse_metric(lhs, default_k)
    return Assertion(item.strip(), "metric", name, op, num, k)


@dataclass(frozen=True)
class CheckSpec:
    """One query under one parameter set, and what must hold for it."""

    name: str
    text: str | None
    params: Params
    asserts: tuple[Assertion, ...]
    vector_of: str | None = None
    embedder: str | None = None
    grades: dict[str, float] | None = field(default=None, compare=False)
    question: Any = None  # a flow Question: the check runs a pipeline of stages
    audit: Any = None  # an audit_checks.AuditCheck: the check runs a store-wide audit


@dataclass(frozen=True)
class ChecksFile:
    store: str | None
    table: str | None
    checks: tuple[CheckSpec, ...]


def _params(entry: dict[str, Any], defaults: dict[str, Any], base: Path, where: str) -> Params:
    from inspector.core.engine.inputs import build_params

    params = entry.get("params", {})
    if not isinstance(params, dict):
        raise InspectorError(f"{where}: \"params\" must be an object of parameters, e.g. "
                             '{"overfetch": 3}.')
    given = {**{k: v for k, v in defaults.items() if k != "preset"}, **params}
    for key in ("scope",):
        if key in entry:
            given[key] = entry[key]
    if isinstance(given.get("scope_map"), str):
        given["scope_map"] = freeze_map(load_scope_map(base / given["scope_map"]))
    elif given.get("scope_map") is not None:
        given["scope_map"] = freeze_map(parse_scope_map(given["scope_map"], f"{where}: scope_map"))
    preset = entry.get("preset", defaults.get("preset"))
    if preset is not None and (not isinstance(preset, str) or preset not in PRESETS):
        raise InspectorError(f"{where}: unknown preset {preset!r}; presets: "
                             f"{', '.join(PRESETS)}.{former_note(preset)}")
    try:
        return build_params(preset=preset, **given)
    except TypeError as exc:
        raise InspectorError(f"{where}: unknown parameter ({exc}).") from None
    except InspectorError as exc:
        raise InspectorError(f"{where}: {exc}") from None


def _grades(entry: dict[str, Any], judged: Judgments | None, p: Params,
            where: str) -> dict[str, float] | None:
    inline = entry.get("relevant")
    if inline is not None:
        j = Judgments.from_json([{"query": entry.get("text") or "?", "judgments": inline}], where)
        return j.queries[0].grade_map()
    if judged is not None and entry.get("text"):
        got = judged.grades_for(entry["text"], p.scope)
        return got or None
    return None


_TEXT_FIELDS = ("name", "text", "vector_of", "embedder", "preset", "scope")


def _check_strings(obj: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    """Fields that must be text when present (a number where text belongs is bad input)."""
    for key in keys:
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise InspectorError(f"{where}: \"{key}\" must be text, not {obj[key]!r:.40}.")


def parse_checks(data: Any, base: Path, source: str) -> ChecksFile:
    """Validate a whole checks document before anything runs."""
    if not isinstance(data, dict) or not isinstance(data.get("checks"), list):
        raise InspectorError(f"{source} must be a JSON object with a \"checks\" list.")
    _check_strings(data, ("store", "table", "judgments"), source)
    judged = load_judgments(base / data["judgments"]) if data.get("judgments") else None
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise InspectorError(f"{source}: \"defaults\" must be an object of parameters.")
    specs = []
    for n, entry in enumerate(data["checks"], 1):
        where = f"{source}, check {n}"
        if not isinstance(entry, dict):
            raise InspectorError(f"{where}: each check must be an object.")
        _check_strings(entry, _TEXT_FIELDS, where)
        if "question" in entry:
            specs.append(_question_check(entry, n, where))
            continue
        if "audit" in entry:
            a = parse_audit_check(entry, where)
            specs.append(CheckSpec(name=str(entry.get("name") or f"check {n}"), text=None,
                                   params=Params(), asserts=(), audit=a))
            continue
        if not entry.get("text") and not entry.get("vector_of"):
            raise InspectorError(f"{where}: give the query as \"text\" or \"vector_of\".")
        p = _params(entry, defaults, base, where)
        raw = entry.get("assert", [])
        if not isinstance(raw, list) or not raw:
            raise InspectorError(f"{where}: \"assert\" must be a non-empty list.")
        asserts = tuple(parse_assertion(a, where, p.limit) for a in raw)
        grades = _grades(entry, judged, p, where)
        for a in asserts:
            if a.kind == "metric" and a.target != "scoped_recall" and not grades:
                raise InspectorError(f"{where}: '{a.text}' needs judgments for this query "
                                     "(\"relevant\" or a judgments file).")
        specs.append(CheckSpec(name=str(entry.get("name") or f"check {n}"),
                               text=entry.get("text"), params=p, asserts=asserts,
                               vector_of=entry.get("vector_of"), embedder=entry.get("embedder"),
                               grades=grades))
    store = data.get("store")
    if store and not str(store).startswith(("s3://", "gs://", "az://", "db://")):
        store = str((base / store).resolve()) if not Path(store).is_absolute() else store
    return ChecksFile(store=store, table=data.get("table"), checks=tuple(specs))


def _question_check(entry: dict[str, Any], n: int, where: str) -> CheckSpec:
    """A check over a pipeline of stages: `"question"` is the question model's JSON (its
    store comes from the checks file or --store); counters name the pipeline's stages."""
    from pydantic import ValidationError

    from inspector.core.engine.flow.question import Question, resolve

    raw = entry["question"]
    if not isinstance(raw, dict):
        raise InspectorError(f"{where}: \"question\" must be an object (see `inspector "
                             f"pipeline schema question`).")
    try:
        q = Question.model_validate({"store": "-", **raw})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise InspectorError(f"{where}: question {loc}: {first['msg']}.") from None
    spec, _, _ = resolve(q)
    counters = (*spec.stage_names(), "returned")
    raw_asserts = entry.get("assert", [])
    if not isinstance(raw_asserts, list) or not raw_asserts:
        raise InspectorError(f"{where}: \"assert\" must be a non-empty list.")
    asserts = tuple(parse_assertion(a, where, q.limit or spec.limit.default, counters)
                    for a in raw_asserts)
    bad = [a.text for a in asserts if a.kind == "metric"]
    if bad:
        raise InspectorError(f"{where}: '{bad[0]}' is not a check a pipeline of stages takes "
                             f"here; assert stage counts ({', '.join(counters)}), diagnosis "
                             f"or 'id X in top K'.")
    return CheckSpec(name=str(entry.get("name") or f"check {n}"), text=q.text,
                     params=Params(), asserts=asserts, question=q)


def _run_question(c: CheckSpec, store: Any, uri: str) -> CheckResult:
    from inspector.core.engine.flow.diagnosis import diagnose
    from inspector.core.engine.flow.expect import where_dropped
    from inspector.core.engine.flow.question import ask

    trace, _ = ask(c.question.model_copy(update={"store": uri}), store)
    ids = trace.final.ids
    counts = {**{st.name: len(st.rows) for st in trace.stages}, "returned": len(ids)}
    d = diagnose(trace).to_json()
    outs = []
    for a in c.asserts:
        if a.kind == "id":
            rank = ids.index(a.target) + 1 if a.target in ids else None
            inside = rank is not None and rank <= a.value
            ok = inside if a.op == "in" else not inside
            fall = where_dropped(trace, a.target)
            why = "" if ok else (f"returned at rank {rank}" if rank else
                                 f"not returned: dropped at {fall.stage} ({fall.code})")
            outs.append(Outcome(a.text, ok, rank, why))
        elif a.kind == "diagnosis":
            ok = OPS[a.op](d["code"], a.value)
            outs.append(Outcome(a.text, ok, d["code"], "" if ok else d["message"]))
        else:
            got = counts[a.target]
            ok = OPS[a.op](got, a.value)
            outs.append(Outcome(a.text, ok, got, "" if ok else f"got {got}; {d['message']}"))
    return CheckResult(c.name, all(o.passed for o in outs), tuple(outs), d["code"],
                       tuple(trace.warnings) + tuple(f"not exact: {x}" for x in trace.inexact))


def load_checks(path: str | Path) -> ChecksFile:
    p = Path(path)
    return parse_checks(read_json(p, "Checks file"), p.resolve().parent, str(p))


@dataclass(frozen=True)
class Outcome:
    assertion: str
    passed: bool
    actual: Any
    why: str = ""


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    outcomes: tuple[Outcome, ...]
    diagnosis: str
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "diagnosis": self.diagnosis,
                "warnings": list(self.warnings),
                "assertions": [{"assert": o.assertion, "passed": o.passed, "actual": o.actual,
                                "why": o.why} for o in self.outcomes]}


def evaluate(a: Assertion, trace: Trace, grades: dict[str, float] | None,
             truth: list[Any] | None, explain: Callable[[str], str]) -> Outcome:
    """Judge one assertion against a trace; failures carry a one-line reason."""
    ids = trace.ids("final")
    if a.kind == "id":
        rank = next((r for r, x in enumerate(ids, 1) if str(x) == a.target), None)
        inside = rank is not None and rank <= a.value
        ok = inside if a.op == "in" else not inside
        why = "" if ok else (f"returned at rank {rank}" if rank else explain(a.target))
        return Outcome(a.text, ok, rank, why)
    if a.kind == "diagnosis":
        got = trace.diagnosis.code
        ok = OPS[a.op](got, a.value)
        return Outcome(a.text, ok, got, "" if ok else trace.diagnosis.message)
    if a.kind == "counter":
        got = trace.counters[a.target]
    else:
        got = metric(a.target, ids, a.k or trace.params.limit, grades, truth)
    if got is None:
        return Outcome(a.text, False, None, "undefined: nothing relevant to measure against")
    ok = OPS[a.op](got, a.value)
    return Outcome(a.text, ok, got, "" if ok else f"got {got:g}; {trace.diagnosis.message}")


def run_checks(checks: ChecksFile, store_uri: str | None = None,
               table: str | None = None) -> list[CheckResult]:
    """Run every check against the store (the argument wins over the file's)."""
    from inspector.core.analysis.truth import truth_ids
    from inspector.core.engine.expect import analyse
    from inspector.core.engine.inputs import build_query
    from inspector.core.engine.pipeline import run
    from inspector.core.engine.pools import exhaustive_pool
    from inspector.core.stores.opening import open_store

    uri = store_uri or checks.store
    if not uri:
        raise InspectorError("No store to check: give --store or a \"store\" in the checks file.")
    store = open_store(uri, table or checks.table)
    results = []
    for c in checks.checks:
        if c.question is not None:
            results.append(_run_question(c, store, uri))
            continue
        if c.audit is not None:
            outs = tuple(Outcome(*o) for o in run_audit_check(c.audit, store, uri))
            results.append(CheckResult(c.name, all(o.passed for o in outs), outs, "audit"))
            continue
        q = build_query(store, c.params.mode, text=c.text, vector_of=c.vector_of,
                        embedder=c.embedder)
        trace = run(store, q, c.params)
        truth = None
        if any(a.kind == "metric" and a.target == "scoped_recall" for a in c.asserts):
            truth = truth_ids(exhaustive_pool(store, q, c.params), c.params)

        def explain(rid: str, q: Any = q, trace: Trace = trace) -> str:
            e = analyse(store, q, trace, [rid])[0]
            depth = f"; min depth {e.min_depth} (over-fetch {e.min_overfetch:g})" \
                if e.min_depth else ""
            return f"not returned: {e.reason}{depth}"

        named = [a.target for a in c.asserts if a.kind == "id"]
        missing = set(store.missing_ids([*named, *(c.grades or {})]))
        outs = tuple(Outcome(a.text, False, None, f"no row with id {a.target!r} in table "
                             f"'{store.table_name}'")
                     if a.kind == "id" and a.target in missing
                     else evaluate(a, trace, c.grades, truth, explain) for a in c.asserts)
        warnings = tuple(f"judged id {rid!r} matches no row in table '{store.table_name}'"
                         for rid in sorted(set(c.grades or {}) & missing))
        results.append(CheckResult(c.name, all(o.passed for o in outs), outs,
                                   trace.diagnosis.code, warnings))
    return results


def format_results(results: list[CheckResult]) -> str:
    lines = []
    for r in results:
        lines.append(f"{'PASS' if r.passed else 'FAIL'}  {r.name}")
        for o in r.outcomes:
            if not o.passed:
                lines.append(f"      {o.assertion}: {o.why}")
        lines.extend(f"      warning: {w}" for w in r.warnings)
    failed = sum(1 for r in results if not r.passed)
    lines.append(f"{len(results)} checks, {failed} failed")
    return "\n".join(lines)
