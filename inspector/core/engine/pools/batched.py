"""The vector legs of a whole query set from one streamed scan of a flat table (sweeps).

Per query, LanceDB's flat search reads every vector; a sweep over 500 queries read the table
500 times. Here one pass (`stores.vectorscan`) answers every query's vector leg, exactly as the
per-query search would (ids, order, `_distance`, ties by row id), and the pool source
(`pools.vector_legs`, `pools.fetch(..., vec_leg=...)`) takes each leg as if LanceDB had
returned it. Full-text legs stay LanceDB's. Tables with a vector
index (approximate search), LanceDB Cloud, vectors the scan cannot reproduce bit for bit, or
a failed self-check against LanceDB fall back to per-query search (`Legs.pop` gives None).

Memory does not grow with the number of queries: queries are scanned SCAN_QUERIES at a time
(one pass each), each pass keeps its queries' top-k row ids and distances and the rows they
name: each query's leg is positions into them (`pool.ReadLeg`), its pool built when the
sweep takes it, reading only the columns its stages read (`pool.TakenColumns`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from inspector.core.engine import scope as scopes
from inspector.core.engine.params import Params
from inspector.core.engine.pool import ReadLeg, leg_columns
from inspector.core.stores.store import Store
from inspector.core.stores.vectorscan import kernels as LM
from inspector.core.stores.vectorscan import scan as S


class Case(Protocol):
    """What a sweep's case offers (`sweep.Case`)."""

    query: Any

    def params(self, base: Params) -> Params: ...

# as pool._leg_at returns it (rows, exhausted, next value), its rows those of its pass
Leg = tuple[ReadLeg, bool, float]
# LanceDB's own vector leg of a query, fetched already: its row ids and distances in rank
# order, and the distance of the first row past its cut (NaN: none known)
Reference = tuple[np.ndarray, np.ndarray, float]
_CHECK_ROWS = 16  # rows of one query compared with LanceDB's own search before trusting
SCAN_QUERIES = 512  # queries per scan pass: bounds the top-k lists held at once


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
        push = scopes.pushdown(p.scope_spec(), store.roles, store.schema)
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


@dataclass
class _Pass:
    """One scan pass's answers: per query (by position in the plan) row ids and distances,
    and the rows those ids name; None when the pass fell back to per-query search."""

    first: int
    result: S.ScanResult | None
    wanted: np.ndarray
    rows: pa.Table | None


class Legs:
    """Each scannable case's vector leg, by position in `cases`: `pop(i)` builds it (None
    when the case is searched per query). The scan runs SCAN_QUERIES cases at a time, the
    first pass at once (so an explicit Ray scan fails before the first query), the others
    when their first case is taken; only one pass's answers are held."""

    def __init__(self, store: Store, todo: _Plan | None = None, distance: str = "l2",
                 plan: ScanPlan = AUTO, source: Source | None = None,
                 per_pass: int | None = None, reference: Reference | None = None) -> None:
        self._store, self._todo, self._distance, self._plan = store, todo, distance, plan
        self._reference = reference  # the first case's LanceDB leg, checked against (_agrees)
        per_pass = per_pass or SCAN_QUERIES
        self._source, self._per = source, per_pass
        self._pos = {} if todo is None else {i: n for n, i in enumerate(todo.index)}
        self._left: dict[int, int] = {}  # cases not yet taken, per pass (by its first case)
        for n in self._pos.values():
            self._left[n - n % per_pass] = self._left.get(n - n % per_pass, 0) + 1
        self._allowed: tuple[np.ndarray | None, ...] | None = None
        self._pass: _Pass | None = None
        if todo is not None:
            self._load(0)

    def __len__(self) -> int:
        return len(self._pos)

    def pop(self, i: int, default: Leg | None = None) -> Leg | None:
        n = self._pos.pop(i, None)
        if n is None or self._todo is None:
            return default
        first = n - n % self._per
        self._left[first] -= 1
        if self._pass is None or self._pass.first != first:
            self._pass = None  # drop the previous pass's answers before the next scan
            self._load(first)
        done = self._pass
        assert done is not None
        if done.result is None or done.rows is None:
            if not self._left[first]:
                self._pass = None
            return default
        leg = _leg(self._todo, done.result, done.wanted, done.rows, n, n - first)
        if not self._left[first]:
            self._pass = None  # every case of this pass has been taken
        return leg

    def _load(self, first: int) -> None:
        todo = self._todo
        assert todo is not None
        part = slice(first, first + self._per)
        self._pass = _Pass(first, None, np.zeros(0, np.int64), None)
        try:
            store = self._store
            if self._allowed is None:
                self._allowed = tuple(
                    None if w is None else S.allowed_rowids(store.table, w, store.roles.id)
                    for w in todo.wheres)
            # one row past the deepest leg: every leg knows the distance past its cut, as
            # LanceDB's search at k + 1 tells it (`pool._vector_leg_at`)
            req = S.ScanRequest(np.stack(todo.vectors[part]), max(todo.depths[part]) + 1,
                                self._distance, np.asarray(todo.groups[part], np.int64),
                                self._allowed, store.rows)
            result = run_scan(store, req, self._plan, self._source)
            reference = self._reference if first == 0 else None
            if not _agrees(store, req, result, todo.wheres, reference):
                return
            wanted = np.unique(np.concatenate(
                [r[:d] for r, d in zip(result.rowids, todo.depths[part], strict=True)]))
            self._pass = _Pass(first, result, wanted, _take(store, wanted, todo.columns))
        except S.ScanUnsupported:
            return
        except Exception:  # noqa: BLE001 - the per-query path searches, and reports, as before
            if self._plan.mode == "ray":
                raise  # asked for explicitly: say why it failed


def scan_legs(store: Store, cases: Sequence[Case], base: Params,
                depth_of: Callable[[Any], int], plan: ScanPlan = AUTO,
                source: Source | None = None, per_pass: int | None = None,
                reference: Reference | None = None) -> Legs:
    """Each scannable case's vector leg (by position in `cases`), from batched scans of
    `per_pass` cases each (SCAN_QUERIES when not given); `source` gives the table's vectors
    already read (an audit's memories) instead of reading them again from LanceDB;
    `reference`: LanceDB's own leg of `cases[0]` fetched already, which the scan is checked
    against instead of a search of its own. Asked through the pool source
    (`pools.vector_legs`, `PoolSource.pool`), which fetches every pool."""
    if plan.mode == "off" or scannable(store) is not None:
        return Legs(store)
    todo = _plan(store, cases, base, depth_of)
    if todo is None or any(c not in store.schema.names for c in todo.columns):
        return Legs(store)
    if todo.index[0] != 0:  # cases[0] is not scanned: its leg checks no other query's
        reference = None
    return Legs(store, todo, base.distance, plan, source, per_pass, reference)


@dataclass(frozen=True)
class Source:
    """The table's stored vectors, already read: every row's float32 vector (bit for bit as
    stored) and its LanceDB row id, in any order (the scan orders ties by row id)."""

    vectors: np.ndarray  # (rows, dim) float32
    rowids: np.ndarray  # (rows,) int64

    def batches(self, column: str) -> S.Reader:
        """A reader of the vectors in blocks, as `S.vector_ranges` streams them."""
        dim = self.vectors.shape[1]

        def read() -> Any:
            for lo in range(0, len(self.rowids), S.BATCH_ROWS):
                x = self.vectors[lo:lo + S.BATCH_ROWS]
                arr = pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), dim)
                yield pa.record_batch({column: arr, "_rowid": pa.array(
                    self.rowids[lo:lo + S.BATCH_ROWS].astype(np.uint64))})

        return read


def run_scan(store: Store, req: S.ScanRequest, plan: ScanPlan = AUTO,
             source: Source | None = None) -> S.ScanResult:
    """The scan itself: in this process (over `source` when given), or split by fragment
    over Ray."""
    if plan.mode == "ray":
        from inspector.core.stores.vectorscan.on_ray import scan_on_ray

        return scan_on_ray(store, req, plan.ray_address, plan.jit)
    # compiled kernels where the scan repays loading them (the same bits either way)
    jit = plan.jit and LM.worth_compiling(len(req.vectors) * int(req.rows or store.rows))
    if source is not None:
        return S.scan_batches(source.batches(store.roles.vector), store.roles.vector,
                              store.dim, req, jit)
    ranges = S.row_ranges(S.allowed_rowids(store.table, None, store.roles.id),
                          max(S.BATCH_ROWS, req.k + 1))
    return S.scan_batches(lambda: S.vector_ranges(store.table, store.roles.vector, ranges),
                          store.roles.vector, store.dim, req, jit)


def _agrees(store: Store, req: S.ScanRequest, got: S.ScanResult, wheres: list[Any],
            reference: Reference | None = None) -> bool:
    """LanceDB's own search for the first query equals the scan's: ids and distances.
    `reference`: LanceDB's leg of that query fetched already, compared whole instead of
    searching again."""
    if reference is None:
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
        d, ids = d[order], ids[order]
        reference = (ids[:k], d[:k], float(d[k]) if len(d) > k else float("nan"))
    want_ids, want_d, past = reference
    n = len(want_d)
    if n and want_d[-1] == past:
        n = int(np.sum(want_d < want_d[-1]))  # LanceDB's cut split a tie: compare above it
    if len(got.distances[0]) < n:
        return False
    return (np.array_equal(want_d[:n], got.distances[0][:n])
            and np.array_equal(want_ids[:n], got.rowids[0][:n]))


def _leg(todo: _Plan, res: S.ScanResult, wanted: np.ndarray, rows: pa.Table, n: int,
         j: int) -> Leg:
    """Case n's leg as LanceDB would return it (the rows' columns, `_rowid`, `_distance`),
    from its answers at position j of the pass: positions into the pass's rows."""
    e = todo.depths[n]
    ids, dist = res.rowids[j][:e], res.distances[j][:e]
    leg = ReadLeg(rows, np.searchsorted(wanted, ids).astype(np.int64),
                  np.asarray(dist, np.float32))
    past = res.distances[j][e] if len(res.distances[j]) > e else float("nan")
    return leg, bool(res.available[j] <= e), float(past)


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
