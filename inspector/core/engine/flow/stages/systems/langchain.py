"""LangChain's LanceDB vector store beyond its plain search (langchain-community 0.4.2): the
entry points that drop the caller's filter, and max_marginal_relevance_search."""

from __future__ import annotations

from typing import Any

import numpy as np

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Scored


@stage("filter_dropped", "query",
       P("call", "str", "", "the entry point that drops the filter, and where (for the "
         "warning)", live=False))
def filter_dropped(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The system's own behaviour: the caller's filter (--scope, --where) never reaches
    LanceDB; the unfiltered top k comes back, with a warning naming the call."""
    where = ctx.settings.get("where") or ""
    if not ctx.scopes and not where:
        return Outcome(rows, note="no filter given")
    given = " and ".join(x for x in (f"--scope {', '.join(ctx.scopes)}" if ctx.scopes
                                     else "", f"--where {where!r}" if where else "") if x)
    ctx.warnings.append(f"the filter ({given}) is dropped, as the system drops it: {p['call']} "
                        f"does not pass it on to LanceDB, so the unfiltered top k is returned")
    ctx.scopes = None
    ctx.settings["where"] = ""
    return Outcome(rows, note=f"filter dropped by the system ({given})")


def mmr_pick(query: np.ndarray, vectors: list[np.ndarray], k: int,
             lambda_mult: float) -> list[int]:
    """LangChain's maximal_marginal_relevance (NumPy's cosine, no simsimd): the first pick
    the row most similar to the query, then each next the argmax of lambda * sim(query) -
    (1 - lambda) * max sim(picked), the first of equal scores."""
    n = min(k, len(vectors))
    if n <= 0:
        return []
    x = np.expand_dims(np.asarray(query, np.float32), 0)
    emb = np.array([list(v) for v in vectors])
    to_query = _cosine(x, emb)[0]
    picked = [int(np.argmax(to_query))]
    chosen = np.array([emb[picked[0]]])
    while len(picked) < n:
        best, add = -np.inf, -1
        to_chosen = _cosine(emb, chosen)
        for i, q in enumerate(to_query):
            if i in picked:
                continue
            score = lambda_mult * q - (1 - lambda_mult) * max(to_chosen[i])
            if score > best:
                best, add = score, i
        picked.append(add)
        chosen = np.append(chosen, [emb[add]], axis=0)
    return picked


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        sim = np.dot(a, b.T) / np.outer(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))
    sim[np.isnan(sim) | np.isinf(sim)] = 0.0
    return sim


@stage("langchain_mmr", "diversity",
       P("lambda_mult", "float", 0.5, "max_marginal_relevance_search(lambda_mult=...): 1 "
         "relevance only, 0 diversity only", 0, 1, effect="weight", step=0.05))
def langchain_mmr(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """MMR picks k of the fetched rows (their stored vectors against the query's); the picks
    come back in the fetched (distance) order, not the order they were picked."""
    if ctx.vector is None or not rows:
        return Outcome(rows[: ctx.limit])
    usable = [s for s in rows if s.row.vector is not None]
    picks = mmr_pick(ctx.vector, [s.row.vector for s in usable], ctx.limit, p["lambda_mult"])
    order = {usable[i].id: n for n, i in enumerate(picks, start=1)}
    keep = [s.rescored(s.score, mmr_pick=float(order[s.id])) for s in usable if s.id in order]
    dropped = tuple(Drop(s.id, "past_limit", (("mmr", "not picked"), ("limit", ctx.limit)))
                    for s in rows if s.id not in order)
    return Outcome(keep, dropped, note=f"picked {len(keep)} of {len(rows)} by MMR "
                   f"(lambda {p['lambda_mult']:g}); returned in the fetched order")
