"""The retrieval pipeline: raw -> scoped -> blended -> final, derived from a fetched pool.

`derive` is pure numpy over a pool and never touches LanceDB, so the window's sliders and the
sweeps re-rank from one deep fetch; `run` asks the pool source (`pools`) for exactly the
depth the parameters need and derives from that. For exact (flat) search both give identical
results; a property test proves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from inspector.core.engine import ties
from inspector.core.engine.blend import blend_scores, importance_used, multiplier, vector_score
from inspector.core.engine.diagnosis import ScopeHint, diagnose
from inspector.core.engine.index_rule import prefix_exact
from inspector.core.engine.params import Depths, Params, depths
from inspector.core.engine.pool import Pool, Query
from inspector.core.engine.pools import (
    PROBE_DEPTH,
    cannot_answer,
    fetch,
    fetch_probe,
    first_depths,
    one_search_probe,
    probe_depth,
)
from inspector.core.engine.trace import Stage, Trace
from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store


def check_compatible(pool: Pool, p: Params) -> Depths:
    """The depths p needs, or an error if this pool cannot answer for p exactly."""
    reason = cannot_answer(pool, p)
    if reason is not None:
        raise InspectorError(f"These parameters need a new query: {reason}.")
    return depths(p)


def scope_miss(counters: dict[str, int]) -> bool:
    """More than half the raw candidates out of scope: worth a deeper probe for the hint."""
    raw = counters["rawCandidates"]
    return raw > 0 and counters["filteredByScope"] * 2 > raw


def _leg_ranks(rank: np.ndarray, k: int) -> np.ndarray:
    """1-based rank within the leg's first k rows, 0 elsewhere."""
    inside = (rank >= 0) & (rank < k)
    return np.where(inside, rank + 1, 0)


def _raw_order(pool: Pool, p: Params, d: Depths, vr: np.ndarray, fr: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Raw stage row order, base score and fused score per pool row."""
    n = pool.size
    fused = np.full(n, np.nan)
    if p.mode == "vector":
        rows = pool.vec_leg.rows[: d.pool]
        base = vector_score(pool.vec_dist)
    elif p.mode == "fts":
        rows = pool.fts_leg.rows[: d.pool]
        base = pool.fts_score / (1.0 + pool.fts_score)
    else:
        order, fused = ties.fuse(pool, p, vr, fr)  # the system's tie rule (Params.tie_rule)
        rows = order[: d.pool]
        base = fused
    return rows, base, fused


def _positions(n: int, rows: np.ndarray) -> np.ndarray:
    out = np.zeros(n, np.int64)
    out[rows] = np.arange(1, len(rows) + 1)
    return out


def derive(pool: Pool, p: Params, probe: Pool | None = None,
           hints: dict[Any, ScopeHint] | None = None) -> Trace:
    """Every stage for parameters p, computed from the pool alone. `hints` is a caller-owned
    cache for a hybrid scope miss's depth hint (a LiveSession keeps one per lane)."""
    d = check_compatible(pool, p)
    n = pool.size
    vr = _leg_ranks(pool.vec_rank, d.vec_k) if pool.vec_leg is not None else np.zeros(n, int)
    fr = _leg_ranks(pool.fts_rank, d.fts_k) if pool.fts_leg is not None else np.zeros(n, int)
    raw, base, fused = _raw_order(pool, p, d, vr, fr)
    in_raw = np.zeros(n, bool)
    in_raw[raw] = True
    base = np.where(in_raw, base, np.nan)
    scoped = raw[pool.in_scope[raw]]
    imp, mult, score = blend_scores(base, pool.importance, pool.missing_importance(),
                                    p.default_importance, p.blend)
    blended = ties.resort(pool, p, scoped, score)
    keep = blended[score[blended] >= p.min_score]
    final = keep[: p.limit]
    page = blended[: p.limit]  # the page a min score of 0 would return
    counters = {"rawCandidates": len(raw), "scopedCandidates": len(scoped),
                "filteredByScope": len(raw) - len(scoped),
                "belowMinScore": len(blended) - len(keep), "returned": len(final)}
    stages = (Stage("raw", raw), Stage("scoped", scoped), Stage("blended", blended),
              Stage("final", final))
    trace = Trace(pool=pool, params=p, depths=d, vec_rank=vr, fts_rank=fr, base=base,
                  fused=fused, importance_used=np.where(in_raw, imp, np.nan),
                  multiplier=np.where(in_raw, mult, np.nan), score=score,
                  raw_rank=_positions(n, raw), rank_before=_positions(n, scoped),
                  rank_after=_positions(n, blended), final_rank=_positions(n, final),
                  stages=stages, counters=counters,
                  diagnosis=diagnose(counters, p,
                                     _scope_hint(probe, p, hints) if scope_miss(counters)
                                     else None,
                                     rows=pool.store.get("rows"),
                                     page_score=float(score[page[-1]]) if len(page) else None),
                  warnings=pool.warnings)
    return trace


def finals_grid(pool: Pool, p: Params, overfetch: Sequence[float], blend: Sequence[float],
                min_score: Sequence[float]) -> list[list[list[np.ndarray]]] | None:
    """`derive(pool, p.with_(overfetch=f, blend=w, min_score=m)).stage("final").rows` for a
    sweep's whole grid, as out[j][m][i] (w = blend[j], m = min_score[m], f = overfetch[i]):
    one blended order per blend weight. A shallower cell's raw rows are a prefix of a deeper
    one's, so are its in-scope rows, and the blended order of a subset is the deeper order
    restricted to it (both tie rules sort by a key that does not depend on the set); the pool
    answers a cell or not whatever its blend and min score, so each depth is checked once.
    None where that does not hold (hybrid: fused scores move with the legs' depths)."""
    if p.mode == "hybrid" or not overfetch:
        return None
    ds = [check_compatible(pool, p.with_(overfetch=f)) for f in overfetch]
    d = max(ds, key=lambda x: x.pool)
    n = pool.size
    none = np.zeros(n, int)
    raw, base, _ = _raw_order(pool, p, d, none, none)  # vector or full-text: one leg's rows
    scoped = raw[pool.in_scope[raw]]
    at = np.full(n, n, np.int64)
    at[raw] = np.arange(len(raw))  # raw position: a cell keeps the rows above its depth
    imp = importance_used(pool.importance, pool.missing_importance(), p.default_importance)
    out = []
    for w in blend:
        score = base * multiplier(imp, w)
        blended = ties.resort(pool, p, scoped, score)
        by_min = []
        for m in min_score:
            passed = blended[score[blended] >= m]
            by_min.append([passed[at[passed] < c.pool][: p.limit] for c in ds])
        out.append(by_min)
    return out


def _scope_hint(probe: Pool | None, p: Params,
                hints: dict[Any, ScopeHint] | None = None) -> ScopeHint | None:
    """Global ranks of the first and the limit-th in-scope row in a deeper, unfiltered probe."""
    if probe is None or probe.placement != "post":
        return None
    cut = probe_depth(p, int(probe.store.get("rows") or 0))
    if p.mode == "hybrid":
        # scanning depths costs ~ms per depth: cache per probe and the knobs the scan reads
        key = (p.with_(overfetch=1.0, blend=0.0, min_score=0.0), cut)
        if hints is None:
            return _hybrid_hint(probe, p, cut)
        if key not in hints:
            hints[key] = _hybrid_hint(probe, p, cut)
        return hints[key]
    n = probe.size
    dv = min(probe.vec_leg.depth, cut) if probe.vec_leg is not None else 0
    df = min(probe.fts_leg.depth, cut) if probe.fts_leg is not None else 0
    d = Depths(pool=max(dv, df), vec_k=dv, fts_k=df)
    vr = _leg_ranks(probe.vec_rank, dv) if dv else np.zeros(n, int)
    fr = _leg_ranks(probe.fts_rank, df) if df else np.zeros(n, int)
    raw, _, _ = _raw_order(probe, p, d, vr, fr)
    hits = np.flatnonzero(probe.in_scope[raw]) + 1
    return ScopeHint(probe_depth=len(raw), first_rank=int(hits[0]) if len(hits) else None,
                     page_rank=int(hits[p.limit - 1]) if len(hits) >= p.limit else None)


def _hybrid_hint(probe: Pool, p: Params, cut: int) -> ScopeHint:
    """Fused scores move with the legs' depth, so try each pool depth as the real engine would
    run it, and report the first depth that brings one in-scope row, then a full page."""
    deepest = min([cut] + [leg.depth for leg in (probe.vec_leg, probe.fts_leg) if leg is not None])
    first = page = None
    for depth in range(p.limit, deepest + 1):
        d = depths(p.with_(overfetch=depth / p.limit, cap=0))
        if max(d.vec_k, d.fts_k) > deepest:
            break
        vr = _leg_ranks(probe.vec_rank, d.vec_k)
        fr = _leg_ranks(probe.fts_rank, d.fts_k)
        raw, _, _ = _raw_order(probe, p, d, vr, fr)
        found = int(np.count_nonzero(probe.in_scope[raw]))
        first = depth if first is None and found else first
        if found >= p.limit:
            page = depth
            break
    return ScopeHint(probe_depth=deepest, first_rank=first, page_rank=page)


def probe_applies(probe: Pool | None, p: Params) -> Pool | None:
    """The probe when `run` would use one for p (it reaches past p's pool), else None. A probe
    fetched deeper (the window fetches one for every slider position) is read only as deep as
    `run` would fetch, so both give the same diagnosis."""
    if probe is None:
        return None
    return probe if probe_depth(p, int(probe.store.get("rows") or 0)) > depths(p).pool else None


PROBE_MODES = ("auto", "on")  # --scope-probe: auto probes only where it costs no ANN search


def probe_deferred(index: object, p: Params) -> bool:
    """True when `auto` leaves a post-filter scope miss unprobed: the vector leg goes through
    an ANN index, so the probe would be a second, deeper approximate search (on IVF_PQ 100k
    it tripled the query's time) and the answer must not wait for it."""
    return p.filter == "post" and p.scope_spec().active and not prefix_exact(index, p)


def probe_note(trace: Trace) -> Trace:
    """The trace, saying so when its scope miss was left unprobed (see `probe_deferred`)."""
    if not scope_miss(trace.counters):
        return trace
    kind = getattr(trace.pool.index, "type", None) or "vector"
    note = (f"the scope miss was not probed deeper: on the {kind} index that is a second "
            f"search (to depth {PROBE_DEPTH:,}); add --scope-probe on for the depth that "
            "brings in-scope rows")
    return replace(trace, warnings=(*trace.warnings, note))


def run(store: Store, query: Query, p: Params,
        vec_leg: tuple[Any, bool, float] | None = None, probe: str = "auto") -> Trace:
    """Fetch exactly what p needs and derive every stage. On a scope miss, probe deeper once
    so the diagnosis can say where the in-scope rows sit and which over-fetch would reach them:
    with `probe="auto"` only where that is the same exact search (see `probe_deferred`), with
    "on" always. `vec_leg`: the vector leg at `first_depths` already fetched (a batched scan)."""
    if probe not in PROBE_MODES:
        raise InspectorError(f"The scope probe is one of {', '.join(PROBE_MODES)}.")
    vec_k, fts_k = first_depths(store, p)
    pool = fetch(store, query, p, vec_k, fts_k, vec_leg)
    if one_search_probe(store, p):  # the pool and the probe from one deep, exact search
        return derive(pool, p, probe=probe_applies(pool, p))
    trace = derive(pool, p)
    if scope_miss(trace.counters):
        if probe == "auto" and probe_deferred(getattr(store, "vector_index", None), p):
            return probe_note(trace)
        probe_pool = probe_applies(fetch_probe(store, query, p, pool), p)
        if probe_pool is not None:
            trace = derive(pool, p, probe=probe_pool)
    return trace
