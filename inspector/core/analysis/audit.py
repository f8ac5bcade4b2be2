"""Store-wide audits over a pipeline of stages: can each memory be recalled at all, and what
does one parameter change do across every probe.

The recallability audit probes every memory (or a sample) with its own vector and its own
text, under the real pipeline and a scope (each row's own, or one list for all), and
classifies it by the stage that dropped it, in the engine's drop vocabulary. Each probe is one
ordinary run of the pipeline: the same answer `inspector query --vector-of ID --text TEXT`
gives (a test compares them).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.engine.flow import js
from inspector.core.engine.flow.expect import where_dropped
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.runner import FlowTrace, run
from inspector.core.engine.flow.spec import PipelineSpec, apply_set
from inspector.core.errors import InspectorError
from inspector.core.stores.roles import lance_columns, nested_kind, with_nested

SHADOW_COSINE = 0.85  # a returned row this similar is the near-duplicate that shadows a probe
# the classes, in the order a reader meets them
CLASSES = ("found", "shadowed", "below_threshold", "crowded_out", "noise", "expired",
           "inactive", "must_contain", "no_vector", "other")


@dataclass(frozen=True)
class ProbeResult:
    id: str
    scope: str | None
    cls: str
    rank: int | None  # in the final list
    stage: str | None  # where it fell
    code: str
    detail: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "scope": self.scope, "class": self.cls, "rank": self.rank,
                "stage": self.stage, "code": self.code, "detail": self.detail}


def _read_from(spec: PipelineSpec) -> dict[str, str]:
    """Where the pipeline reads each memory's id, text, vector and scope: the columns (or a
    struct field, or a JSON-text key) its LanceDB fetch stage is told; by name otherwise."""
    for route in spec.routes:
        for st in route.stages:
            if st.kind == "lancedb_vector_where":
                p = kind_of(st.kind).resolve(st.params, st.name)
                return {"id": p["id_column"], "text": p["text_column"],
                        "vector": p["vector_column"], "scope": p["scope_path"] or "scope"}
    return {"id": "id", "text": "text", "vector": "vector", "scope": "scope"}


def _memories(store: Any, spec: PipelineSpec, sample: int | None,
              seed: int) -> list[dict[str, Any]]:
    schema = store.table.schema
    where = {k: c for k, c in _read_from(spec).items()
             if c in schema.names or nested_kind(schema, c) != "column"}
    if "id" not in where or "vector" not in where:
        raise InspectorError("The recallability audit needs id and vector columns.")
    cols = list(where.values())
    tbl = store.table.search().select(lance_columns(schema, cols)).limit(max(1, store.rows))
    got = with_nested(tbl.to_arrow(), schema, cols).to_pylist()
    rows = [{k: rec.get(c) for k, c in where.items()} for rec in got]
    rows.sort(key=lambda r: str(r["id"]))
    if sample is not None and sample < len(rows):
        rows = random.Random(seed).sample(rows, sample)
        rows.sort(key=lambda r: str(r["id"]))
    return rows


def _classify(t: FlowTrace, rid: str, vec: np.ndarray | None) -> tuple[str, Any]:
    fall = where_dropped(t, rid)
    if fall.code == "returned":
        return "found", fall
    final = t.final.rows
    if vec is not None and fall.code in ("past_limit", "outside_window", "not_fetched"):
        twin = max(((js.cosine(vec, s.row.vector), s.id) for s in final
                    if s.row.vector is not None and len(s.row.vector) == len(vec)
                    and s.id != rid), default=None)
        if twin is not None and twin[0] > SHADOW_COSINE:
            return "shadowed", (fall, {"by": twin[1], "cosine": twin[0]})
    by_code = {"below_min_score": "below_threshold", "noise": "noise", "expired": "expired",
               "inactive": "inactive", "must_contain": "must_contain",
               "no_vector": "no_vector", "past_limit": "crowded_out",
               "outside_window": "crowded_out", "not_fetched": "crowded_out"}
    return by_code.get(fall.code, "other"), fall


def recall_audit(store: Any, question: Question, now_ms: float, *, own_scope: bool = True,
                 sample: int | None = None, seed: int = 0,
                 progress: Callable[[int, int], bool] | None = None) -> dict[str, Any]:
    """Every memory probed with its own vector (and text); `progress(done, total)` returning
    False cancels and returns what was probed so far."""
    spec, _, inexact = resolve(question)
    rows = _memories(store, spec, sample, seed)
    results: list[ProbeResult] = []
    cancelled = False
    for n, rec in enumerate(rows, 1):
        rid = str(rec["id"])
        vec = None if rec.get("vector") is None else np.asarray(rec["vector"], np.float64)
        scope = rec.get("scope")
        scopes = (None if scope is None else (scope,)) if own_scope else (
            None if question.scopes is None else tuple(question.scopes))
        if vec is None or not np.all(np.isfinite(vec)):
            results.append(ProbeResult(rid, scope, "no_vector", None, None, "no_vector", {}))
        else:
            t = run(store, spec, text=rec.get("text") or None, vector=vec, scopes=scopes,
                    limit=question.limit, now_ms=now_ms, query_source=f"example:{rid}")
            results.append(_result(t, rid, scope, vec))
        if progress is not None and progress(n, len(rows)) is False:
            cancelled = True
            break
    counts = Counter(r.cls for r in results)
    by_scope: dict[str, Counter[str]] = {}
    for r in results:
        by_scope.setdefault(str(r.scope), Counter())[r.cls] += 1
    return {"kind": "recall-audit", "pipeline": spec.name, "probes": len(results),
            "of": len(rows), "sampled": sample is not None and sample < store.rows,
            "cancelled": cancelled, "scope": "own" if own_scope else question.scopes,
            "limit": question.limit or spec.limit.default, "now": now_ms,
            "counts": {c: counts.get(c, 0) for c in CLASSES},
            "by_scope": {s: {c: n for c, n in sorted(cnt.items())}
                         for s, cnt in sorted(by_scope.items())},
            "never_recallable": [r.to_json() for r in results if r.cls != "found"],
            "found": [r.to_json() for r in results if r.cls == "found"],
            "inexact": list(inexact),
            "method": "one pipeline run per probe (its own vector and text); no batched scan"}


def _result(t: FlowTrace, rid: str, scope: str | None, vec: np.ndarray) -> ProbeResult:
    cls, got = _classify(t, rid, vec)
    if cls == "shadowed":
        fall, extra = got
        return ProbeResult(rid, scope, cls, None, fall.stage, fall.code, {**fall.detail, **extra})
    rank = got.detail.get("rank") if cls == "found" else None
    return ProbeResult(rid, scope, cls, rank, got.stage, got.code, dict(got.detail))


def change_audit(store: Any, question: Question, now_ms: float, sets: dict[str, Any], *,
                 own_scope: bool = True, sample: int | None = None, seed: int = 0,
                 worst: int = 10) -> dict[str, Any]:
    """One change (`--set` assignments) over the recallability probe set: memories whose own
    probe gains or loses recall, and rows gained and lost across all probes."""
    base_spec, _, _ = resolve(question)
    changed: PipelineSpec = apply_set(base_spec, sets)
    rows = _memories(store, base_spec, sample, seed)
    improved, hurt, gained, lost = [], [], Counter(), Counter()
    for rec in rows:
        rid = str(rec["id"])
        if rec.get("vector") is None:
            continue
        vec = np.asarray(rec["vector"], np.float64)
        scope = rec.get("scope")
        scopes = (None if scope is None else (scope,)) if own_scope else (
            None if question.scopes is None else tuple(question.scopes))
        kw = dict(text=rec.get("text") or None, vector=vec, scopes=scopes,
                  limit=question.limit, now_ms=now_ms)
        a, b = run(store, base_spec, **kw).final.ids, run(store, changed, **kw).final.ids
        before, after = rid in a, rid in b
        if after and not before:
            improved.append({"id": rid, "rank": b.index(rid) + 1})
        elif before and not after:
            hurt.append({"id": rid, "was_rank": a.index(rid) + 1})
        gained.update(i for i in b if i not in a)
        lost.update(i for i in a if i not in b)
    return {"kind": "change-audit", "pipeline": base_spec.name, "set": sets,
            "probes": len(rows), "improved": len(improved), "hurt": len(hurt),
            "improved_ids": improved[:worst], "hurt_ids": hurt[:worst],
            "rows_gained": sum(gained.values()), "rows_lost": sum(lost.values()),
            "most_gained": gained.most_common(worst), "most_lost": lost.most_common(worst)}


def format_recall(res: dict[str, Any], rows: int = 20) -> str:
    lines = [f"recallability of {res['probes']} memories under {res['pipeline']} (limit "
             f"{res['limit']}, scope {res['scope']})" +
             (" — cancelled, partial" if res["cancelled"] else "")]
    lines += [f"  {c:<16} {n}" for c, n in res["counts"].items() if n]
    never = res["never_recallable"]
    if never:
        lines.append(f"\nnever recalled by their own vector and text ({len(never)}):")
        for r in never[:rows]:
            d = ", ".join(f"{k} {v if not isinstance(v, float) else f'{v:.4f}'}"
                          for k, v in r["detail"].items())
            lines.append(f"  {r['id']:<32} {r['class']:<16} at {r['stage']} ({r['code']})"
                         + (f": {d}" if d else ""))
        if len(never) > rows:
            lines.append(f"  … {len(never) - rows} more (--json lists every one)")
    return "\n".join(lines)


def _with_pushdown(spec: PipelineSpec) -> PipelineSpec | None:
    """The pipeline with every fetch stage that can take the scope as a prefilter doing so
    (None when every one already does, or none can)."""
    from inspector.core.engine.flow.registry import kind_of

    sets = {}
    for route in spec.routes:
        for st in route.stages:
            kind = kind_of(st.kind)
            if kind.role == "fetch" and "prefilter" in kind.by_name:
                if not kind.resolve(st.params, st.name)["prefilter"]:
                    sets[f"{st.name}.prefilter"] = True
    return apply_set(spec, sets) if sets else None


def scope_audit(store: Any, question: Question, now_ms: float, *, per_scope: int = 10,
                seed: int = 0) -> dict[str, Any]:
    """For every scope value in the store, up to `per_scope` of its memories as queries in
    that scope alone: rows of other scopes returned (leaks, as a scope x scope matrix), and
    probes that come back short of the limit although the scope holds enough rows
    (starvation), with whether pushing the scope into the query ends it."""
    spec, _, _ = resolve(question)
    pushed = _with_pushdown(spec)
    rows = _memories(store, spec, None, seed)
    by_scope: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        by_scope.setdefault(r.get("scope"), []).append(r)
    rng = random.Random(seed)
    leaks: dict[str, Counter[str]] = {}
    report = []
    for scope, members in sorted(by_scope.items(), key=lambda kv: str(kv[0])):
        if scope is None:
            continue  # a NULL scope matches no scope filter: nothing to isolate
        picked = members if len(members) <= per_scope else rng.sample(members, per_scope)
        short = fixed = 0
        examples = []
        for rec in picked:
            vec = np.asarray(rec["vector"], np.float64)
            kw = dict(text=rec.get("text") or None, vector=vec, scopes=(scope,),
                      limit=question.limit, now_ms=now_ms)
            t = run(store, spec, **kw)
            got = t.final.rows
            for s in got:
                if s.row.scope != scope:
                    leaks.setdefault(scope, Counter())[str(s.row.scope)] += 1
            need = min(t.limit, len(members))
            if len(got) < need:
                short += 1
                better = len(run(store, pushed, **kw).final.rows) if pushed else None
                fixed += int(better is not None and better > len(got))
                if len(examples) < 3:
                    examples.append({"id": str(rec["id"]), "returned": len(got),
                                     "limit": t.limit, "with_pushdown": better})
        report.append({"scope": scope, "memories": len(members), "probes": len(picked),
                       "short": short, "ended_by_pushdown": fixed, "examples": examples,
                       "leaked_in": dict(leaks.get(scope, {}))})
    return {"kind": "scope-audit", "pipeline": spec.name, "per_scope": per_scope,
            "pushdown_available": pushed is not None, "scopes": report,
            "leaks": {s: dict(c) for s, c in leaks.items()},
            "leak_total": sum(sum(c.values()) for c in leaks.values())}


def format_scopes(res: dict[str, Any]) -> str:
    lines = [f"scope isolation under {res['pipeline']} ({res['per_scope']} probes a scope)",
             f"  {'scope':<28} {'memories':>8} {'probes':>6} {'short':>6} {'fixed':>6}  leaks in"]
    for s in res["scopes"]:
        leaks = ", ".join(f"{k}: {v}" for k, v in s["leaked_in"].items()) or "none"
        lines.append(f"  {s['scope']:<28} {s['memories']:>8} {s['probes']:>6} {s['short']:>6} "
                     f"{s['ended_by_pushdown']:>6}  {leaks}")
    lines.append(f"rows of another scope returned: {res['leak_total']}")
    if not res["pushdown_available"]:
        lines.append("(every leg already takes the scope as a prefilter)")
    return "\n".join(lines)
