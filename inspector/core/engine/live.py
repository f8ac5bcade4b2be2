"""The live session: one Qt-free object that takes a store, a query and parameters to traces,
for the window and anything else that re-ranks live.

It owns the deep fetch (deep enough for every over-fetch up to MAX_OVERFETCH), one lane per
filter placement (post-filter and pushdown side by side), the deeper probe a scope miss is
diagnosed from, and the caches derived from them. It knows which parameters re-rank without a
new query (LIVE_KEYS) and holds the one rule for whether its cached pools answer a parameter
set exactly (`answers`); when they do not, `refetched` returns a session fetched for those
parameters, so a caller never shows a derived answer that a fresh `pipeline.run` would not give.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from inspector.core.engine.expect import Expectation, analyse, exhaustive_pool
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import (
    cannot_answer,
    derive,
    fetch_for,
    fetch_probe,
    probe_applies,
)
from inspector.core.engine.pool import Pool, Query
from inspector.core.engine.trace import Trace
from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store

LIVE_KEYS = ("overfetch", "blend", "min_score")  # re-derived from the cached pools, no fetch
MAX_OVERFETCH = 20.0  # the over-fetch slider's top: one fetch serves every slider position
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
        self._exhaustive: dict[int, Pool] = {}

    # ---- building ----
    @classmethod
    def fetch(cls, store: Store, query: Query, params: Params,
              placements: Sequence[str] = (), max_overfetch: float = MAX_OVERFETCH,
              cancelled: Cancelled | None = None) -> LiveSession:
        """Fetch one pool per placement (default: the parameters' own) deep enough for every
        live position, and the probe a post-filter scope miss is diagnosed from."""
        lanes = []
        for placement in placements or (params.filter,):
            _check(cancelled)
            p = params.with_(filter=placement)
            pool = fetch_for(store, query, p, max_overfetch=max_overfetch)
            _check(cancelled)
            lanes.append(Lane(placement, pool, fetch_probe(store, query, p, pool)))
        session = cls(store, query, params, tuple(lanes), max_overfetch)
        session.warm(params)
        return session

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
            out.append(derive(lane.pool, p, probe=lane.probe_for(p), hints=self._hints[n]))
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
        """Where each expected id is dropped, per lane. The exhaustive ranking each lane needs
        is fetched once per session and reused for every slider position."""
        if self.store is None:
            raise InspectorError("Expected-row analysis searches the store, and this receipt "
                                 "is open without it; open the store to analyse expected rows.")
        out = []
        for n, trace in enumerate(traces):
            _check(cancelled)
            if n not in self._exhaustive:
                self._exhaustive[n] = exhaustive_pool(self.store, self.query, trace.params)
            out.append(analyse(self.store, self.query, trace, list(ids),
                               pool=self._exhaustive[n]))
        return tuple(out)


def _check(cancelled: Cancelled | None) -> None:
    if cancelled is not None and cancelled():
        raise Superseded("Superseded by a newer request.")
