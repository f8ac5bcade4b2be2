"""A pipeline run as the one JSON object the CLI, receipts and tools read, with its diagnosis
in structured codes (the window renders codes, never splits sentences)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.insight.diagnosis import Diagnosis, diagnose
from inspector.core.engine.flow.insight.facet import IndexFacet
from inspector.core.engine.flow.rows import Scored
from inspector.core.engine.flow.runner import FlowTrace, StageRun
from inspector.core.jsonio import plain

SCHEMA_VERSION = 3  # 1 was the fixed engine's trace; 2 the stage engine's before diagnoses


@dataclass(frozen=True)
class Answer:
    """A question answered: the run, its diagnosis (with fixes that were run), the expected
    rows explained, and the index facet (None: no leg searched an ANN index, or not compared)."""

    trace: FlowTrace
    diagnosis: Diagnosis
    expected: tuple[dict[str, Any], ...] = ()
    facet: IndexFacet | None = None
    runs: int = 1  # pipeline runs it took (the fixes' and expected rows' included)


def iso(ms: float) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat().replace("+00:00", "Z")


def _cand(s: Scored, rank: int, before: dict[str, tuple[int, float]]) -> dict[str, Any]:
    prev = before.get(s.id)
    row = s.row
    return {"id": s.id, "rank": rank, "score": s.score,
            "score_before": prev[1] if prev else None,
            "rank_before": prev[0] if prev else None,
            "inputs": {k: plain(v) for k, v in s.inputs},
            "scope": row.scope, "importance": plain(row.importance),  # NaN: none stored
            "timestamp": row.timestamp,
            "text_length": len(row.text)}


def stage_json(st: StageRun) -> dict[str, Any]:
    before = {s.id: (i, s.score) for i, s in enumerate(st.rows_in, start=1)}
    return {"name": st.name, "kind": st.kind, "role": st.role, "count": len(st.rows),
            "count_in": len(st.rows_in) if st.role != "fetch" else None, "note": st.note,
            "candidates": [_cand(s, i, before) for i, s in enumerate(st.rows, start=1)],
            "dropped": [d.to_json() for d in st.dropped], "deferred": list(st.deferred),
            "facts": st.facts}


def to_json(a: Answer | FlowTrace, expect: list[dict[str, Any]] | None = None
            ) -> dict[str, Any]:
    """The one answer of every pipeline: `stages` in order (the last one the final results),
    counters, ties, expected rows, the diagnosis with its fixes and the index facet."""
    if isinstance(a, FlowTrace):
        a = Answer(a, diagnose(a), tuple(expect or ()))
    t = a.trace
    spec = t.spec
    vec = None if t.vector is None else [float(x) for x in t.vector]
    return {
        "schema": SCHEMA_VERSION,
        "store": t.store,
        "pipeline": {"name": spec.name, "title": spec.title, "system": spec.system,
                     "version": spec.version, "path": spec.path, "route": t.route,
                     "ties": spec.ties},
        "query": {"text": t.text, "bm25_text": t.bm25_text, "source": t.query_source,
                  "vector": vec},
        "params": {"pipeline": spec.name, "route": t.route, "limit": t.limit,
                   "limit_asked": t.limit_asked, "now": t.now_ms, "now_iso": iso(t.now_ms),
                   "scopes": None if t.scopes is None else list(t.scopes),
                   "settings": {k: list(v) if isinstance(v, tuple) else v
                                for k, v in spec.settings.items()},
                   "stages": {st.name: {k: list(v) if isinstance(v, tuple) else v
                                        for k, v in st.params.items()
                                        if not isinstance(v, dict)} for st in t.stages}},
        "stages": [stage_json(st) for st in t.stages],
        "counters": {**{st.name: len(st.rows) for st in t.stages if st.role != "query"},
                     "returned": len(t.final.rows),
                     **({"lostToIndex": a.facet.lost} if a.facet is not None else {})},
        "diagnosis": a.diagnosis.to_json(),
        "what_if": {"widen": dict(t.widen), "exact": t.exact} if t.what_if else None,
        "warnings": list(t.warnings),
        "exact": not t.inexact,
        "inexact": list(t.inexact),
        "expect": list(a.expected),
        "ties": [x.to_json() for x in t.ties],
        "index_facet": a.facet.to_json() if a.facet is not None else None,
        "runs": a.runs,
    }


def format_text(a: Answer | FlowTrace, max_rows: int = 15) -> str:
    """The run for a terminal: the diagnosis and its fixes, then each stage's count and its
    first rows, drops and notes."""
    if isinstance(a, FlowTrace):
        a = Answer(a, diagnose(a))
    t, d = a.trace, a.diagnosis
    lines = [f"{t.spec.title}", f"route {t.route} · limit {t.limit} · now {iso(t.now_ms)} · "
             f"scopes {'unscoped' if t.scopes is None else list(t.scopes)}",
             f"diagnosis: {d.code}: {d.message}"]
    if t.what_if:
        lines.append("what-if (not the system's behaviour): "
                     + ", ".join([f"{k} keeps at least {v} rows" for k, v in t.widen]
                                 + (["the index bypassed"] if t.exact else [])))
    for f in d.fixes:
        lines.append(f"  fix: {f.label}    [{' '.join(f.change.argv())}]")
    if a.facet is not None:
        fc = a.facet
        lines.append(f"index: {fc.index_type}: lost {fc.lost} row(s) at the legs' depths; "
                     f"the exact search returns {len(fc.exact_final)}, of which "
                     f"{len(fc.lost_final)} not returned here")
    lines += [f"warning: {w}" for w in t.warnings]
    lines += [f"not exact: {w}" for w in t.inexact]
    for st in t.stages:
        tied = {i for x in t.ties if x.stage == st.name for i in x.ids}
        head = f"\n== {st.name} ({st.kind})"
        head += "" if st.role == "query" else f" · {len(st.rows)} row(s)"
        lines.append(head + (f" · {st.note}" if st.note else ""))
        if st.role == "query":
            continue
        for i, s in enumerate(st.rows[:max_rows], start=1):
            mark = "=" if s.id in tied else " "
            defer = " (deferred)" if s.id in st.deferred else ""
            lines.append(f"  {i:>3}{mark} {s.score:.6f}  {s.id}{defer}")
        if len(st.rows) > max_rows:
            lines.append(f"  … {len(st.rows) - max_rows} more")
        for k, v in st.facts.items():
            shown = json.dumps(v, ensure_ascii=False)
            lines.append(f"   · {k}: {shown if len(shown) <= 100 else shown[:99] + '…'}")
        for dr in st.dropped[:max_rows]:
            detail = ", ".join(f"{k} {v}" for k, v in dr.detail)
            lines.append(f"   x  {dr.id}: {dr.code}" + (f" ({detail})" if detail else ""))
    for x in t.ties:
        if x.at_cut:  # which of them are kept: LanceDB's choice, or a rule (row id, ...)
            lines.append(f"\ntie at the cut: {x.stage} keeps {len(x.ids)} of "
                         f"{len(x.ids) + x.beyond} rows tied at {x.measure} {x.value:.6g}; "
                         f"order: {x.to_json()['order']}")
    return "\n".join(lines)
