"""Ground truth without judgments: what the scope should have returned, from one deep pool.

The truth is a prefiltered search computed in memory: only the pool's in-scope rows (by the
post-filter's own rule), each leg re-ranked within the scope, then scored, fused, blended,
min-score filtered and cut to the limit exactly as `pipeline.derive` does. Vector and
full-text legs are unlimited, so the truth is the exact in-scope ranking. Hybrid legs keep
their configured depth, max(limit, fts_k, vec_k), because reciprocal-rank-fusion scores depend
on leg depth: an unlimited-leg fusion is a different ranking, not a better one.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import numpy as np

from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pool import Leg, Pool

_LegSpec = tuple[np.ndarray, int, bool] | None  # original rows in leg order, depth, exhausted


def _sub_leg(leg: Leg | None, spec: _LegSpec, remap: np.ndarray, n: int
             ) -> tuple[Leg | None, np.ndarray, np.ndarray]:
    """A leg restricted to the given original rows (in leg order), re-ranked from 0."""
    rank = np.full(n, -1, np.int64)
    value = np.full(n, np.nan)
    if leg is None or spec is None:
        return None, rank, value
    rows, depth, exhausted = spec
    pos = np.full(remap.shape[0], -1, np.int64)
    pos[leg.rows] = np.arange(len(leg.rows))
    values = leg.values[pos[rows]]
    new_rows = remap[rows]
    rank[new_rows] = np.arange(len(new_rows))
    value[new_rows] = values
    return Leg(rows=new_rows, values=values, depth=depth, exhausted=exhausted), rank, value


_RECOMPUTED = {"ids", "id_order", "vec_rank", "vec_dist", "fts_rank", "fts_score", "vec_leg",
               "fts_leg", "columns"}


def _subset(pool: Pool, keep: np.ndarray, vec: _LegSpec, fts: _LegSpec) -> Pool:
    """A pool of the kept rows. Every other per-row field (an array or list as long as the
    pool) is subset generically, so fields added to Pool later follow along."""
    idx = np.flatnonzero(keep)
    n = len(idx)
    remap = np.full(pool.size, -1, np.int64)
    remap[idx] = np.arange(n)
    id_order = np.empty(n, np.int64)
    id_order[np.argsort(pool.id_order[idx], kind="stable")] = np.arange(n)
    vec_leg, vec_rank, vec_dist = _sub_leg(pool.vec_leg, vec, remap, n)
    fts_leg, fts_rank, fts_score = _sub_leg(pool.fts_leg, fts, remap, n)
    rest: dict[str, Any] = {}
    for f in fields(pool):
        v = getattr(pool, f.name)
        if f.name in _RECOMPUTED:
            continue
        if isinstance(v, np.ndarray) and v.shape[:1] == (pool.size,):
            rest[f.name] = v[idx]
        elif isinstance(v, list) and len(v) == pool.size:
            rest[f.name] = [v[i] for i in idx]
    return replace(
        pool, ids=pool.ids[idx], id_order=id_order,
        columns={c: [v[i] for i in idx] for c, v in pool.columns.items()},
        vec_rank=vec_rank, vec_dist=vec_dist, fts_rank=fts_rank, fts_score=fts_score,
        vec_leg=vec_leg, fts_leg=fts_leg, **rest)


def scoped_pool(pool: Pool) -> Pool:
    """The pool's in-scope rows only, legs re-ranked within the scope: a prefiltered search."""
    keep = np.asarray(pool.in_scope, bool)
    specs: list[_LegSpec] = []
    for leg in (pool.vec_leg, pool.fts_leg):
        rows = None if leg is None else leg.rows[keep[leg.rows]]
        specs.append(None if rows is None else (rows, len(rows), True))
    return _subset(pool, keep, specs[0], specs[1])


def trim_pool(pool: Pool, depth: int) -> Pool:
    """The pool a fetch with every leg at `depth` would have returned: each leg's first rows.

    Exact for flat search, where a shallow fetch is a prefix of a deep one."""
    keep = np.zeros(pool.size, bool)
    specs: list[_LegSpec] = []
    for leg in (pool.vec_leg, pool.fts_leg):
        if leg is None:
            specs.append(None)
        elif depth >= leg.depth:
            specs.append((leg.rows, leg.depth, leg.exhausted))
        else:
            specs.append((leg.rows[:depth], depth, len(leg.rows[:depth]) < depth))
        if specs[-1] is not None:
            keep[specs[-1][0]] = True
    return _subset(pool, keep, specs[0], specs[1])


def truth_params(p: Params, scoped: Pool) -> Params:
    """p with the truth's depth: every in-scope row, or the configured legs for hybrid."""
    if p.mode == "hybrid":
        depth = max(p.limit, p.vec_k, p.fts_k)
    else:
        legs = [leg.depth for leg in (scoped.vec_leg, scoped.fts_leg) if leg is not None]
        depth = max([p.limit, *legs])
    return p.with_(overfetch=depth / p.limit, cap=0)


def truth_ids(pool: Pool, p: Params, scoped: Pool | None = None) -> list[Any]:
    """The ids the scope should have returned for p, best first (at most p.limit)."""
    sub = scoped if scoped is not None else scoped_pool(pool)
    if sub.size == 0:
        return []
    t = derive(sub, truth_params(p.with_(filter=sub.placement), sub))
    return [sub.ids[r] for r in t.stage("final").rows]


def is_complete(pool: Pool, table_rows: int) -> bool:
    """True when every leg reached the end of its ranking, so no in-scope row is missing."""
    legs = [leg for leg in (pool.vec_leg, pool.fts_leg) if leg is not None]
    return all(leg.exhausted or leg.depth >= table_rows for leg in legs)
