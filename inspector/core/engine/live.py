"""The live session: one Qt-free object that takes a store, a query and parameters to traces,
for the window and anything else that re-ranks live.

It holds one lane per filter placement (post-filter and pushdown side by side), each with the
deep pool (deep enough for every over-fetch up to MAX_OVERFETCH where the search is
prefix-exact) and the deeper probe a scope miss is diagnosed from, all asked of the pool source
(`pools`, the only fetcher), and the caches derived from them. It knows which parameters
re-rank without a new query (LIVE_KEYS) and asks the one rule (pools.cannot_answer) whether its
pools answer a parameter set exactly (`answers`); when they do not, `refetched` returns a
session fetched for those parameters, so a caller never shows a derived answer that a fresh
`pipeline.run` would not give.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from inspector.core.engine import pools
from inspector.core.engine.ann.facet import facet_from, with_facet
from inspector.core.engine.expect import Expectation, analyse
from inspector.core.engine.index_rule import used_index
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive, probe_applies, probe_deferred, probe_note
from inspector.core.engine.pool import Pool, Query
from inspector.core.engine.pools import MAX_OVERFETCH, cannot_answer
from inspector.core.engine.trace import Fix, Trace
from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store

LIVE_KEYS = ("overfetch", "blend", "min_score")  # re-derived from the cached pools, no fetch
PLACEMENTS = ("post", "pushdown")
Cancelled = Callable[[], bool]

_DEFAULTS = {f.name: f.default for f in fields(Params) if f.name in LIVE_KEYS}


class Superseded(InspectorError):
    """The caller gave up on this work (a newer request superseded it)."""


def fetch_key(p: Params) -> Params:
    """Everything but the live knobs: what a cached pool was fetched for."""
    return p.with_(**_DEFAULTS)


@dataclass(frozen=True)
class Lane:
    """One filter placement's cached pool, plus the deep probe `run` would use for a miss."""

    placement: str
    pool: Pool
    probe: Pool | None

    def probe_for(self, p: Params) -> Pool | None:
        """The probe exactly when pipeline.run would use one for these parameters."""
        return probe_applies(self.probe, p)


class LiveSession:
    """Cached pools for one store, query and fetch key; traces for any live parameters."""

    def __init__(self, store: Store | None, query: Query, key: Params,
                 lanes: tuple[Lane, ...], max_overfetch: float = MAX_OVERFETCH) -> None:
        self.store, self.query, self.key = store, query, fetch_key(key)  # as fetched
        self.lanes = lanes
        self.max_overfetch = max_overfetch
        self._hints: tuple[dict[Any, Any], ...] = tuple({} for _ in lanes)
        self._exact: dict[int, Pool] = {}  # per lane: the flat search beside an ANN index
        self._exhaustive: dict[int, Pool] = {}  # per lane: the ranking expected rows read

    # ---- building ----
    @classmethod
    def fetch(cls, store: Store, query: Query, params: Params,
              placements: Sequence[str] = (), max_overfetch: float = MAX_OVERFETCH,
              cancelled: Cancelled | None = None, fresh: bool = False) -> LiveSession:
        """Fetch one pool per placement (default: the parameters' own) deep enough for every
        live position, and the probe a post-filter scope miss is diagnosed from. Every pool
        is asked of the pool source, so a session fetched before for these knobs and depths
        (a drag back over an HNSW index) searches nothing; `fresh` searches the store again
        (a query the user runs: a version removed under the open store is said)."""
        lanes = []
        for placement in placements or (params.filter,):
            _check(cancelled)
            p = params.with_(filter=placement)
            # where a deep approximate fetch is not a prefix of a shallow one (HNSW, refine),
            # the policy fetches exactly the depth asked: its answer is LanceDB's own
            pool = pools.fetch(store, query, p, *pools.depth_for(
                "live", store, p, max_overfetch=max_overfetch), fresh=fresh)
            _check(cancelled)
            # as `run` does by default: no second ANN search for a scope miss's depth hint
            probe = None if probe_deferred(getattr(store, "vector_index", None), p) \
                else pools.fetch_probe(store, query, p, pool, fresh)
            lanes.append(Lane(placement, pool, probe))
        session = cls(store, query, params, tuple(lanes), max_overfetch)
        session.fetch_exact(cancelled, fresh)
        session.warm(params)
        return session

    def fetch_exact(self, cancelled: Cancelled | None = None, fresh: bool = False) -> None:
        """On an indexed table, one exact (flat) search per lane as deep as its pool: flat
        results are prefix-exact, so it gives every slider position its index facet (exact
        ranks, rows lost to the index, ANN recall) as a fresh `facet.attach` would."""
        if self.store is None:
            return
        for n, lane in enumerate(self.lanes):
            p = self.lane_params(self.key, n)
            if n in self._exact or lane.pool.vec_leg is None \
                    or used_index(lane.pool.index, p) is None:
                continue
            _check(cancelled)
            fts = lane.pool.fts_leg.depth if lane.pool.fts_leg is not None else 0
            self._exact[n] = pools.exact_pool(self.store, self.query, p,
                                              lane.pool.vec_leg.depth, fts, fresh)

    @classmethod
    def of_pool(cls, pool: Pool, params: Params) -> LiveSession:
        """A session over a pool without its store (a reopened receipt): one lane, whose probe
        is the pool itself, as a receipt's own trace was derived. Nothing can be refetched."""
        probe = pool if params.filter == "post" else None
        return cls(None, pool.query, params, (Lane(params.filter, pool, probe),))

    def warm(self, params: Params) -> None:
        """Fill the caches the first live tick would otherwise fill (a hybrid miss's depth
        hint scans many depths): call it off the GUI thread."""
        if self.answers(params):
            self.traces(params)

    # ---- the one rule ----
    @property
    def placements(self) -> tuple[str, ...]:
        return tuple(lane.placement for lane in self.lanes)

    def why_not(self, params: Params, placements: Sequence[str] = ()) -> str | None:
        """None when the cached pools answer `params` exactly as a fresh run would; else the
        reason a new query is needed (pipeline.cannot_answer, lane by lane)."""
        if params.filter not in self.placements:
            return "the filter placement changed"
        if placements and tuple(placements) != self.placements:
            return "the filter placements shown changed"
        for n, lane in enumerate(self.lanes):
            reason = cannot_answer(lane.pool, self.lane_params(params, n))
            if reason is not None:
                return reason
        return None

    def answers(self, params: Params, placements: Sequence[str] = ()) -> bool:
        return self.why_not(params, placements) is None

    def runnable(self, params: Params, fixes: Sequence[Fix]) -> tuple[Fix, ...]:
        """The fixes that can run from here: all of them with a store to fetch from; without
        one (a receipt) only those its pools answer exactly."""
        if self.store is not None:
            return tuple(fixes)
        return tuple(f for f in fixes if self.answers(params.with_(**dict(f.changes))))

    # ---- answers ----
    def lane_params(self, params: Params, n: int) -> Params:
        return params.with_(filter=self.lanes[n].placement)

    def traces(self, params: Params) -> tuple[Trace, ...]:
        """Every lane's trace for `params` (pure numpy over the cached pools, ~0.1 ms)."""
        reason = self.why_not(params)
        if reason is not None:
            raise InspectorError(f"These parameters need a new query: {reason}.")
        out = []
        for n, lane in enumerate(self.lanes):
            p = self.lane_params(params, n)
            t = derive(lane.pool, p, probe=lane.probe_for(p), hints=self._hints[n])
            if lane.probe is None and self.store is not None \
                    and probe_deferred(lane.pool.index, p):
                t = probe_note(t)
            exact = self._exact.get(n)
            if exact is not None and used_index(lane.pool.index, p) is not None:
                t = with_facet(t, *facet_from(t, exact))
            out.append(t)
        return tuple(out)

    def refetched(self, params: Params, placements: Sequence[str] = (),
                  cancelled: Cancelled | None = None) -> LiveSession:
        """A session that answers `params`: this one when it can, else a fresh fetch."""
        if self.answers(params, placements):
            return self
        if self.store is None:
            raise InspectorError("This pool was opened without its store, so it cannot be "
                                 "fetched again; open the store to change these parameters.")
        if not placements:
            placements = self.placements if params.filter in self.placements \
                else (params.filter,)
        return LiveSession.fetch(self.store, self.query, params, placements,
                                 self.max_overfetch, cancelled)

    def expectations(self, traces: Sequence[Trace], ids: Sequence[str],
                     cancelled: Cancelled | None = None) -> tuple[tuple[Expectation, ...], ...]:
        """Where each expected id is dropped, per lane, from the exhaustive ranking each lane
        needs: asked of the pool source, so it is fetched once for every slider position (and
        not at all after a sweep or receipt of the same query fetched it)."""
        if self.store is None:
            raise InspectorError("Expected-row analysis searches the store, and this receipt "
                                 "is open without it; open the store to analyse expected rows.")
        out = []
        for n, trace in enumerate(traces):
            _check(cancelled)
            if n not in self._exhaustive:  # held for every slider position, as lanes are
                self._exhaustive[n] = pools.exhaustive_pool(self.store, self.query,
                                                            trace.params)
            out.append(analyse(self.store, self.query, trace, list(ids),
                               pool=self._exhaustive[n]))
        return tuple(out)


class CellPools:
    """The pool that answers each cell of a sweep exactly as `pipeline.run` would: the cached
    deep pool where `cannot_answer` allows, else one the pool source holds that answers the
    cell (consecutive cells of a blend or min score axis share one query), else the cell's
    own query (`run`'s own fetch). Pools are held by the pool source, within its bound."""

    def __init__(self, store: Store | None, query: Query, pool: Pool | None) -> None:
        self.store, self.query, self.pool = store, query, pool

    def pool_for(self, p: Params) -> tuple[Pool, bool]:
        """The pool answering p, and whether it is p's own query."""
        if self.pool is not None and cannot_answer(self.pool, p) is None:
            return self.pool, False
        if self.store is None:
            raise InspectorError("This pool was opened without its store, so it cannot be "
                                 "fetched again; open the store to change these parameters.")
        return pools.answering(self.store, self.query, p), True


def _check(cancelled: Cancelled | None) -> None:
    if cancelled is not None and cancelled():
        raise Superseded("Superseded by a newer request.")
