"""The vector legs of a whole query set from one streamed scan of a flat table (sweeps).

Per query, LanceDB's flat search reads every vector; a sweep over 500 queries read the table
500 times. Here one pass (`stores.vectorscan`) answers every query's vector leg, exactly as the
per-query search would (ids, order, `_distance`, ties by row id), and `pool.fetch_pool` takes
each leg as if LanceDB had returned it. Full-text legs stay LanceDB's. Tables with a vector
index (approximate search), LanceDB Cloud, vectors the scan cannot reproduce bit for bit, or
a failed self-check against LanceDB fall back to per-query search: `vector_legs` returns {}.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from inspector.core.engine import scope as scopes
from inspector.core.engine.params import Params
from inspector.core.engine.pool import leg_columns
from inspector.core.stores.store import Store
from inspector.core.stores.vectorscan import kernels as LM
from inspector.core.stores.vectorscan import scan as S


class Case(Protocol):
    """What a sweep's case offers (`sweep.Case`)."""

    query: Any

    def params(self, base: Params) -> Params: ...

Leg = tuple[pa.Table, bool, float]  # as pool._leg_at returns it: rows, exhausted, next value
_CHECK_ROWS = 16  # rows of one query compared with LanceDB's own search before trusting


@dataclass(frozen=True)
class ScanPlan:
    """How a sweep fetches vector legs: `auto` (one scan on flat tables), `off` (per query),
    or `ray` (the scan split by Lance fragment over a Ray cluster at `ray_address`)."""

    mode: str = "auto"
    ray_address: str | None = None
    jit: bool = True  # compiled kernels when numba is installed


AUTO = ScanPlan()


def scannable(store: Store) -> str | None:
    """Why the store cannot be scanned (None when it can)."""
    if store.uri.startswith("db://"):
        return "LanceDB Cloud tables are searched per query"
    if not LM.supported_dim(store.dim):
        return f"{store.dim}-dimension vectors take other LanceDB code paths"
    if not S.is_flat(store.table, store.roles.vector):
        return "a vector index makes LanceDB's search approximate"
    return None


def _vector(store: Store, vector: Any, distance: str) -> np.ndarray | None:
    """The query vector as `pool` checks it; None when the per-query path would refuse it."""
    if vector is None:
        return None
    vec = np.asarray(vector, np.float32).ravel()
    if vec.shape[0] != store.dim or not np.all(np.isfinite(vec)):
        return None
    if distance == "cosine" and not np.any(vec):
        return None
    return vec


@dataclass
class _Plan:
    index: list[int]  # case positions scanned
    vectors: list[np.ndarray]
    depths: list[int]
    groups: list[int]
    wheres: list[Any]  # one pushed-down predicate (or None) per group
    columns: list[str]


def _plan(store: Store, cases: Sequence[Case], base: Params,
          depth_of: Callable[[Any], int]) -> _Plan | None:
    out = _Plan([], [], [], [], [], [])
    keys: dict[str, int] = {}
    distance = base.distance
    for i, case in enumerate(cases):
        p = case.params(base)
        vec = _vector(store, case.query.vector, p.distance)
        if p.mode not in ("vector", "hybrid") or vec is None or p.distance != distance:
            continue
        push = scopes.pushdown(p.scope_spec(), store.roles)
        where = push.expr if p.filter == "pushdown" else None
        key = "" if where is None else f"sql:{push.sql}"
        if key not in keys:
            keys[key] = len(out.wheres)
            out.wheres.append(where)
        for c in leg_columns(store, p):
            if c not in out.columns:
                out.columns.append(c)
        out.index.append(i)
        out.vectors.append(vec)
        out.depths.append(depth_of(case))
        out.groups.append(keys[key])
    return out if out.index else None


def vector_legs(store: Store, cases: Sequence[Case], base: Params,
                depth_of: Callable[[Any], int], plan: ScanPlan = AUTO) -> dict[int, Leg]:
    """Each scannable case's vector leg (by position in `cases`), from one scan."""
    if plan.mode == "off" or scannable(store) is not None:
        return {}
    todo = _plan(store, cases, base, depth_of)
    if todo is None or any(c not in store.schema.names for c in todo.columns):
        return {}
    try:
        allowed = tuple(None if w is None else S.allowed_rowids(store.table, w, store.roles.id)
                        for w in todo.wheres)
        req = S.ScanRequest(np.stack(todo.vectors), max(todo.depths), base.distance,
                            np.asarray(todo.groups, np.int64), allowed, store.rows)
        result = run_scan(store, req, plan)
        if not _agrees(store, req, result, todo.wheres):
            return {}
        return _legs(store, todo, result)
    except S.ScanUnsupported:
        return {}
    except Exception:  # noqa: BLE001 - the per-query path searches, and reports, as before
        if plan.mode == "ray":
            raise  # asked for explicitly: say why it failed
        return {}


def run_scan(store: Store, req: S.ScanRequest, plan: ScanPlan = AUTO) -> S.ScanResult:
    """The scan itself: in this process, or split by fragment over Ray."""
    if plan.mode == "ray":
        from inspector.core.stores.vectorscan.on_ray import scan_on_ray

        return scan_on_ray(store, req, plan.ray_address, plan.jit)
    ranges = S.row_ranges(S.allowed_rowids(store.table, None, store.roles.id),
                          max(S.BATCH_ROWS, req.k + 1))
    return S.scan_batches(lambda: S.vector_ranges(store.table, store.roles.vector, ranges),
                          store.roles.vector, store.dim, req, plan.jit)


def _agrees(store: Store, req: S.ScanRequest, got: S.ScanResult, wheres: list[Any]) -> bool:
    """LanceDB's own search for the first query equals the scan's: ids and distances."""
    g = int(req.group_of()[0])
    k = min(req.k, _CHECK_ROWS)
    q = (store.table.search(req.vectors[0], vector_column_name=store.roles.vector)
         .distance_type(req.distance).select([store.roles.id]).with_row_id(True)
         .limit(k + 1))
    if wheres[g] is not None:
        q = q.where(wheres[g], prefilter=True)
    ref = q.to_arrow()
    d = ref.column("_distance").to_numpy(zero_copy_only=False)
    ids = ref.column("_rowid").to_numpy(zero_copy_only=False)
    order = np.lexsort((ids, d))
    want_d, want_ids = d[order], ids[order]
    n = min(len(want_d), k, len(got.distances[0]))
    if len(want_d) > k and want_d[k - 1] == want_d[k]:
        n = int(np.sum(want_d < want_d[k - 1]))  # LanceDB's cut split a tie: compare above it
    return (np.array_equal(want_d[:n], got.distances[0][:n])
            and np.array_equal(want_ids[:n], got.rowids[0][:n]))


def _legs(store: Store, todo: _Plan, res: S.ScanResult) -> dict[int, Leg]:
    """Leg tables as LanceDB would return them: the rows' columns, `_rowid`, `_distance`."""
    wanted = np.unique(np.concatenate([r[:d] for r, d in zip(res.rowids, todo.depths,
                                                             strict=True)]))
    rows = _take(store, wanted, todo.columns)
    out: dict[int, Leg] = {}
    for j, i in enumerate(todo.index):
        e = todo.depths[j]
        ids, dist = res.rowids[j][:e], res.distances[j][:e]
        leg = rows.take(pa.array(np.searchsorted(wanted, ids)))
        leg = leg.append_column("_distance", pa.array(dist, pa.float32()))
        past = res.distances[j][e] if len(res.distances[j]) > e else float("nan")
        out[i] = (leg, bool(res.available[j] <= e), float(past))
    return out


def _take(store: Store, rowids: np.ndarray, columns: list[str]) -> pa.Table:
    """Rows by LanceDB row id, in ascending row id order, with `_rowid`."""
    if not len(rowids):
        schema = store.schema
        return pa.table({c: pa.array([], schema.field(c).type) for c in columns}
                        | {"_rowid": pa.array([], pa.uint64())})
    got = (store.table.take_row_ids([int(r) for r in rowids]).select(columns).with_row_id()
           .to_arrow())
    order = np.argsort(got.column("_rowid").to_numpy(zero_copy_only=False), kind="stable")
    got = got.take(pa.array(order))
    if not np.array_equal(got.column("_rowid").to_numpy(zero_copy_only=False), rowids):
        raise S.ScanUnsupported("LanceDB's take did not return the requested rows")
    return got
