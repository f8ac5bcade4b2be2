"""Fusion: the legs' candidates combined into one scored list."""

from __future__ import annotations

from typing import Any

from inspector.core.engine import js
from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Outcome, Scored


@stage("weighted_fusion", "fusion",
       P("vector_leg", "str", "vector_leg", "name of the vector leg stage"),
       P("text_leg", "str", "bm25_leg", "name of the full-text leg stage"),
       P("vector_weight", "float", 0.7, "vectorWeight", 0, 10, effect="weight", step=0.05),
       P("bm25_weight", "float", 0.3, "bm25Weight", 0, 10, effect="weight", step=0.05),
       P("bm25_floor_at", "float", 0.75, "a BM25 score at least this keeps a floor", 0, 1),
       P("bm25_floor", "float", 0.92, "the floor: this times the BM25 score", 0, 10),
       P("bm25_only_weighted", "bool", False, "weight rows only the full-text leg found "
         "(memory-lancedb-pro: no, they keep their BM25 score)"))
def weighted(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """max(wv * v + wb * b, floor * b when b >= floor_at); vector-leg order first, then
    full-text-only rows in full-text order; a stable descending sort."""
    vec = ctx.legs.get(p["vector_leg"], [])
    txt = ctx.legs.get(p["text_leg"], [])
    vmap = {s.id: s for s in vec}
    bmap = {s.id: s for s in txt}
    order = list(dict.fromkeys([s.id for s in vec] + [s.id for s in txt]))
    out: list[Scored] = []
    for rid in order:
        v, b = vmap.get(rid), bmap.get(rid)
        vs = v.score if v else 0.0
        bs = b.score if b else 0.0
        if v is not None or p["bm25_only_weighted"]:
            mixed = vs * p["vector_weight"] + bs * p["bm25_weight"]
            fused = js.clamp01(max(mixed, bs * p["bm25_floor"] if bs >= p["bm25_floor_at"]
                                   else 0.0), 0.1)
        else:
            fused = js.clamp01(bs, 0.1)
        base = (v or b).row  # type: ignore[union-attr]
        inputs = (("vector", vs),) if v else ()
        inputs += (("bm25", bs),) if b else ()
        out.append(Scored(base, fused, inputs + (("fused", fused),)))
    return Outcome(js.sort_desc(out))
