"""What a probe's run will ask of the pool source, read before the run: the classic fetch
stage's (`lancedb_pool`) query and parameters. With them one batched scan gives every probe its
vector leg (the pool source's cache is warmed with the very pool the stage would fetch, so the
run itself is unchanged), and the stages after the fetch say whether the outrank proof holds.

The proof (`engine.blend`) needs: one vector leg scored 1 / (1 + d) on squared L2, no filter and
no other fetch, then at most a re-score that multiplies by at most 1 (the importance blend),
ties in LanceDB's order, a min score and the limit. Here that is read from the route's stages
and their parameters, never from a preset's name: query stages of kind `scope_rule` only, one
`lancedb_pool`, then some of `scope_filter`, `importance_blend`, `min_score` (not dropping
expired rows), `limit`, in that order, the limit last. What depends on the parameters (vector
mode, L2, the tie rule) is `blend.outrank_refusal`'s, on the Params given here; an active
scope needs the scope filter among those stages, with the rule the fetch was given.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Query
from inspector.core.errors import InspectorError

POOL = "lancedb_pool"  # the fetch stage that asks the pool source (which takes scanned legs)
TAIL = ("scope_filter", "importance_blend", "min_score", "limit")  # the proof's stages, in order


@dataclass(frozen=True)
class Request:
    """The fetch stage `stage`'s request to the pool source, and the parameters the outrank
    proof reads (or why it does not hold for this probe's stages)."""

    stage: str
    query: Query
    params: Params
    outrank: Params | str
    # the min score stage's name and its `min` as the stage reads it (None: no min score),
    # for a verdict the shortcut proves there (`outrank.Shortcut.below`)
    cut: tuple[str, Any] | None = None


class Planner:
    """`Request`s of one pipeline's probes. The walk over the stages up to the fetch runs once
    per scope list when the query stages before the fetch are scope rules (which read only
    the scopes and their parameters); each probe's query is its own."""

    def __init__(self, store: Any, spec: Any, limit: int | None, now_ms: float) -> None:
        self.store, self.spec, self.limit, self.now_ms = store, spec, limit, now_ms
        self._walks: dict[Any, tuple[str, Params, Params | str, Any] | str] = {}
        self._barriers: dict[Any, Any] = {}

    def barrier(self, *, text: str | None, scopes: tuple[str, ...] | None) -> Any:
        """The scope filter of the route a probe's run takes that no change gets past
        (`flow.insight.expect.scope_barrier`), or None; once per scope list and tags."""
        from inspector.core.engine.flow.insight.expect import scope_barrier
        from inspector.core.engine.flow.runner import choose_route, context

        ctx = context(self.store, self.spec, text=text, vector=None, scopes=scopes,
                      limit=self.limit, now_ms=self.now_ms)
        key = (scopes, ctx.settings["_tags"])
        if key not in self._barriers:
            try:
                route = choose_route(self.spec, ctx)
            except InspectorError:  # the run says it again, in its own words
                self._barriers[key] = None
            else:
                self._barriers[key] = scope_barrier(
                    [(st.name, st.kind, kind_of(st.kind).role,
                      kind_of(st.kind).resolve(st.params, st.name)) for st in route.stages],
                    scopes, self.store.roles)
        return self._barriers[key]

    def request(self, *, text: str | None, vector: np.ndarray | None,
                scopes: tuple[str, ...] | None, source: str) -> Request | str:
        """What the probe's run will ask the pool source, or why no leg can be handed to it
        (a fetch stage that searches LanceDB itself, a query the run will refuse)."""
        from inspector.core.engine.flow.runner import context
        from inspector.core.engine.flow.stages.classic import query_of

        ctx = context(self.store, self.spec, text=text, vector=vector, scopes=scopes,
                      limit=self.limit, now_ms=self.now_ms, query_source=source)
        key = (scopes, ctx.settings["_tags"])
        got = self._walks.get(key)
        if got is None:
            got, same = _walk(self.spec, ctx)
            if same:
                self._walks[key] = got
        if isinstance(got, str):
            return got
        return Request(got[0], query_of(ctx), got[1], got[2], got[3])


def _walk(spec: Any, ctx: Any) -> tuple[tuple[str, Params, Params | str, Any] | str, bool]:
    """The route's stages up to its first fetch, run as the run will (query stages on an
    empty list): the fetch stage, its Params, the outrank Params (or why none) and the min
    score stage after it (`Request.cut`), or why none; and whether another probe with the
    same scopes walks the same (only scope rules ran)."""
    from inspector.core.engine.flow.runner import choose_route
    from inspector.core.engine.flow.stages.classic import fetch_params

    same = True
    try:
        route = choose_route(spec, ctx)
        stages = [(st.name, st.kind, kind_of(st.kind).resolve(st.params, st.name))
                  for st in route.stages]
        for n, (name, kind, params) in enumerate(stages):
            role = kind_of(kind).role
            if role == "query":
                same = same and kind == "scope_rule"
                ctx.stage = name
                kind_of(kind).fn(ctx, [], params)
                continue
            if role != "fetch" or kind != POOL:
                return _searches_itself(spec), same
            ctx.stage = name
            p = fetch_params(ctx, params)
            cut = next(((nm, prm["min"]) for nm, kd, prm in stages[n + 1:]
                        if kd == "min_score"), None)
            return (name, p, _outrank(stages, n, p, ctx.request.get("scope_spec")), cut), same
    except InspectorError as exc:  # the run says it again, in its own words
        return str(exc).rstrip("."), same
    return _searches_itself(spec), same


def _searches_itself(spec: Any) -> str:
    kinds = sorted({st.kind for r in spec.routes for st in r.stages
                    if kind_of(st.kind).role == "fetch"})
    return (f"{spec.name}'s fetch stages ({', '.join(kinds)}) search LanceDB themselves; the "
            f"batched scan serves the pool source's fetch ({POOL})")


def _outrank(stages: list[tuple[str, str, dict[str, Any]]], at: int, p: Params,
             rule: Any = None) -> Params | str:
    """The Params the outrank proof reads for these stages (the fetch at `at`; `rule` the
    scope the scope rule set, which the scope filter applies), or why the stages are not the
    ones it is proved for."""
    for name, kind, _ in stages[:at]:
        if kind != "scope_rule":
            return f"stage {name} ({kind}) runs before the fetch"
    tail = stages[at + 1:]
    order = [TAIL.index(kind) if kind in TAIL else -1 for _, kind, _ in tail]
    bad = next((i for i, o in enumerate(order) if o < 0 or (i and o <= order[i - 1])), None)
    if bad is not None:
        name, kind, _ = tail[bad]
        return (f"stage {name} ({kind}) is not one the outrank proof covers (after the "
                f"fetch: scope filter, importance blend, min score, limit, in that order)")
    if not tail or tail[-1][1] != "limit":
        return "the pipeline does not end with its limit"
    by = {kind: params for _, kind, params in tail}
    if p.scope_spec().active:  # the proof keeps the rows the pool holds and the filter keeps
        if "scope_filter" not in by:
            return "a scope is active and no scope filter follows the fetch"
        if rule != p.scope_spec():
            return "the scope filter's rule is not the one the fetch was given"
    blend, cut = by.get("importance_blend"), by.get("min_score")
    if cut is not None and cut["drop_expired"]:
        return "its min score also drops expired rows"
    if blend is not None and not 0 <= blend["weight"] <= 1:
        return "the importance blend's weight is outside [0, 1]: it can raise a score"
    return p.with_(blend=float(blend["weight"]) if blend else 0.0,
                   default_importance=float(blend["default_importance"]) if blend else 0.7,
                   min_score=float(cut["min"]) if cut else -sys.float_info.max)
