"""Generative Agents' retrieval (joonspk-research/generative_agents, retrieve.py
`new_retrieve`): every event and thought node of the memory stream is scored by min-max
normalised recency, relevance and importance, weighted, and the top n returned.

The released code and the paper differ; `variant` picks one:
- released: nodes ordered by last_accessed ascending (ties in the stream's order: events then
  thoughts, newest first), recency = decay^i for i = 1..n in that order, so the node accessed
  longest ago gets the highest recency (decay 0.99); weights [0.5, 3, 2] (gw) times
  recency_w, relevance_w, importance_w (1 each).
- paper: recency = 0.995^(hours since last access), all weights 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Scored
from inspector.core.engine.flow.stages.lance_where import parse_iso, read_row
from inspector.core.errors import InspectorError

_ROW = {"id_column": "id", "text_column": "description", "vector_column": "vector",
        "scope_path": "", "importance_path": "poignancy", "time_path": "last_accessed",
        "time_format": "iso", "metadata_path": ""}


@stage("memory_stream", "fetch",
       P("types", "list", ("event", "thought"), "node types retrieved (chats are not)",
         live=False),
       P("skip_idle", "bool", True, "nodes whose embedding_key holds 'idle' are skipped",
         live=False))
def memory_stream(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Every node of the stream (seq_event + seq_thought, each newest first), scored by
    cosine similarity to the focal point."""
    if ctx.vector is None:
        raise InspectorError(ctx.settings.get("_vector_error") or "Generative Agents' "
                             "retrieval needs a focal-point vector: --vector or --text.")
    have = set(ctx.store.table.schema.names)
    need = {"id", "description", "vector", "poignancy", "last_accessed", "type"}
    if need - have:
        raise InspectorError(f"A Generative Agents memory table has the columns "
                             f"{', '.join(sorted(need))} (and node_count, embedding_key); "
                             f"this one lacks {', '.join(sorted(need - have))}.")
    q = ctx.store.table.search().with_row_id(True).limit(max(ctx.store.rows, 1))
    recs = q.to_arrow().to_pylist()
    order = {t: i for i, t in enumerate(p["types"])}
    recs = [r for r in recs if r.get("type") in order]
    recs.sort(key=lambda r: (order[r["type"]], -_count(r)))
    out: list[Scored] = []
    dropped: list[Drop] = []
    qv = np.asarray(ctx.vector, np.float64)
    for rec in recs:
        row = read_row(rec, _ROW)
        if p["skip_idle"] and "idle" in str(rec.get("embedding_key") or ""):
            dropped.append(Drop(row.id, "idle"))
            continue
        if row.vector is None or len(row.vector) != len(qv):
            dropped.append(Drop(row.id, "no_vector"))
            continue
        cos = float(np.dot(row.vector, qv) / (np.linalg.norm(row.vector) * np.linalg.norm(qv)))
        out.append(Scored(row, cos, (("cosine", cos),)))
    return Outcome(out, tuple(dropped), f"{len(out)} nodes of the stream")


def _count(rec: dict[str, Any]) -> int:
    n = rec.get("node_count")
    if isinstance(n, int):
        return n
    nid = str(rec.get("id", ""))
    return int(nid.rsplit("_", 1)[-1]) if nid.rsplit("_", 1)[-1].isdigit() else 0


def normalise(vals: list[float]) -> list[float]:
    """normalize_dict_floats(d, 0, 1): min-max to [0, 1]; all equal -> 0.5 each."""
    lo, hi = min(vals), max(vals)
    if hi - lo == 0:
        return [0.5] * len(vals)
    return [(v - lo) * 1 / (hi - lo) + 0 for v in vals]


@stage("ga_score", "transform",
       P("variant", "str", "released", "released (retrieve.py) or paper", choices=(
           "released", "paper")),
       P("recency_decay", "float", 0.99, "scratch.recency_decay (released: per rank)", 0, 1),
       P("hourly_decay", "float", 0.995, "the paper's decay per game hour", 0, 1),
       P("recency_w", "float", 1.0, "scratch.recency_w", -1e6, 1e6),
       P("relevance_w", "float", 1.0, "scratch.relevance_w", -1e6, 1e6),
       P("importance_w", "float", 1.0, "scratch.importance_w", -1e6, 1e6),
       P("gw_recency", "float", 0.5, "the released code's gw[0] (the paper: 1)", -1e6, 1e6,
         effect="weight", step=0.25),
       P("gw_relevance", "float", 3.0, "the released code's gw[1] (the paper: 1)", -1e6, 1e6,
         effect="weight", step=0.25),
       P("gw_importance", "float", 2.0, "the released code's gw[2] (the paper: 1)", -1e6,
         1e6))
def ga_score(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """recency_w * rec * gw0 + relevance_w * rel * gw1 + importance_w * imp * gw2, each
    min-max normalised over the whole stream; a stable descending sort."""
    if not rows:
        return Outcome([])
    nodes = sorted(rows, key=lambda s: _accessed(s))  # stable: the stream's order on ties
    if p["variant"] == "released":
        rec = [p["recency_decay"] ** i for i in range(1, len(nodes) + 1)]
    else:
        rec = [p["hourly_decay"] ** max(0.0, (ctx.now_ms - s.row.timestamp) / 3_600_000)
               for s in nodes]
    gw = [p["gw_recency"], p["gw_relevance"], p["gw_importance"]]
    rec_n = normalise(rec)
    imp_n = normalise([s.row.importance for s in nodes])
    rel_n = normalise([s.score for s in nodes])
    out = []
    for s, r, i, v in zip(nodes, rec_n, imp_n, rel_n, strict=True):
        score = (p["recency_w"] * r * gw[0] + p["relevance_w"] * v * gw[1]
                 + p["importance_w"] * i * gw[2])
        out.append(s.rescored(score, recency=r, importance=i, relevance=v))
    out.sort(key=lambda s: s.score, reverse=True)
    return Outcome(out, note=f"{p['variant']} weights {gw}")


def _accessed(s: Scored) -> float:
    when = parse_iso(s.row.columns.get("last_accessed"))
    return when.timestamp() if when is not None else 0.0
