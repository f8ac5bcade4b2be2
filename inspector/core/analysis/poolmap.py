"""A 2-D map of a candidate pool and its query: PCA in numpy, with scope flags and the cut.

The pool holds no vectors, so they are read by id in one separate LanceDB lookup. The
projection is fitted on the pool's vectors (the query is projected, not fitted), component
signs are fixed so the largest loading is positive, and the map is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.engine.pool import Pool
from inspector.core.engine.trace import Trace
from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store

MAX_POINTS = 1500


def fetch_vectors(store: Store, ids: list[Any]) -> np.ndarray:
    """Vectors of the given ids, in that order (one lookup; NaN rows for ids not found)."""
    from lancedb.expr import col, lit

    id_col, vec_col = store.roles.id, store.roles.vector
    out = np.full((len(ids), store.dim), np.nan, np.float32)
    if not ids:
        return out
    numeric = pa.types.is_integer(store.schema.field(id_col).type)
    keys = [int(x) if numeric else str(x) for x in ids]
    got = (store.table.search().where(col(id_col).isin([lit(k) for k in keys]))
           .select([id_col, vec_col]).limit(len(keys)).to_arrow())
    where = {k: i for i, k in enumerate(keys)}
    found = got.column(id_col).to_pylist()
    flat = got.column(vec_col).combine_chunks()
    if len(found):
        mat = flat.values.to_numpy(zero_copy_only=False).reshape(len(found), store.dim)
        for r, k in enumerate(found):
            if k in where:
                out[where[k]] = mat[r]
    return out


def project(vectors: np.ndarray, query: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None,
                                                                   np.ndarray]:
    """2-D PCA coordinates of the rows and the query, and each axis' share of variance."""
    x = np.asarray(vectors, np.float64)
    mean = x.mean(axis=0) if len(x) else np.zeros(x.shape[1])
    centred = x - mean
    if len(x) < 2:
        comps = np.eye(2, x.shape[1])
        var = np.zeros(2)
    else:
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        comps = np.zeros((2, x.shape[1]))
        comps[: min(2, len(vt))] = vt[:2]
        total = float((s ** 2).sum()) or 1.0
        var = np.zeros(2)
        var[: min(2, len(s))] = (s[:2] ** 2) / total
    for c in comps:  # deterministic signs
        if c.any() and c[np.argmax(np.abs(c))] < 0:
            c *= -1
    xy = centred @ comps.T
    qxy = None if query is None else (np.asarray(query, np.float64) - mean) @ comps.T
    return xy, qxy, var


@dataclass(frozen=True)
class PoolMap:
    """Plain data for a scatter: one point per pool row shown, plus the query and the cut."""

    ids: tuple[Any, ...]
    xy: np.ndarray  # (n, 2)
    query_xy: tuple[float, float] | None
    in_scope: np.ndarray
    raw_rank: np.ndarray  # 1-based rank among the trace's raw candidates, 0 = beyond the cut
    final: np.ndarray  # bool: returned
    cut_depth: int  # the trace's raw depth (top-N)
    cut_radius: float | None  # 2-D distance from the query to the farthest row inside the cut
    explained: tuple[float, float]

    def to_json(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "x": np.round(self.xy[:, 0], 6).tolist(),
                "y": np.round(self.xy[:, 1], 6).tolist(),
                "query": None if self.query_xy is None else list(self.query_xy),
                "in_scope": self.in_scope.tolist(), "raw_rank": self.raw_rank.tolist(),
                "final": self.final.tolist(), "cut_depth": self.cut_depth,
                "cut_radius": self.cut_radius, "explained": list(self.explained)}


def _shown_rows(pool: Pool, max_points: int) -> np.ndarray:
    """Pool rows in leg order (vector leg first), at most max_points."""
    order: list[int] = []
    seen: set[int] = set()
    for leg in (pool.vec_leg, pool.fts_leg):
        if leg is not None:
            for r in leg.rows:
                if int(r) not in seen:
                    seen.add(int(r))
                    order.append(int(r))
    return np.asarray(order[:max_points], np.int64)


def pool_map(store: Store, trace: Trace, max_points: int = MAX_POINTS) -> PoolMap:
    """Map the trace's pool (deeper pools show more of what lies beyond the top-N cut)."""
    pool = trace.pool
    rows = _shown_rows(pool, max_points)
    if len(rows) == 0:
        raise InspectorError("The candidate pool is empty, so there is nothing to map.")
    vecs = fetch_vectors(store, [pool.ids[r] for r in rows])
    # rows not found are NaN; a stored vector holding inf or NaN has no place on a PCA map
    # (its SVD does not converge), so such rows are left off it
    ok = np.isfinite(vecs).all(axis=1)
    rows, vecs = rows[ok], vecs[ok]
    xy, qxy, var = project(vecs, pool.query.vector)
    raw_rank = trace.raw_rank[rows]
    inside = raw_rank > 0
    radius = None
    if qxy is not None and inside.any():
        radius = float(np.max(np.linalg.norm(xy[inside] - qxy, axis=1)))
    return PoolMap(ids=tuple(pool.ids[r] for r in rows), xy=xy,
                   query_xy=None if qxy is None else (float(qxy[0]), float(qxy[1])),
                   in_scope=pool.in_scope[rows].astype(bool), raw_rank=raw_rank.astype(np.int64),
                   final=trace.final_rank[rows] > 0, cut_depth=int(trace.depths.pool),
                   cut_radius=radius, explained=(float(var[0]), float(var[1])))
