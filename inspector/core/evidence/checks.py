"""Assertions for CI over any pipeline: the checks a person runs in the window, guarding a real
configuration.

A checks file (JSON) lists questions and what must hold for each. A check holds the question
model itself (`"question"`, the JSON of `inspector pipeline schema question` without its
store, which comes from the file or --store), or its short form: `text` or `vector_of`,
`preset` (default: LanceDB's own search), `scope`, `limit`, `params` (the options of
`inspector query` by name, e.g. {"overfetch": 3, "filter": "pushdown"}, set on the stage that
holds each) and `set` ({"STAGE.PARAM": value}); `defaults` fill the short form. Or a
store-wide audit's assertions (`{"audit": "recall", ..., "assert": [...]}`, see
`audit_checks`).

Assertions: a counter (each stage's name: its row count; `returned`; a number a stage
reports, e.g. `rawCandidates`, `scopedCandidates`, `filteredByScope`; rows dropped for a
reason, e.g. `belowMinScore`, `outOfScope`) or a metric (`scoped_recall@K` against the
question's truth, and with judgments `recall@K`, `precision@K`, `mrr`, `ndcg@K`) compared with
`> >= < <= == !=`; `diagnosis == CODE`; `id X in top K` / `id X not in top K` (or
{"id": X, "top": K} / {"id": X, "not_in_top": K}). A failed id assertion says where the row
was dropped and the smallest change that returns it (`flow.expect`: each change was run).
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
from inspector.core.engine.flow.insight.diagnosis import TITLES
from inspector.core.engine.flow.rows import DROP_LABELS
from inspector.core.errors import InspectorError
from inspector.core.evidence.audit_checks import parse_audit_check, run_audit_check
from inspector.core.jsonio import read_json

FORMAT = "inspector-checks"
DEFAULT_PRESET = "lancedb"  # the short form's pipeline when none is named, as `query`'s
# numbers the classic pipeline's scope stage reports (its facts), kept under their names
FACTS = ("rawCandidates", "scopedCandidates", "filteredByScope")
# the diagnosis codes of the former fixed engine, and the code that says the same now
FORMER_CODES = {"scope_starvation": "filter_after_cut", "scope_dominated": "filter_after_cut",
                "min_score_cut": "threshold"}
OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
    ">": operator.gt, "<": operator.lt}
_CMP = re.compile(r"^\s*([A-Za-z_][\w.-]*(?:@\d+)?)\s*(>=|<=|==|!=|>|<)\s*(\S+)\s*$")
_TOP = re.compile(r"^\s*id\s+(.+?)\s+(not\s+)?in\s+top\s+(\d+)\s*$", re.I)


def drop_counter(code: str) -> str:
    """The counter of rows dropped for a reason: below_min_score -> belowMinScore."""
    head, *rest = code.split("_")
    return head + "".join(w.capitalize() for w in rest)


DROP_COUNTERS = {drop_counter(c): c for c in DROP_LABELS}


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
                    counters: tuple[str, ...] = ()) -> Assertion:
    """One assertion from its string or object form; a clear error otherwise. `counters`:
    the names a counter may have besides the reported numbers and drop reasons."""
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
                             "'returned >= 5', 'recall@5 >= 0.8' or 'id X in top 3'.")
    lhs, op, rhs = m.groups()
    if lhs == "diagnosis":
        return _diagnosis(item, op, rhs, where)
    try:
        num = float(rhs)
    except ValueError:
        raise InspectorError(f"{where}: {rhs!r} in {item!r} is not a number.") from None
    if not math.isfinite(num):
        raise InspectorError(f"{where}: {item!r} compares with {rhs}, which is not a finite "
                             "number, so it could never be judged.")
    if lhs in counters or lhs in FACTS or lhs in DROP_COUNTERS:
        return Assertion(item.strip(), "counter", lhs, op, num)
    try:
        name, k = parse_metric(lhs, default_k)
    except InspectorError:
        raise InspectorError(f"{where}: {lhs!r} in {item!r} is neither a counter of this "
                             f"pipeline ({', '.join([*counters, *FACTS])}, or rows dropped "
                             f"for a reason, e.g. belowMinScore) nor a metric (recall@K, "
                             f"precision@K, mrr, ndcg@K, scoped_recall@K).") from None
    return Assertion(item.strip(), "metric", name, op, num, k)


def _diagnosis(item: str, op: str, code: str, where: str) -> Assertion:
    if op not in ("==", "!="):
        raise InspectorError(f"{where}: diagnosis can only be compared with == or !=.")
    if code in FORMER_CODES:
        raise InspectorError(f"{where}: diagnosis code {code} was the fixed engine's; the one "
                             f"engine says {FORMER_CODES[code]} (codes: {', '.join(TITLES)}).")
    if code not in TITLES:
        raise InspectorError(f"{where}: {code!r} is no diagnosis code; the codes are "
                             f"{', '.join(TITLES)}.")
    return Assertion(item.strip(), "diagnosis", "diagnosis", op, code)


@dataclass(frozen=True)
class CheckSpec:
    """One question, and what must hold for its answer (or a store-wide audit's checks)."""

    name: str
    question: Any = None  # flow Question (its store filled in when the check runs)
    asserts: tuple[Assertion, ...] = ()
    grades: dict[str, float] | None = field(default=None, compare=False)
    audit: Any = None  # an audit_checks.AuditCheck


@dataclass(frozen=True)
class ChecksFile:
    store: str | None
    table: str | None
    checks: tuple[CheckSpec, ...]


def _question(raw: Any, where: str) -> Any:
    from pydantic import ValidationError

    from inspector.core.engine.flow.question import Question, resolve

    if not isinstance(raw, dict):
        raise InspectorError(f"{where}: \"question\" must be an object (see `inspector "
                             f"pipeline schema question`).")
    try:
        q = Question.model_validate({"store": "-", **raw})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise InspectorError(f"{where}: question {loc}: {first['msg']}.") from None
    if q.preset is None and q.pipeline_file is None:
        q = q.model_copy(update={"preset": DEFAULT_PRESET})
    try:
        resolve(q)
    except InspectorError as exc:
        raise InspectorError(f"{where}: {exc}") from None
    return q


def _short_form(entry: dict[str, Any], defaults: dict[str, Any], base: Path,
                where: str) -> Any:
    """A check's short form as the question it asks: the options of `inspector query` set
    on the stage that holds each (`spec.held_options`), as the command line sets them."""
    from inspector.core.engine.flow.spec import held_options, load_shipped
    from inspector.core.engine.scope import load_scope_map, parse_scope_map

    params = entry.get("params", {})
    if not isinstance(params, dict):
        raise InspectorError(f"{where}: \"params\" must be an object of parameters, e.g. "
                             '{"overfetch": 3}.')
    given = {**{k: v for k, v in defaults.items() if k not in ("preset", "set")}, **params}
    scope = entry.get("scope", given.pop("scope", None))
    limit = given.pop("limit", None)
    if isinstance(given.get("scope_map"), str):
        given["scope_map"] = load_scope_map(base / given["scope_map"])
    elif "scope_map" in given:
        given["scope_map"] = {k: list(v) for k, v in
                              parse_scope_map(given["scope_map"], f"{where}: scope_map").items()}
    preset = entry.get("preset", defaults.get("preset")) or DEFAULT_PRESET
    try:
        held = held_options(load_shipped(preset), given) if given else {}
    except InspectorError as exc:
        raise InspectorError(f"{where}: {exc}") from None
    missing = sorted(set(given) - set(held))
    if missing:
        from inspector.core.evidence.report import FORMER_FIXED

        former = f" {preset} is now the system as its code runs today; the fixed preset " \
                 f"it named is {FORMER_FIXED[preset]}." if preset in FORMER_FIXED else ""
        raise InspectorError(f"{where}: pipeline {preset} has no stage that takes "
                             f"{', '.join(missing)}; give stage parameters as \"set\": "
                             f"{{\"STAGE.PARAM\": value}} (see `inspector pipeline show "
                             f"{preset}`).{former}")
    sets = {k: v for one in held.values() for k, v in one.items()}
    for extra in (defaults.get("set"), entry.get("set")):
        if extra is not None and not isinstance(extra, dict):
            raise InspectorError(f"{where}: \"set\" must be an object of STAGE.PARAM values.")
        sets.update(extra or {})
    raw = {"preset": preset, "text": entry.get("text"), "vector_of": entry.get("vector_of"),
           "embedder": entry.get("embedder"), "limit": limit, "set": sets,
           "scopes": None if scope in (None, "") else [scope]}
    return _question({k: v for k, v in raw.items() if v is not None}, where)


def _grades(entry: dict[str, Any], judged: Judgments | None, q: Any,
            where: str) -> dict[str, float] | None:
    inline = entry.get("relevant")
    if inline is not None:
        j = Judgments.from_json([{"query": q.text or "?", "judgments": inline}], where)
        return j.queries[0].grade_map()
    if judged is not None and q.text:
        scope = q.scopes[0] if q.scopes else None
        return judged.grades_for(q.text, scope) or None
    return None


_TEXT_FIELDS = ("name", "text", "vector_of", "embedder", "preset", "scope")


def _check_strings(obj: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    """Fields that must be text when present (a number where text belongs is bad input)."""
    for key in keys:
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise InspectorError(f"{where}: \"{key}\" must be text, not {obj[key]!r:.40}.")


def parse_checks(data: Any, base: Path, source: str) -> ChecksFile:
    """Validate a whole checks document before anything runs."""
    from inspector.core.engine.flow.question import resolve

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
        name = str(entry.get("name") or f"check {n}")
        if "audit" in entry:
            specs.append(CheckSpec(name, audit=parse_audit_check(entry, where)))
            continue
        if "question" in entry:
            q = _question(entry["question"], where)
        elif entry.get("text") or entry.get("vector_of"):
            q = _short_form(entry, defaults, base, where)
        else:
            raise InspectorError(f"{where}: give the query as \"text\" or \"vector_of\", or "
                                 f"the whole \"question\".")
        raw = entry.get("assert", [])
        if not isinstance(raw, list) or not raw:
            raise InspectorError(f"{where}: \"assert\" must be a non-empty list.")
        spec, _, _ = resolve(q)
        names = (*spec.stage_names(), "returned")
        asserts = tuple(parse_assertion(a, where, q.limit or spec.limit.default, names)
                        for a in raw)
        grades = _grades(entry, judged, q, where)
        for a in asserts:
            if a.kind == "metric" and a.target != "scoped_recall" and not grades:
                raise InspectorError(f"{where}: '{a.text}' needs judgments for this query "
                                     "(\"relevant\" or a judgments file).")
        specs.append(CheckSpec(name, q, asserts, grades))
    store = data.get("store")
    if store and not str(store).startswith(("s3://", "gs://", "az://", "db://")):
        store = str((base / store).resolve()) if not Path(store).is_absolute() else store
    return ChecksFile(store=store, table=data.get("table"), checks=tuple(specs))


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


def counters(trace: Any) -> dict[str, int]:
    """Every counter of a run: each stage's row count, `returned`, the whole numbers its
    stages report (the first stage reporting one wins) and the rows dropped per reason."""
    out: dict[str, int] = {}
    for st in trace.stages:
        for k, v in st.facts.items():
            if isinstance(v, int) and not isinstance(v, bool):
                out.setdefault(k, v)
    for code in DROP_LABELS:
        out[drop_counter(code)] = sum(1 for st in trace.stages for d in st.dropped
                                      if d.code == code)
    out.update({st.name: len(st.rows) for st in trace.stages})
    out["returned"] = len(trace.final.rows)
    return out


def _explain(trace: Any, rid: str, runs: Any) -> str:
    """Where an expected row fell, and the smallest change that returns it (each run)."""
    from inspector.core.engine.flow.insight.expect import explain

    e = explain(trace, rid, runs)
    head = f"not returned: dropped at {e['dropped_at']} ({e['reason']})"
    fix = e.get("fix")
    if not fix:
        return head + "; " + e.get("no_fix", "no change found")
    kind = "what-if" if fix["kind"] == "what_if" else "the smallest change"
    return head + f"; {kind}: {' '.join(fix['argv'])} returns it at rank {fix['rank']}"


def evaluate(a: Assertion, trace: Any, diagnosis: Any, grades: dict[str, float] | None,
             truth: list[str] | None, explain: Callable[[str], str]) -> Outcome:
    """Judge one assertion against a run; failures carry a one-line reason."""
    ids = trace.final.ids
    if a.kind == "id":
        rank = next((r for r, x in enumerate(ids, 1) if str(x) == a.target), None)
        inside = rank is not None and rank <= a.value
        ok = inside if a.op == "in" else not inside
        why = "" if ok else (f"returned at rank {rank}" if rank else explain(a.target))
        return Outcome(a.text, ok, rank, why)
    if a.kind == "diagnosis":
        ok = OPS[a.op](diagnosis.code, a.value)
        return Outcome(a.text, ok, diagnosis.code, "" if ok else diagnosis.message)
    if a.kind == "counter":
        have = counters(trace)
        if a.target not in have:
            return Outcome(a.text, False, None, f"this run reports no {a.target}; it reports "
                                                f"{', '.join(have)}")
        got: float | None = have[a.target]
    else:
        got = metric(a.target, ids, a.k or trace.limit, grades, truth)
    if got is None:
        return Outcome(a.text, False, None, "undefined: nothing relevant to measure against")
    ok = OPS[a.op](got, a.value)
    return Outcome(a.text, ok, got, "" if ok else f"got {got:g}; {diagnosis.message}")


def _run_one(c: CheckSpec, store: Any, uri: str) -> CheckResult:
    from inspector.core.analysis.truth import truth_ids
    from inspector.core.engine.flow.question import answer, runs_for
    from inspector.core.engine.flow.runner import PoolCache

    q = c.question.model_copy(update={"store": uri})
    cache = PoolCache()
    got = answer(q, store, cache, fixes=False, facet_mode="off")
    trace = got.trace
    runs, _, _ = runs_for(q, store, cache)
    truth = truth_ids(runs) if any(a.kind == "metric" and a.target == "scoped_recall"
                                   for a in c.asserts) else None
    named = [a.target for a in c.asserts if a.kind == "id"]
    missing = set(store.missing_ids([*named, *(c.grades or {})]))
    outs = tuple(Outcome(a.text, False, None, f"no row with id {a.target!r} in table "
                         f"'{store.table_name}'")
                 if a.kind == "id" and a.target in missing
                 else evaluate(a, trace, got.diagnosis, c.grades, truth,
                               lambda rid: _explain(trace, rid, runs)) for a in c.asserts)
    warnings = [f"judged id {rid!r} matches no row in table '{store.table_name}'"
                for rid in sorted(set(c.grades or {}) & missing)]
    warnings += [*trace.warnings, *(f"not exact: {x}" for x in trace.inexact)]
    return CheckResult(c.name, all(o.passed for o in outs), outs, got.diagnosis.code,
                       tuple(warnings))


def run_checks(checks: ChecksFile, store_uri: str | None = None,
               table: str | None = None) -> list[CheckResult]:
    """Run every check against the store (the argument wins over the file's)."""
    from inspector.core.stores.opening import open_store

    uri = store_uri or checks.store
    if not uri:
        raise InspectorError("No store to check: give --store or a \"store\" in the checks file.")
    store = open_store(uri, table or checks.table)
    results = []
    for c in checks.checks:
        if c.audit is not None:
            outs = tuple(Outcome(*o) for o in run_audit_check(c.audit, store, uri))
            results.append(CheckResult(c.name, all(o.passed for o in outs), outs, "audit"))
        else:
            results.append(_run_one(c, store, uri))
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
