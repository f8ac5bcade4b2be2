"""Diversity: near-duplicates moved behind the rows they resemble."""

from __future__ import annotations

from typing import Any

from inspector.core.engine import js
from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Outcome, Scored


@stage("mmr_defer", "diversity",
       P("threshold", "float", 0.85, "a row with cosine above this to an earlier pick is "
         "deferred", -1, 1))
def mmr_defer(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Walking in order, defer a row too similar to one already picked; picks then deferred,
    not re-sorted (so the list is not in score order)."""
    picked: list[Scored] = []
    deferred: list[Scored] = []
    for s in rows:
        if s.row.vector is None:
            picked.append(s)
            continue
        close = next((t for t in picked if t.row.vector is not None
                      and len(t.row.vector) == len(s.row.vector)
                      and js.cosine(t.row.vector, s.row.vector) > p["threshold"]), None)
        (deferred if close is not None else picked).append(s)
    return Outcome(picked + deferred, deferred=tuple(s.id for s in deferred))
