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
                      and _cosine(t.row.vector, s.row.vector) > p["threshold"]), None)
        (deferred if close is not None else picked).append(s)
    return Outcome(picked + deferred, deferred=tuple(s.id for s in deferred))


# (id(a), id(b)) -> (cosine, a, b): the pairs a slider tick compares again (the same rows'
# vectors, a weight moved). The entry holds both vectors, so while it lives their ids name
# the same arrays. Bounded: past COSINES_MAX pairs, start again.
_COSINES: dict[tuple[int, int], tuple[float, Any, Any]] = {}
COSINES_MAX = 50_000


def _cosine(a: Any, b: Any) -> float:
    """`js.cosine(a, b)`, each pair of vectors computed once."""
    key = (id(a), id(b))
    hit = _COSINES.get(key)
    if hit is not None and hit[1] is a and hit[2] is b:
        return hit[0]
    if len(_COSINES) >= COSINES_MAX:
        _COSINES.clear()
    got = js.cosine(a, b)
    _COSINES[key] = (got, a, b)
    return got
