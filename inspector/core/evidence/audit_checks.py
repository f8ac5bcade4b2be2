"""Checks over store-wide audits, for CI: "no memory of scope X is never recallable", "no
scope leaks", "no scope starves". A checks file entry names the audit and its assertions:

    {"audit": "recall", "preset": "importance-blend", "scope": "main",
     "assert": ["no_never_recallable"]}
    {"audit": "scopes", "preset": "docs-pushdown", "per_scope": 5,
     "assert": ["no_leaks", "no_starvation"]}

A failing assertion names the offending memories (the first ten, then how many more)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.core.errors import InspectorError

KINDS = ("recall", "scopes")
ASSERTS = {"recall": ("no_never_recallable",), "scopes": ("no_leaks", "no_starvation")}
_OPTIONS = ("name", "audit", "preset", "pipeline", "scope", "limit", "sample", "seed",
            "per_scope", "set", "now", "assert")
NAMED = 10  # offending memories named in a failure, the rest counted


@dataclass(frozen=True)
class AuditCheck:
    kind: str
    question: Any  # the flow Question (preset or pipeline, set, limit, now)
    scope: str | None  # recall: only memories of this scope, each probed in it
    asserts: tuple[str, ...]
    sample: int | None = None
    seed: int = 0
    per_scope: int = 10
    options: dict[str, Any] = field(default_factory=dict, compare=False)


def _whole(entry: dict[str, Any], key: str, lo: int, hi: int, where: str) -> int | None:
    v = entry.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise InspectorError(f"{where}: \"{key}\" takes a whole number from {lo} to {hi}.")
    return v


def parse_audit_check(entry: dict[str, Any], where: str) -> AuditCheck:
    """One audit check, validated before anything runs."""
    from pydantic import ValidationError

    from inspector.core.engine.flow.question import Question, parse_now, resolve

    kind = entry["audit"]
    if kind not in KINDS:
        raise InspectorError(f"{where}: \"audit\" is one of {', '.join(KINDS)}, not {kind!r}.")
    unknown = sorted(set(entry) - set(_OPTIONS))
    if unknown:
        raise InspectorError(f"{where}: an audit check takes {', '.join(_OPTIONS)}; not "
                             f"{', '.join(unknown)}.")
    raw = entry.get("assert")
    raw = [raw] if isinstance(raw, str) else raw
    if not isinstance(raw, list) or not raw or any(a not in ASSERTS[kind] for a in raw):
        raise InspectorError(f"{where}: \"assert\" lists what must hold for a {kind} audit: "
                             f"{', '.join(ASSERTS[kind])}.")
    if not entry.get("preset") and not entry.get("pipeline"):
        raise InspectorError(f"{where}: an audit check needs \"preset\" (or \"pipeline\").")
    scope = entry.get("scope")
    if scope is not None and (not isinstance(scope, str) or kind != "recall"):
        raise InspectorError(f"{where}: \"scope\" (text) narrows a recall audit to one scope's "
                             "memories.")
    sets = entry.get("set", {})
    if not isinstance(sets, dict):
        raise InspectorError(f"{where}: \"set\" must be an object of STAGE.PARAM: value.")
    try:
        q = Question(store="-", preset=entry.get("preset"), pipeline_file=entry.get("pipeline"),
                     set=sets, limit=_whole(entry, "limit", 1, 1_000_000, where),
                     now=parse_now(str(entry["now"])) if entry.get("now") is not None else None)
    except ValidationError as exc:
        raise InspectorError(f"{where}: {exc.errors()[0]['msg']}.") from None
    resolve(q)  # an unknown preset or parameter fails here, before any store opens
    return AuditCheck(kind, q, scope, tuple(raw),
                      sample=_whole(entry, "sample", 1, 10_000_000, where),
                      seed=_whole(entry, "seed", 0, 2**31, where) or 0,
                      per_scope=_whole(entry, "per_scope", 1, 10_000, where) or 10)


def _named(items: list[str]) -> str:
    more = f", … {len(items) - NAMED} more" if len(items) > NAMED else ""
    return ", ".join(items[:NAMED]) + more


def run_audit_check(c: AuditCheck, store: Any, uri: str) -> list[tuple[str, bool, Any, str]]:
    """(assertion, passed, actual, why) for each assertion of the check."""
    import time

    from inspector.core.analysis import audit

    q = c.question.model_copy(update={"store": uri})
    now = q.now if q.now is not None else time.time() * 1000
    out = []
    if c.kind == "recall":
        res = audit.recall_audit(store, q, now, sample=c.sample, seed=c.seed, fixes=0,
                                 only_scope=c.scope)
        never = [f"{r['id']} ({r['class']} at {r['stage']}: {r['code']})"
                 for r in res["never_recallable"]]
        where = f"of scope {c.scope} " if c.scope is not None else ""
        out.append(("no_never_recallable", not never, len(never),
                    "" if not never else f"{len(never)} of {res['probes']} memories {where}"
                    f"never recalled by their own vector and text: {_named(never)}"))
        return out
    res = audit.scope_audit(store, q, now, per_scope=c.per_scope, seed=c.seed)
    for a in c.asserts:
        if a == "no_leaks":
            leaks = [f"{n} of {other} in {s}" for s, row in res["leaks"].items()
                     for other, n in row.items()]
            out.append((a, not leaks, res["leak_total"], "" if not leaks else
                        f"rows of another scope returned: {_named(leaks)}"))
        else:
            short = [f"{e['id']} ({s['scope']}: {e['returned']} of {e['limit']})"
                     for s in res["scopes"] for e in s["short_ids"]]
            out.append((a, not short, len(short), "" if not short else
                        f"probes short of the limit although their scope holds enough rows: "
                        f"{_named(short)}"))
    return out
