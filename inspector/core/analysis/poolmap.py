"""A 2-D map of the rows a query fetches and its query, for any pipeline: PCA in numpy, with
the cut, the rows returned and the rows the pipeline's filters pass.

The rows shown are the probe's: the same question with the stages before its last searched
deep (the truth's run, `truth.py`), so the map shows where the rows sit beyond the cut (the
diagnosis's probe). Each row is ranked by where the question's own run fetched it (0 beyond
its cut), marked returned when the run returns it, and `in_scope` when no filter of the probe
dropped it. Runs hold no vectors, so they are read by id in one LanceDB lookup. The
projection is fitted on the rows' vectors (the query is projected, not fitted), component
signs are fixed so the largest loading is positive, and the map is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.engine.flow.insight.diagnosis import main_line
from inspector.core.engine.flow.runner import FlowTrace
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
    """Plain data for a scatter: one point per row shown, plus the query and the cut."""

    ids: tuple[str, ...]
    xy: np.ndarray  # (n, 2)
    query_xy: tuple[float, float] | None
    in_scope: np.ndarray  # bool: no filter of the probe dropped the row
    raw_rank: np.ndarray  # 1-based rank in the run's fetched list (its cut), 0 = beyond it
    final: np.ndarray  # bool: returned
    cut_depth: int  # rows the run's fetched list holds
    cut_radius: float | None  # 2-D distance from the query to the farthest row inside the cut
    explained: tuple[float, float]
    stage: str = ""  # the stage whose list is the cut

    def to_json(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "x": np.round(self.xy[:, 0], 6).tolist(),
                "y": np.round(self.xy[:, 1], 6).tolist(),
                "query": None if self.query_xy is None else list(self.query_xy),
                "in_scope": self.in_scope.tolist(), "raw_rank": self.raw_rank.tolist(),
                "final": self.final.tolist(), "cut_depth": self.cut_depth,
                "cut_radius": self.cut_radius, "explained": list(self.explained),
                "stage": self.stage}


def _fetched(t: FlowTrace) -> tuple[str, list[str]]:
    """The stage whose list is the run's cut (the fetch, or the fusion of its legs), and the
    ids in it, in order."""
    line = main_line(t)
    if not line:
        return "", []
    return line[0].name, line[0].ids


def pool_map(store: Store, trace: FlowTrace, probe: FlowTrace | None = None,
             max_points: int = MAX_POINTS) -> PoolMap:
    """Map the probe's fetched rows (the trace's own when no probe is given)."""
    probe = probe or trace
    stage, shown = _fetched(probe)
    shown = list(dict.fromkeys(shown))[:max_points]
    if not shown:
        raise InspectorError("The run fetched no rows, so there is nothing to map.")
    vecs = fetch_vectors(store, shown)
    # rows not found are NaN; a stored vector holding inf or NaN has no place on a PCA map
    # (its SVD does not converge), so such rows are left off it
    ok = np.isfinite(vecs).all(axis=1)
    ids = [x for x, good in zip(shown, ok, strict=True) if good]
    vecs = vecs[ok]
    xy, qxy, var = project(vecs, trace.vector)
    cut_stage, cut = _fetched(trace)
    rank = {x: r for r, x in enumerate(cut, 1)}
    raw_rank = np.array([rank.get(x, 0) for x in ids], np.int64)
    dropped = {d.id for st in probe.stages if st.role == "filter" for d in st.dropped}
    returned = set(trace.final.ids)
    inside = raw_rank > 0
    radius = None
    if qxy is not None and inside.any():
        radius = float(np.max(np.linalg.norm(xy[inside] - qxy, axis=1)))
    return PoolMap(ids=tuple(ids), xy=xy,
                   query_xy=None if qxy is None else (float(qxy[0]), float(qxy[1])),
                   in_scope=np.array([x not in dropped for x in ids], bool),
                   raw_rank=raw_rank, final=np.array([x in returned for x in ids], bool),
                   cut_depth=len(cut), cut_radius=radius,
                   explained=(float(var[0]), float(var[1])), stage=cut_stage or stage)
