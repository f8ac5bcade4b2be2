"""Many queries' exact flat vector search in one streamed pass over a table's vectors.

LanceDB's flat search reads every vector once per query. For a query set (a sweep) this scan
reads them once for all queries: per Lance batch, one matrix product picks each query's
candidates (with a margin wider than any rounding error), LanceDB's own float32 arithmetic
(`kernels`) gives their exact `_distance`, and a running top-k per query keeps the best
(distance ascending, ties by LanceDB row id: the order `pool` gives LanceDB's own results).
Memory is bounded by one batch plus the running top-k. Read-only: only scans and takes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.stores.vectorscan import bounds as BD
from inspector.core.stores.vectorscan import kernels as LM

BATCH_ROWS = 8_192


class ScanUnsupported(Exception):
    """The table or a vector is outside what the scan reproduces exactly: search per query."""


@dataclass(frozen=True)
class ScanRequest:
    """Queries (float32, one per row), the depth, the metric, and each query's filter group:
    `allowed[g]` is the sorted array of row ids a pushed-down predicate keeps (None = all)."""

    vectors: np.ndarray
    k: int
    distance: str
    groups: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    allowed: tuple[np.ndarray | None, ...] = (None,)
    rows: int = 0  # rows in the table (0 = unknown: no first-block guess)

    def group_of(self) -> np.ndarray:
        return self.groups if len(self.groups) else np.zeros(len(self.vectors), np.int64)

    def subset(self, idx: np.ndarray) -> ScanRequest:
        return ScanRequest(self.vectors[idx], self.k, self.distance, self.group_of()[idx],
                           self.allowed, 0)


@dataclass
class ScanResult:
    """Per query: row ids and `_distance` (float32) in canonical order, at most k of them,
    and how many rows the query's filter allowed (fewer than k + 1 = the leg is exhausted)."""

    rowids: list[np.ndarray]
    distances: list[np.ndarray]
    available: np.ndarray


class _Running:
    """One query's best candidates so far; `bound` is an upper bound of its k-th distance."""

    __slots__ = ("vals", "ids", "parts", "size", "bound")

    def __init__(self) -> None:
        self.vals = np.zeros(0, np.float32)
        self.ids = np.zeros(0, np.int64)
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.size = 0
        self.bound = np.float32(np.inf)

    def add(self, vals: np.ndarray, ids: np.ndarray, k: int) -> None:
        self.parts.append((vals, ids))
        self.size += len(vals)
        if self.size > k + max(k // 4, 64) or (np.isinf(self.bound) and self.size >= k):
            self.cut(k)

    def cut(self, k: int) -> None:
        if self.parts:
            self.vals = np.concatenate([self.vals, *(p[0] for p in self.parts)])
            self.ids = np.concatenate([self.ids, *(p[1] for p in self.parts)])
            self.parts = []
        self.vals, self.ids = top_k(self.vals, self.ids, k)
        self.size = len(self.vals)
        if self.size >= k:
            self.bound = self.vals.max()


def top_k(vals: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k smallest by (value, row id), unordered; exact at ties."""
    if len(vals) <= k:
        return vals, ids
    kth = np.partition(vals, k - 1)[k - 1]
    less = np.flatnonzero(vals < kth)
    tied = np.flatnonzero(vals == kth)
    tied = tied[np.argsort(ids[tied], kind="stable")[: k - len(less)]]
    keep = np.concatenate([less, tied])
    return vals[keep], ids[keep]


def canonical(vals: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k smallest by (value, row id), in that order. Two stable argsorts (by id, then by
    value) give lexsort's order at a quarter of its cost."""
    vals, ids = top_k(vals, ids, k)
    by_id = np.argsort(ids, kind="stable")
    order = by_id[np.argsort(vals[by_id], kind="stable")]
    return vals[order], ids[order]


def merge_partials(parts: Sequence[ScanResult], k: int) -> ScanResult:
    """Combine scans of disjoint parts of a table (e.g. fragments) into the whole table's."""
    n = len(parts[0].rowids)
    ids, dists = [], []
    for i in range(n):
        v, r = canonical(np.concatenate([p.distances[i] for p in parts]),
                         np.concatenate([p.rowids[i] for p in parts]), k)
        ids.append(r)
        dists.append(v)
    return ScanResult(ids, dists, np.sum([p.available for p in parts], axis=0))


class _Batch:
    """One batch's vectors, row ids and norms, with the checks that keep the scan exact."""

    def __init__(self, batch: pa.RecordBatch, column: str, dim: int, distance: str) -> None:
        arr = batch.column(column)
        if arr.null_count:
            raise ScanUnsupported("the vector column has NULL vectors")
        if pa.types.is_fixed_size_list(arr.type) and arr.offset == 0:
            flat = arr.values
        else:
            flat = pa.concat_arrays([arr]).flatten()
        if flat.type != pa.float32():
            raise ScanUnsupported(f"vectors are {flat.type}, not float32")
        self.x = flat.to_numpy(zero_copy_only=False).reshape(-1, dim)
        self.ids = batch.column("_rowid").to_numpy().astype(np.int64)
        self.sq = sq = np.einsum("ij,ij->i", self.x, self.x, dtype=np.float32)
        if not np.all(np.isfinite(sq)):
            raise ScanUnsupported("a stored vector has NaN or infinite values")
        if distance == "cosine" and not np.all(sq > 0):
            raise ScanUnsupported("a stored vector is all zeros (cosine distance undefined)")
        self.block = BD.Block(self.x, sq, distance)


def _first_bounds(tile: BD.Tile, k: int) -> np.ndarray:
    """An upper bound of each query's k-th exact distance from one block alone, where the
    block holds at least k rows (inf elsewhere)."""
    out = np.full(len(tile.s), np.inf, np.float32)
    if tile.s.shape[1] >= k:
        out[:] = tile.kth_upper(np.arange(len(tile.s)), k)
    return out


Reader = Callable[[], Iterable[pa.RecordBatch]]


def scan_batches(read: Reader, column: str, dim: int, req: ScanRequest,
                 jit: bool = True) -> ScanResult:
    """The exact top-k of every query over the batches `read()` yields (with `_rowid`).

    The first block's matrix product guesses a bound for each query's k-th distance a little
    above where it will land, and only rows that may beat it get exact distances. A query
    whose guess proves too low (fewer than k rows under it) is scanned again without one.
    ScanUnsupported where the kernels do not give LanceDB's distances on this processor
    (`kernels.reproduced`), before anything is read."""
    if not LM.reproduced(req.distance):
        raise ScanUnsupported(f"LanceDB's {req.distance} arithmetic on this processor is not "
                              f"reproduced by the scan's kernels (no AVX-512F)")
    res, guesses = _scan_once(read(), column, dim, req, jit)
    failed = [i for i, g in enumerate(guesses) if np.isfinite(g) and not (
        len(res.distances[i]) >= req.k and res.distances[i][req.k - 1] <= g)]
    if failed:
        again, _ = _scan_once(read(), column, dim, req.subset(np.array(failed)), jit)
        for j, i in enumerate(failed):
            res.rowids[i], res.distances[i] = again.rowids[j], again.distances[j]
    return res


def _guesses(tile: BD.Tile, req: ScanRequest, groups: np.ndarray) -> np.ndarray:
    """Per query, the (1.25 k B / N + 16)-th smallest upper bound of the first block (B of
    the query's N allowed rows): a bound its k-th distance very likely stays under."""
    out = np.full(len(tile.s), np.inf, np.float32)
    if not req.rows:
        return out
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        a = req.allowed[g]
        total = req.rows if a is None else len(a)
        in_block = tile.s.shape[1]  # the group's rows of the block (`_parts`)
        rank = int(np.ceil(1.25 * req.k * in_block / max(total, 1))) + 16
        if total <= req.k or rank >= in_block:
            continue
        out[members] = tile.kth_upper(members, rank)
    return out


def _scan_once(batches: Iterable[pa.RecordBatch], column: str, dim: int, req: ScanRequest,
               jit: bool) -> tuple[ScanResult, np.ndarray]:
    q = np.ascontiguousarray(req.vectors, np.float32)
    n = len(q)
    q_sq = np.einsum("ij,ij->i", q.astype(np.float64), q.astype(np.float64))
    q_norms = (np.array([LM.norm_of(v) for v in q], np.float32) if req.distance == "cosine"
               else None)
    run = [_Running() for _ in range(n)]
    available = np.zeros(n, np.int64)
    guesses: np.ndarray | None = None
    groups = req.group_of()
    for raw in _blocks(batches, max(BATCH_ROWS, req.k + 1)):
        b = _Batch(raw, column, dim, req.distance)
        masks = [None if a is None else np.isin(b.ids, a) for a in req.allowed]
        first = guesses is None
        if guesses is None:
            guesses = np.full(n, np.inf, np.float32)
        for part, rows in _parts(b, masks, groups, req.distance):
            for lo in range(0, len(part), QUERY_TILE):
                _tile(rows, q, q_sq, q_norms, part[lo:lo + QUERY_TILE], req, run, available,
                      guesses, first, jit)
    out_ids, out_vals = [], []
    for r in run:
        r.cut(req.k)
        v, ids = canonical(r.vals, r.ids, req.k)
        out_ids.append(ids)
        out_vals.append(v)
    none = np.full(n, np.inf, np.float32)
    return ScanResult(out_ids, out_vals, available), none if guesses is None else guesses


QUERY_TILE = 512  # queries per matrix product: a (512, 8192) float32 tile (16 MB). Larger
# tiles make the product cheaper per query (bench audit_design: 128 to 1,024 side by side);
# at 1,024 a tile reaches malloc's largest reuse size (32 MB) and is mapped afresh each time


class _Rows:
    """A group's rows of one block (those its predicate keeps), as `_tile` reads a block."""

    def __init__(self, b: _Batch, keep: np.ndarray, distance: str) -> None:
        self.x = np.ascontiguousarray(b.x[keep])
        self.ids = b.ids[keep]
        self.block = BD.Block(self.x, b.sq[keep], distance)


def _parts(b: _Batch, masks: list[np.ndarray | None], groups: np.ndarray, distance: str
           ) -> Iterator[tuple[np.ndarray, Any]]:
    """The block's queries (positions) with the rows they are scanned over, every one of
    which they may return: a group whose predicate keeps part of the block, over those rows
    alone (its product over its own rows, not the block's); the other queries over the
    whole block."""
    whole = []
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        m = masks[g]
        if m is None or m.all():
            whole.append(members)
        elif m.any():  # a block its predicate keeps nothing of adds nothing to its queries
            yield members, _Rows(b, m, distance)
    if whole:
        yield np.concatenate(whole) if len(whole) > 1 else whole[0], b


def _tile(b: Any, q_all: np.ndarray, q_sq_all: np.ndarray, q_norms: np.ndarray | None,
          t: np.ndarray, req: ScanRequest, run: list[_Running], available: np.ndarray,
          guesses: np.ndarray, first: bool, jit: bool) -> None:
    """One block's rows (`_Batch` or a group's `_Rows`, every one of which the queries may
    return) against the queries at positions `t`: their candidates' exact distances join
    each query's running top-k (`guesses` of the first block are filled in here)."""
    q, q_sq, groups = q_all[t], q_sq_all[t], req.group_of()[t]
    rows_in = len(b.ids)
    available[t] += rows_in
    tile = BD.Tile(b.block, q, q_sq)
    if first:
        guesses[t] = _guesses(tile, req, groups)
    bounds = np.minimum(np.array([run[i].bound for i in t], np.float32), guesses[t])
    if np.isinf(bounds).any():
        bounds = np.minimum(bounds, _first_bounds(tile, req.k))
    keep = tile.candidates(bounds)
    del tile
    qi, rows = np.divmod(np.flatnonzero(keep), rows_in)
    del keep
    ptr = np.searchsorted(qi, np.arange(len(q) + 1))
    vals = LM.pairs(b.x, q, ptr, rows, req.distance,
                    None if q_norms is None else q_norms[t], jit)
    ids = b.ids[rows]
    for i in np.flatnonzero(np.diff(ptr)):
        run[t[i]].add(vals[ptr[i]:ptr[i + 1]], ids[ptr[i]:ptr[i + 1]], req.k)


def _blocks(batches: Iterable[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """Batches regrouped into blocks of at least `rows` rows (tables written a few rows at a
    time have many tiny fragments, and LanceDB's batches never span two)."""
    pending: list[pa.RecordBatch] = []
    count = 0
    for b in batches:
        if b.num_rows:
            pending.append(b)
            count += b.num_rows
        if count >= rows:
            yield pa.concat_batches(pending) if len(pending) > 1 else pending[0]
            pending, count = [], 0
    if pending:
        yield pa.concat_batches(pending) if len(pending) > 1 else pending[0]


def vector_batches(table: Any, column: str, where: Any = None,
                   batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """The table's vectors with their row ids, streamed by LanceDB's scanner."""
    q = table.search().select([column]).with_row_id(True).limit(None)
    if where is not None:
        q = q.where(where)
    yield from q.to_batches(batch_rows)


def row_ranges(rowids: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Sorted row ids cut into inclusive ranges of `rows` rows each."""
    return [(int(rowids[i]), int(rowids[min(i + rows, len(rowids)) - 1]))
            for i in range(0, len(rowids), rows)]


def vector_ranges(table: Any, column: str, ranges: Sequence[tuple[int, int]]
                  ) -> Iterator[pa.RecordBatch]:
    """The vectors of each row-id range, one LanceDB read per range. Measured on 100k x 384:
    reading by ranges holds a fifth of the memory `to_batches` holds (which keeps a whole
    fragment while it decodes) and is faster."""
    for lo, hi in ranges:
        got = (table.search().where(f"_rowid >= {lo} AND _rowid <= {hi}").select([column])
               .with_row_id(True).limit(None).to_arrow())
        yield from got.to_batches()


def allowed_rowids(table: Any, where: Any, column: str) -> np.ndarray:
    """Sorted row ids a predicate keeps, or all of them. `column` is a small column to read
    alongside: with no column at all LanceDB reads every one, vectors included."""
    q = table.search()
    if where is not None:
        q = q.where(where)
    parts = [b.column("_rowid").to_numpy()
             for b in q.select([column]).with_row_id(True).limit(None).to_batches(65_536)]
    ids = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
    return np.sort(ids)


def is_flat(table: Any, column: str) -> bool:
    """True when no vector index covers the column, so LanceDB searches it exhaustively."""
    try:
        indices = table.list_indices()
    except Exception:  # noqa: BLE001 - an unreadable index list: not known to be flat
        return False
    return not any(column in getattr(i, "columns", []) for i in indices)
