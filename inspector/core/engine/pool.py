"""Fetch a candidate pool from LanceDB: each leg's ranking to a given depth, rows merged by id.

A pool is fetched once per query; every smaller over-fetch, blend weight or min score is then
derived from it in memory (see `pipeline.derive`). Legs are put in a canonical order (distance
ascending or score descending, ties by LanceDB row id), which is the order LanceDB's own flat
vector search returns, so a shallow fetch is a prefix of a deep one. LanceDB's full-text search
orders equal BM25 scores arbitrarily: there the row id order is the inspector's reproducible
choice, and `Pool.fts_ties` says so (see ties.py).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core import heap
from inspector.core.engine import scope as scopes
from inspector.core.engine.index_rule import apply_knobs, prefix_exact
from inspector.core.engine.params import ANN_KNOBS, Params
from inspector.core.errors import InspectorError
from inspector.core.stores.ann.indexes import IndexInfo
from inspector.core.stores.fts import fts_table
from inspector.core.stores.roles import (
    check_nested,
    importance_values,
    lance_columns,
    split_nested,
    with_nested,
)
from inspector.core.stores.safety.bounds import TIE_FETCH_MAX
from inspector.core.stores.store import Store, run_search, search_builder

# The full-text leg is first fetched this many rows past its k at least (half its k when more):
# a BM25 tie straddling the cut then mostly ends inside the first search. LanceDB's full-text
# search costs about the same at a few dozen rows or a few hundred, while a tie past the
# margin costs a whole second search (the `overhead` bench's hybrid row).
FTS_MARGIN_MIN = 128


@dataclass(frozen=True)
class Query:
    """What is searched for: a text, a vector, or both (hybrid needs text and a vector)."""

    text: str | None = None
    vector: np.ndarray | None = field(default=None, compare=False)
    source: str = "text"  # text | vector | example:<id>

    def to_json(self) -> dict[str, Any]:
        vec = None if self.vector is None else [float(x) for x in self.vector]
        return {"text": self.text, "source": self.source, "vector": vec}


@dataclass(frozen=True)
class Leg:
    """One leg's ranking: positions into the pool's rows, and its distance or score."""

    rows: np.ndarray  # int indices into Pool rows, in rank order
    values: np.ndarray  # _distance (vector) or BM25 _score (fts), float64
    depth: int  # requested k
    exhausted: bool  # fewer rows came back than requested: deeper asks return the same
    next_value: float = float("nan")  # the value of the first row past `depth` (NaN: none)


@dataclass(frozen=True)
class Pool:
    """Candidates with their attributes and their rank in each leg. Plain data, no LanceDB."""

    store: dict[str, Any]
    roles: dict[str, str | None]
    query: Query
    mode: str
    distance: str
    placement: str
    scope: scopes.ScopeSpec
    pushdown_sql: str
    pushdown_note: str
    ids: np.ndarray  # object array of ids as stored
    id_order: np.ndarray  # position of each id in ascending id order (RRF tie-break)
    columns: Mapping[str, list[Any]]  # every attribute column, per row
    importance: np.ndarray  # float64 as stored (NaN where missing, or a stored NaN)
    in_scope: np.ndarray  # bool, the post-filter's verdict
    scope_rule: list[str]
    pushdown_match: np.ndarray  # bool, the pushed-down predicate's verdict (exact compare)
    vec_rank: np.ndarray  # int64 0-based rank in the vector leg, -1 if absent
    vec_dist: np.ndarray  # float64 _distance, NaN if absent
    fts_rank: np.ndarray
    fts_score: np.ndarray
    vec_leg: Leg | None
    fts_leg: Leg | None
    warnings: tuple[str, ...] = ()
    # how the full-text leg orders equal scores: "arbitrary" (LanceDB) or "rowid" (FTS5 copy)
    fts_ties: str = "arbitrary"
    # bool per row: NULL or not a number, so the default applies; None = wherever NaN
    importance_missing: np.ndarray | None = None
    index: IndexInfo | None = None  # the table's vector index (None: flat table)
    knobs: tuple[Any, ...] = ()  # the ANN knobs the vector leg was searched with (search_knobs)
    # per row out of scope, the value it had instead of the scope ("" in scope); empty in a
    # receipt written before the field existed
    scope_value: list[str] = field(default_factory=list)
    # per row, LanceDB's row address of the row read (None: a leg came without one); with the
    # store and its version it names the stored row, so pools of one table can share its reading
    rowids: np.ndarray | None = None

    def missing_importance(self) -> np.ndarray:
        if self.importance_missing is None:
            return np.isnan(self.importance)
        return self.importance_missing

    @property
    def size(self) -> int:
        return len(self.ids)


def _select(store: Store, spec: scopes.ScopeSpec) -> list[str]:
    cols = store.roles.attribute_columns()
    for c in scopes.scope_columns(store.roles, spec):
        if c not in cols:
            cols.append(c)
    return cols


def _vector_leg(store: Store, vec: np.ndarray, k: int, p: Params, cols: list[str],
                where: Any) -> pa.Table:
    q = (search_builder(store.table, vec, "vector", vector_column=store.roles.vector)
         .distance_type(p.distance).select([*lance_columns(store.schema, cols), "_distance"])
         .with_row_id(True).limit(k))
    q = apply_knobs(q, p)
    if where is not None:
        q = q.where(where, prefilter=True)
    return with_nested(run_search(q), store.schema, cols)


def _fts_leg(store: Store, text: str, k: int, cols: list[str], where: Any) -> pa.Table:
    tbl, _ = fts_table(store)
    q = search_builder(tbl, text, "fts", fts_columns=store.roles.text)
    q = q.select([*lance_columns(store.schema, cols), "_score"]).with_row_id(True).limit(k)
    if where is not None:
        q = q.where(where, prefilter=True)
    return with_nested(run_search(q), store.schema, cols)


def native_fts_ids(store: Store, text: str, k: int, params: Params) -> tuple[Any, ...]:
    """The ids LanceDB's full-text search returns at exactly k, in LanceDB's own order (the
    scope pushed down as the pool's leg pushes it). Equal BM25 scores come back in an order
    that changes with k, so the order a system sees at its k is this search's, never a cut of
    a deeper one (whose canonical order, by row id, serves the live re-ranking)."""
    spec = params.scope_spec()
    push = scopes.pushdown(spec, store.roles, store.schema)
    where = push.expr if params.filter == "pushdown" else None
    tbl, _ = fts_table(store)
    q = search_builder(tbl, text, "fts", fts_columns=store.roles.text)
    q = q.select([store.roles.id]).limit(max(1, k))
    if where is not None:
        q = q.where(where, prefilter=True)
    got = run_search(q, store.schema if tbl is store.table else None)  # the same schema
    return tuple(got.column(store.roles.id).to_pylist())


def cut_values(values: np.ndarray, next_value: float, k: int) -> tuple[int, np.ndarray]:
    """A leg's rows inside its cut at k, and its values to one past the cut (when known):
    `values` in rank order, `next_value` the one past them where the leg holds no more (NaN
    if unknown)."""
    c = min(k, len(values))
    return c, values[:c + 1] if c < len(values) else (
        values if np.isnan(next_value) else np.append(values, next_value))


def tied_at(values: np.ndarray, next_value: float, k: int) -> bool:
    """Equal values within a leg's first k or across its cut at k (see `cut_values`): two
    neighbours among the values to one past the cut are equal. NaNs never tie."""
    v = np.asarray(cut_values(values, next_value, k)[1], np.float64)
    return bool(len(v) >= 2 and np.any(v[1:] == v[:-1]))


def _canonical(tbl: pa.Table, value_col: str, ascending: bool) -> pa.Table:
    vals = tbl.column(value_col).to_numpy(zero_copy_only=False).astype(np.float64)
    rowid = tbl.column("_rowid").to_numpy(zero_copy_only=False)
    order = np.lexsort((rowid, vals if ascending else -vals))
    if not len(order) or bool(np.all(order[1:] > order[:-1])):
        return tbl  # in order already (a vector leg mostly is): no copy of its columns
    return tbl.take(pa.array(order))


# The threads a query's second leg runs on, beside the first leg on the caller's thread: made
# once a process. A pool of threads made per query started a thread for each leg and joined
# them after; py-spy put ~a fifth of a hybrid query's samples at 10,000 rows in waiting for a
# new thread to start (it must get the GIL to say so), and a hybrid query without it takes
# ~0.9x the time (bench overhead's pair, in turn). A leg never waits on another leg, so
# callers on several threads at once only queue, never deadlock.
_SIDE: ThreadPoolExecutor | None = None
_SIDE_LOCK = threading.Lock()
SIDE_THREADS = 4


def _side() -> ThreadPoolExecutor:
    global _SIDE
    with _SIDE_LOCK:
        if _SIDE is None:
            _SIDE = ThreadPoolExecutor(SIDE_THREADS, thread_name_prefix="inspector-leg")
        return _SIDE


def _side_by_side(jobs: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Each job's result by name. LanceDB releases the GIL while it searches, so the legs run
    side by side, as its own hybrid search does: the first on this thread, the others on the
    side threads. A failing job's error is raised once every job has ended."""
    names = list(jobs)
    if len(names) < 2:
        return {name: jobs[name]() for name in names}
    futures: dict[str, Future[Any]] = {name: _side().submit(jobs[name]) for name in names[1:]}
    try:
        first = jobs[names[0]]()
    finally:
        wait_all(list(futures.values()))
    return {names[0]: first, **{name: f.result() for name, f in futures.items()}}


def _vector_leg_at(fetch: Any, k: int, prefix: bool) -> tuple[pa.Table, bool, float]:
    """The vector top k, whether the leg ran out, and the distance of the first row past k
    (NaN if unknown), from ONE search. LanceDB orders vector results by (_distance, _rowid),
    so ties at the cut need no completion: where a deeper search's prefix is exact, one extra
    row tells exhaustion and what lies past the cut; where it is not (HNSW, refine), exactly
    k are fetched so the answer is LanceDB's own at k."""
    got = _canonical(fetch(k + 1 if prefix else k), "_distance", ascending=True)
    vals = got.column("_distance").to_numpy(zero_copy_only=False)
    after = float(vals[k]) if prefix and len(vals) > k else float("nan")
    return got.slice(0, k), got.num_rows < k + (1 if prefix else 0), after


def _leg_at(fetch: Any, k: int, value_col: str, ascending: bool,
            margin: int = 1) -> tuple[pa.Table, bool, float]:
    """The top k in canonical order and, after them, the rest of a tie that straddles the
    cut; whether the leg ran out of rows; and the value of the first row past k (NaN if
    none), which tells whether a tie straddles the cut.

    At a tie straddling the cut LanceDB's full-text search keeps an arbitrary subset of the
    tied rows (BM25 ties are common). Fetching past the tie and ranking by row id makes every
    depth a prefix of every deeper one, so a cached deep pool equals a fresh shallow fetch;
    the tied rows past k stay in the pool, unranked at k (`Leg.depth`), because LanceDB's own
    search at k may return any of them (`native_fts_ids`).
    """
    want = k + max(1, margin)
    while True:
        got = _canonical(fetch(want), value_col, ascending)
        vals = got.column(value_col).to_numpy(zero_copy_only=False)
        after = float(vals[k]) if len(vals) > k else float("nan")
        short = got.num_rows < want
        if short or vals[-1] != vals[k - 1] or want >= TIE_FETCH_MAX:
            end = k + int(np.count_nonzero(vals[k:] == vals[k - 1])) if len(vals) > k else k
            return got.slice(0, end), short and got.num_rows <= k, after
        want = min(want * 2, TIE_FETCH_MAX)


def _as_importance(values: list[Any], warnings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Importance as floats, and which rows have none (NULL or not a number: the default
    applies). A stored NaN stays NaN: `importance ?? 0.7` keeps it, so the real formula
    gives that row a NaN score, which no min score keeps. Integers, decimals and numeric
    strings are read as numbers (stores.roles); unreadable values are warned about."""
    out, missing, unreadable = importance_values(values)
    if unreadable:
        warnings.append(f"{unreadable} candidates have an importance that is not a number; "
                        "the default importance is used for them.")
    return out, missing


def fetch_pool(store: Store, query: Query, params: Params, vec_k: int, fts_k: int,
               vec_leg: tuple[pa.Table | ReadLeg, bool, float] | None = None,
               fts_order: tuple[int, Callable[[], Any]] | None = None) -> Pool:
    """Run each needed leg at its depth (one LanceDB search per leg) and merge rows by id.
    `vec_leg` (hook for batched scans): the vector leg already fetched, exactly as `_leg_at`
    returns it (canonical order, `[*leg_columns, "_rowid", "_distance"]`, exhausted), or as
    positions into rows read once (`ReadLeg`).
    `fts_order` (k, search): the caller will ask LanceDB's own full-text order at k when the
    full-text leg ties at k (the classic fetch stage does, `native_fts_ids`): then `search` runs
    in the full-text leg's thread as soon as the leg is in, beside the vector leg, not after
    it. Its answer is the caller's (a cache); a failure is left for the caller's own search."""
    spec = params.scope_spec()
    push = scopes.pushdown(spec, store.roles, store.schema)
    where = push.expr if params.filter == "pushdown" else None
    cols = _select(store, spec)
    names = set(store.schema.names)  # a list made anew on every read of .names
    role_columns = set(store.roles.as_dict().values())
    for c in cols:  # roles were checked when the store opened; a --scope-column is now
        if c not in role_columns and split_nested(c):
            check_nested(store.schema, "scope", c)
    for c in scopes.scope_columns(store.roles, spec):
        if c in names and pa.types.is_list(store.schema.field(c).type):
            raise InspectorError(f"The scope column {c} holds lists: list membership runs in "
                                 "the pipelines of stages (a fetch stage's scope_rule "
                                 "contains), not in the fixed pipeline.")
    absent = [c for c in cols if c not in names and not split_nested(c)]
    if absent:
        raise InspectorError(f"Scope column '{absent[0]}' is not in table '{store.table_name}'; "
                             f"columns: {', '.join(store.schema.names)}.")
    jobs: dict[str, Callable[[], tuple[pa.Table, bool, float]]] = {}
    fts_ties = "arbitrary"
    # every leg's _rowid addresses the rows of store.table (a private full-text copy and an
    # FTS5 table number their rows their own way): only then does the pool say which stored
    # rows it holds (Pool.rowids)
    own_rowids = not hasattr(store.table, "source_rowids")
    if params.mode in ("vector", "hybrid"):
        vec = _checked_vector(store, query, params.distance)
        prefix = prefix_exact(getattr(store, "vector_index", None), params)
        jobs["vec"] = lambda: _vector_leg_at(
            lambda k: _vector_leg(store, vec, k, params, cols, where), vec_k, prefix)
        if vec_leg is not None:  # a batched scan fetched it already
            jobs["vec"] = lambda: vec_leg
    if params.mode in ("fts", "hybrid"):
        if not query.text or not query.text.strip():
            raise InspectorError("Full-text and hybrid search need query text (--text).")
        text = query.text
        fts_src, lives = fts_table(store)  # build a private index first, outside the pool
        own_rowids = own_rowids and lives == "store"  # the table's own index: store.table
        fts_ties = "rowid" if hasattr(fts_src, "source_rowids") else "arbitrary"  # FTS5: rowid
        ahead = fts_order if fts_ties == "arbitrary" else None  # FTS5's order is its rowid

        def fts_job() -> tuple[pa.Table, bool, float]:
            got = _leg_at(lambda k: _fts_leg(store, text, k, cols, where), fts_k, "_score",
                          ascending=False, margin=max(fts_k // 2, FTS_MARGIN_MIN))
            if ahead is not None and ahead[0] and tied_at(
                    got[0].column("_score").to_numpy(zero_copy_only=False), got[2], ahead[0]):
                with contextlib.suppress(Exception):  # the caller's own search says why
                    ahead[1]()
            return got

        jobs["fts"] = fts_job
    try:
        done = _side_by_side(jobs)
    except InspectorError:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing search is reported, never a traceback
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise InspectorError(f"LanceDB could not search table '{store.table_name}' at version "
                             f"{store.version}: {first}") from exc
    if "vec" in jobs and vec_leg is None:  # a large flat search's freed memory goes back
        heap.trim_after(int(store.rows) * int(store.dim or 0))
    legs = {name: r[0] for name, r in done.items()}
    exhausted = {name: r[1] for name, r in done.items()}
    pool = _merge(store, query, params, spec, push, cols, legs, exhausted, vec_k, fts_k,
                  own_rowids)
    after = {name: r[2] for name, r in done.items()}
    # for ties: what lies just past each leg's cut, and how full-text ties are ordered
    return replace(pool, vec_leg=_past(pool.vec_leg, after.get("vec")),
                   fts_leg=_past(pool.fts_leg, after.get("fts")), fts_ties=fts_ties,
                   knobs=search_knobs(params))


def search_knobs(p: Params) -> tuple[Any, ...]:
    """The parameters that change what a vector search returns, besides its depth."""
    return tuple(getattr(p, k) for k in (*ANN_KNOBS, "exact"))


def _past(leg: Leg | None, value: float | None) -> Leg | None:
    return None if leg is None or value is None else replace(leg, next_value=value)


def _checked_vector(store: Store, query: Query, distance: str) -> np.ndarray:
    if query.vector is None:
        raise InspectorError("Vector and hybrid search need a query vector or text to embed.")
    vec = np.asarray(query.vector, np.float32).ravel()
    if vec.shape[0] != store.dim:
        raise InspectorError(f"The query vector has {vec.shape[0]} dimensions but the "
                             f"store's vectors have {store.dim}.")
    if not np.all(np.isfinite(vec)):
        raise InspectorError("The query vector contains NaN or infinite values.")
    if distance == "cosine" and not np.any(vec):
        raise InspectorError("The query vector is all zeros, and cosine distance is undefined "
                             "for it; check the query text or the vector.")
    return vec


class TakenColumns(Mapping[str, list[Any]]):
    """A pool's attribute columns as a table of its own rows (taken from a scan pass's rows,
    `ReadLeg`), each column's values made into a list when first read: a sweep's stages read
    the id, scope and importance columns; the others only where rows are shown or built."""

    def __init__(self, table: pa.Table, made: dict[str, list[Any]] | None = None) -> None:
        self._table, self._names = table, list(table.column_names)
        self._made: dict[str, list[Any]] = dict(made or {})

    def __getitem__(self, name: str) -> list[Any]:
        got = self._made.get(name)
        if got is None:
            if name not in self._names:
                raise KeyError(name)
            got = self._made[name] = self._table.column(name).to_pylist()
        return got

    def rows(self, name: str, todo: list[int]) -> list[Any]:
        """The column's values at positions `todo`, without making the whole column."""
        got = self._made.get(name)
        if got is not None:
            return list(map(got.__getitem__, todo))
        if name not in self._names:
            raise KeyError(name)
        return self._table.column(name).take(pa.array(todo, pa.int64())).to_pylist()

    def __contains__(self, name: object) -> bool:  # without reading the column
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def column_rows(columns: Mapping[str, list[Any]], name: str, todo: list[int]) -> list[Any]:
    """A pool's column `name` at positions `todo` (read or taken, `TakenColumns`)."""
    if isinstance(columns, TakenColumns):
        return columns.rows(name, todo)
    return list(map(columns[name].__getitem__, todo))


@dataclass(frozen=True)
class ReadLeg:
    """A vector leg as positions into rows read already (a scan pass's rows, with `_rowid`)
    and its distances, in the leg's order: what `_leg_at`'s table holds, not taken yet."""

    rows: pa.Table
    at: np.ndarray  # int64 positions into `rows`, in rank order
    distance: np.ndarray  # float32 `_distance`

    def table(self) -> pa.Table:
        """The leg as `_leg_at` returns its table (`[*columns, _rowid, _distance]`)."""
        return self.rows.take(pa.array(self.at, pa.int64())).append_column(
            "_distance", pa.array(self.distance, pa.float32()))


def _objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _id_order(values: list[Any]) -> np.ndarray:
    """Each row's position in ascending id order (RRF's tie-break): integer ids by value,
    other ids by their text, equal keys in row order."""
    n = len(values)
    numeric = all(isinstance(x, int) for x in values)
    if numeric and n:
        order = np.argsort(np.array(values, np.int64), kind="stable")
    else:  # text ids: Python's stable sort compares them as numpy's object sort does, in
        # half the time (10,000 ids: ~1.7 against ~3.5 ms; a sweep builds one such pool a query)
        keys = values if numeric else [str(x) for x in values]
        order = np.array(sorted(range(n), key=keys.__getitem__), np.int64)
    id_order = np.empty(n, np.int64)
    id_order[order] = np.arange(n)
    return id_order


def _merge(store: Store, query: Query, params: Params, spec: scopes.ScopeSpec,
           push: scopes.Pushdown, cols: list[str], legs: dict[str, Any],
           exhausted: dict[str, bool], vec_k: int, fts_k: int,
           own_rowids: bool = False) -> Pool:
    id_col = store.roles.id
    only = legs.get("vec") if len(legs) == 1 else None
    first = None
    if isinstance(only, ReadLeg):  # its rows' columns taken, as a table of the pool's own
        at = np.asarray(only.at, np.int64)
        own = only.rows.select(cols).take(pa.array(at, pa.int64()))
        first = own.column(id_col).to_pylist()
    if first is not None and len(set(first)) == len(first):
        n, duplicates = len(first), 0  # one leg, no id repeated: the pool's rows are its rows
        columns: Mapping[str, list[Any]] = TakenColumns(own, {id_col: first})
        ids = _objects(first)
        leg_rows: dict[str, Any] = {"vec": np.arange(n)}
        leg_values = {"vec": only.distance}
        rowids = only.rows.column("_rowid").take(pa.array(at, pa.int64())).to_numpy(
            zero_copy_only=False).astype(np.uint64) if own_rowids else None
    else:
        legs = {name: t.table() if isinstance(t, ReadLeg) else t for name, t in legs.items()}
        merged, leg_rows, rowids, duplicates = _merged_rows(legs, cols, id_col, own_rowids)
        columns, n = merged, len(merged[id_col])
        ids = _objects(merged[id_col])
        leg_values = {name: tbl.column("_distance" if name == "vec" else "_score").to_numpy(
            zero_copy_only=False) for name, tbl in legs.items()}
    rank = {"vec": np.full(n, -1, np.int64), "fts": np.full(n, -1, np.int64)}
    value = {"vec": np.full(n, np.nan), "fts": np.full(n, np.nan)}
    built: dict[str, Leg] = {}
    for name in legs:
        vals = np.asarray(leg_values[name]).astype(np.float64)
        rows = np.asarray(leg_rows[name], np.int64)
        keep = rows >= 0
        rows, vals = rows[keep], vals[keep]
        rank[name][rows] = np.arange(len(rows))
        value[name][rows] = vals
        depth = vec_k if name == "vec" else fts_k
        built[name] = Leg(rows=rows, values=vals, depth=depth, exhausted=exhausted[name])
    in_scope, rule, scope_value = scopes.evaluate(spec, store.roles, columns, n)
    pcol = push.column
    push_match = np.array([push.matches(v) for v in columns.get(pcol, [None] * n)]
                          if pcol else [True] * n, dtype=bool)
    warnings = [f"{duplicates} duplicate ids were merged; ranks use each id's first hit."] \
        if duplicates else []
    warnings.extend(store.column_notes)
    importance, missing = _as_importance(
        columns.get(store.roles.importance or "", [None] * n), warnings)
    nan_imp = int(np.sum(np.isnan(importance) & ~missing))
    if nan_imp:
        warnings.append(f"{nan_imp} candidates have a NaN importance: the blend formula gives "
                        "them a NaN score, so no min score keeps them (as in the real systems).")
    id_order = _id_order(columns[id_col])
    return Pool(store=store.info(), roles=store.roles.as_dict(), query=query, mode=params.mode,
                distance=params.distance, placement=params.filter, scope=spec,
                pushdown_sql=push.sql, pushdown_note=push.note, ids=ids, id_order=id_order,
                columns=columns,
                importance=importance, importance_missing=missing,
                in_scope=np.asarray(in_scope, bool), scope_rule=rule, scope_value=scope_value,
                pushdown_match=push_match, vec_rank=rank["vec"], vec_dist=value["vec"],
                fts_rank=rank["fts"], fts_score=value["fts"], vec_leg=built.get("vec"),
                fts_leg=built.get("fts"), warnings=tuple(warnings),
                index=getattr(store, "vector_index", None), rowids=rowids)


def _merged_rows(legs: dict[str, pa.Table], cols: list[str], id_col: str, own_rowids: bool
                 ) -> tuple[dict[str, list[Any]], dict[str, list[int]], np.ndarray | None, int]:
    """The legs' rows merged by id (each id's first hit), in order of first appearance: the
    columns, each leg's rows as positions (-1: a duplicate within the leg), LanceDB's row
    ids where every leg has them, and how many duplicates were merged."""
    index: dict[Any, int] = {}
    columns: dict[str, list[Any]] = {c: [] for c in cols}
    leg_rows: dict[str, list[int]] = {}
    # each leg's new rows' _rowid, as `columns` (None: the legs' row ids are not the table's)
    rowid_parts: list[np.ndarray] | None = [] if own_rowids else None
    duplicates = 0
    for name, tbl in legs.items():
        rows: list[int] = []
        seen: set[Any] = set()
        new: list[int] = []  # the leg's rows that are new to the pool, in leg order
        leg_ids = tbl.column(id_col).to_pylist()
        if not index and len(set(leg_ids)) == len(leg_ids):  # the first leg, no duplicates
            index.update(zip(leg_ids, range(len(leg_ids)), strict=True))
            leg_ids, rows, new = [], list(range(len(index))), list(range(len(index)))
        for i, rid in enumerate(leg_ids):
            if rid in seen:
                duplicates += 1
                rows.append(-1)
                continue
            seen.add(rid)
            at = index.get(rid)
            if at is None:
                at = index[rid] = len(index)
                new.append(i)
            rows.append(at)
        leg_rows[name] = rows
        if new:  # whole columns through Arrow, not cell by cell
            part = tbl if len(new) == tbl.num_rows else tbl.take(pa.array(new, pa.int64()))
            for c in cols:
                columns[c].extend(part.column(c).to_pylist())
            if rowid_parts is not None and "_rowid" in part.column_names:
                rowid_parts.append(part.column("_rowid").to_numpy(zero_copy_only=False))
            else:
                rowid_parts = None
    n = len(index)
    rowids = None if rowid_parts is None else \
        np.concatenate(rowid_parts or [np.empty(0, np.uint64)]).astype(np.uint64)
    if rowids is not None and len(rowids) != n:
        rowids = None
    return columns, leg_rows, rowids, duplicates


# --- hook for batched scans (inspector.core.engine.pools.batched) ---------------------------------
def leg_columns(store: Store, params: Params) -> list[str]:
    """The columns a leg must carry for `fetch_pool(..., vec_leg=...)`, besides _rowid and
    _distance."""
    return _select(store, params.scope_spec())
