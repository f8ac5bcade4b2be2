"""Parameter sweeps: over-fetch x blend weight (x min score) grids from one deep fetch per query.

Each query is fetched once, as deep as `pools.exhaustive_pool` goes (the whole table up to
its cap), from the pool source (expected rows or a receipt of the same query then fetch
nothing); the grid's cells come from that pool in one call (`pipeline.finals_grid`, equal to
`pipeline.derive` cell by cell, which equals `pipeline.run` for exact, flat search). The
same pool gives the ground truth (`truth.truth_ids`: a prefiltered search in memory), so
scoped recall needs no labels; with judgments, recall/precision/MRR/nDCG are computed too.

Memory is bounded by the pool source's bound (pools.CACHE_ROWS) for any number of queries: a
query keeps its grid of metrics and its cells' ids, never its pool nor its scanned leg.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.analysis import metrics as M
from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.safe import SafeDepth, safe_depth, summarize_safe
from inspector.core.analysis.truth import is_complete, scoped_pool, trim_pool, truth_ids
from inspector.core.engine import pools
from inspector.core.engine.index_rule import prefix_exact, used_index
from inspector.core.engine.live import CellPools
from inspector.core.engine.params import Params, depths, pool_depth
from inspector.core.engine.pipeline import derive, finals_grid
from inspector.core.engine.pool import Pool, Query
from inspector.core.engine.pools import EXHAUSTIVE_MAX, HYBRID_SCAN_MAX, depth_for, fetch
from inspector.core.engine.pools.batched import AUTO, Leg, ScanPlan
from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store

DEFAULT_OVERFETCH = tuple(float(x) for x in range(1, 11))
DEFAULT_BLEND = tuple(round(0.1 * i, 1) for i in range(11))
METRIC_KEYS = ("scoped_recall", "recall", "precision", "mrr", "ndcg")
Progress = Callable[[int, int, str], None]
Cancelled = Callable[[], bool]


MAX_AXIS = 200  # values per grid axis


def parse_axis(spec: str, what: str) -> tuple[float, ...]:
    """'1,2,4' or 'start:stop:step' (inclusive) -> sorted unique finite floats. The number of
    values is known before any is built, so a tiny step fails at once instead of allocating."""
    bad = InspectorError(f"The {what} grid must be 'a,b,c' or 'start:stop:step' with finite "
                         f"numbers, not {spec[:80]!r}.")
    too_many = InspectorError(f"The {what} grid needs between 1 and {MAX_AXIS} values.")
    try:
        if ":" in spec:
            a, b, s = (float(x) for x in spec.split(":"))
            if not all(np.isfinite((a, b, s))) or s <= 0 or b < a:
                raise bad
            n = (b - a) / s + 1e-9
            if not np.isfinite(n) or n >= MAX_AXIS:
                raise too_many
            vals = [round(a + i * s, 10) for i in range(int(np.floor(n)) + 1)]
        else:
            items = spec.split(",")
            if len(items) > MAX_AXIS:
                raise too_many
            vals = [float(x) for x in items if x.strip()]
    except ValueError:
        raise bad from None
    if not all(np.isfinite(vals)):
        raise bad
    if not vals or len(vals) > MAX_AXIS:
        raise too_many
    return tuple(sorted(set(vals)))


@dataclass(frozen=True)
class Grid:
    """The swept values; min_score None means 'the base parameters' min score only'."""

    overfetch: tuple[float, ...] = DEFAULT_OVERFETCH
    blend: tuple[float, ...] = DEFAULT_BLEND
    min_score: tuple[float, ...] | None = None

    def resolved(self, base: Params) -> Grid:
        for f in self.overfetch:
            base.with_(overfetch=f)  # validates each value once, with the usual message
        for w in self.blend:
            base.with_(blend=w)
        return Grid(self.overfetch, self.blend, self.min_score or (base.min_score,))

    @property
    def shape(self) -> tuple[int, int, int]:
        return (len(self.overfetch), len(self.blend), len(self.min_score or (0.0,)))

    def to_json(self) -> dict[str, Any]:
        return {"overfetch": list(self.overfetch), "blend": list(self.blend),
                "min_score": list(self.min_score or ())}


@dataclass(frozen=True)
class Case:
    """One query of a sweep: what to search, in which scope, and its judgments (if any)."""

    name: str
    query: Query
    scope: str | None = None
    grades: tuple[tuple[str, float], ...] = ()

    def params(self, base: Params) -> Params:
        return base if self.scope is None else base.with_(scope=self.scope)


def cases_from_judgments(store: Store, judgments: Judgments, mode: str,
                         embedder: str | None = None) -> list[Case]:
    """Each query of a set: its own vector, a row's vector (all read at once, `id IN (...)`),
    or its text embedded with the store's embedder."""
    from inspector.core.engine.inputs import build_query

    if not judgments.queries:
        raise InspectorError("The query set is empty.")
    wanted = [q.vector_of for q in judgments.queries if q.vector is None and q.vector_of]
    examples = store.vectors_of(wanted) if wanted else {}
    out = []
    for q in judgments.queries:
        if q.vector is None and q.vector_of:
            query = Query(text=q.text, vector=examples[q.vector_of],
                          source=f"example:{q.vector_of}")
        else:
            query = build_query(store, mode, text=q.text, embedder=embedder,
                                vector=None if q.vector is None else np.asarray(q.vector))
        out.append(Case(name=q.label, query=query, scope=q.scope, grades=q.grades))
    return out


@dataclass(frozen=True)
class Best:
    """The best value of a metric and every cell within 1e-9 of it; `pick` is the cheapest."""

    metric: str
    value: float | None
    cells: tuple[tuple[float, float, float], ...] = ()
    pick: tuple[float, float, float] | None = None

    def to_json(self) -> dict[str, Any]:
        if not self.cells:
            return {"metric": self.metric, "value": None, "cells": 0, "pick": None}
        f, w, m = zip(*self.cells, strict=True)
        return {"metric": self.metric, "value": self.value, "cells": len(self.cells),
                "overfetch": [min(f), max(f)], "blend": [min(w), max(w)],
                "min_score": [min(m), max(m)],
                "pick": dict(zip(("overfetch", "blend", "min_score"), self.pick, strict=True))}


def best_region(values: np.ndarray, grid: Grid, metric: str, base: Params) -> Best:
    """Cells at the best value; the pick prefers the smallest over-fetch, then the blend and
    min score nearest the base parameters (the least change that is as good)."""
    if values.size == 0 or np.all(np.isnan(values)):
        return Best(metric, None)
    top = float(np.nanmax(values))
    idx = np.argwhere(np.nan_to_num(values, nan=-np.inf) >= top - 1e-9)
    assert grid.min_score is not None
    cells = tuple((grid.overfetch[i], grid.blend[j], grid.min_score[m]) for i, j, m in idx)
    pick = min(cells, key=lambda c: (c[0], abs(c[1] - base.blend), abs(c[2] - base.min_score)))
    return Best(metric, top, cells, pick)


@dataclass(frozen=True)
class QuerySweep:
    """One query's grid: metric arrays shaped like the grid (NaN = undefined), and evidence.
    It keeps only what its result needs (not the pool): a sweep over many queries holds one
    pool at a time."""

    case: Case
    params: Params
    k: int
    objective: str  # ndcg when judged, scoped_recall otherwise
    values: dict[str, np.ndarray]
    returned: np.ndarray
    finals: np.ndarray  # positions in `ids` per cell, -1 padded: (nF, nW, nM, limit)
    ids: np.ndarray  # the ids of every row some cell returns, in pool order
    pool_size: int
    truth_size: int
    truth_complete: bool
    best: Best
    safe: SafeDepth
    fetch_s: float
    own: np.ndarray | None = None  # bool per cell: answered by its own query; None: no cell

    def final_ids(self, i: int, j: int, m: int) -> list[Any]:
        return [self.ids[r] for r in self.finals[i, j, m] if r >= 0]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.case.name, "text": self.case.query.text, "scope": self.case.scope,
                "judged": bool(self.case.grades), "k": self.k, "objective": self.objective,
                "truth_size": self.truth_size, "truth_complete": self.truth_complete,
                "pool_size": self.pool_size, "best": self.best.to_json(),
                "safe": self.safe.to_json(),
                "values": {k: _nested(v) for k, v in self.values.items()},
                "returned": self.returned.tolist(),
                "own_query": None if self.own is None else self.own.tolist()}


def _nested(a: np.ndarray) -> Any:
    return np.where(np.isnan(a), None, np.round(a, 6)).tolist()


def sweep_pool(pool: Pool, case: Case, base: Params, grid: Grid, k: int | None = None,
               table_rows: int | None = None, fetch_s: float = 0.0,
               cells: CellPools | None = None) -> QuerySweep:
    """The whole grid for one query from its (exhaustive) pool: pure numpy, no LanceDB. With
    `cells`, a cell the pool cannot answer exactly (an approximate index) is answered by its
    own query, as `inspector query` runs it; the pool (then an exact search) gives the truth."""
    p = case.params(base)
    grid = grid.resolved(p)
    k = k or p.limit
    grades = dict(case.grades) if case.grades else None
    judged = bool(grades) and any(g > 0 for g in grades.values())
    depth = max(leg.depth for leg in (pool.vec_leg, pool.fts_leg) if leg is not None)
    shape = grid.shape
    keys = ["scoped_recall", *(METRIC_KEYS[1:] if grades else ())]
    values = {key: np.full(shape, np.nan) for key in keys}
    returned = np.zeros(shape, np.int64)
    own = np.zeros(shape, bool)
    finals = np.full((*shape, p.limit), -1, np.int64)
    where: dict[Any, int] = {}  # every id some cell returns -> its position in `ids`
    sub = scoped_pool(pool)
    assert grid.min_score is not None
    truths = {(j, m): truth_ids(pool, as_pool(pool, p.with_(overfetch=grid.overfetch[0], blend=w,
                                                             min_score=ms)), sub)
              for j, w in enumerate(grid.blend) for m, ms in enumerate(grid.min_score)}
    head = pool if cells is not None else _grid_head(pool, p, grid)
    together = None if cells is not None else finals_grid(head, p, grid.overfetch,
                                                         grid.blend, grid.min_score)
    for (i, j, m), _ in np.ndenumerate(returned):
        if together is not None:  # every cell of the grid from one blended order per blend
            ids = [head.ids[r] for r in together[j][m][i]]
        else:
            cell = p.with_(overfetch=grid.overfetch[i], blend=grid.blend[j],
                           min_score=grid.min_score[m])
            src, own[i, j, m] = (head, False) if cells is None else cells.pool_for(cell)
            ids = list(derive(src, cell).ids("final"))
        finals[i, j, m, : len(ids)] = [where.setdefault(x, len(where)) for x in ids]
        returned[i, j, m] = len(ids)
        got = M.all_metrics(ids, k, grades, truths[(j, m)])
        for key in keys:
            v = got.get(key if key == "mrr" else f"{key}@{k}")
            values[key][i, j, m] = np.nan if v is None else v
    objective = "ndcg" if judged else "scoped_recall"
    truth0 = truth_ids(pool, as_pool(pool, p), sub)
    ids_used = np.empty(len(where), dtype=object)
    ids_used[:] = list(where)
    return QuerySweep(
        case=case, params=p, k=k, objective=objective, values=values, returned=returned,
        finals=finals, ids=ids_used, pool_size=pool.size, truth_size=len(truth0[:k]),
        truth_complete=is_complete(pool, table_rows or pool.size),
        best=best_region(values[objective], grid, objective, p),
        safe=safe_depth(pool, p, truth0, k, grid.overfetch, depth, _scan_limit(p, grid),
                        None if cells is None or not own.any() else cells.pool_for),
        fetch_s=fetch_s, own=own if own.any() else None)


def _grid_head(pool: Pool, p: Params, grid: Grid) -> Pool:
    """The pool's first rows as deep as the grid's deepest cell reads (and one past, for the
    tie report): a flat pool's prefix, so every cell derives from it what the whole deep pool
    gives, over ~100 rows instead of the truth's 10,000."""
    assert grid.min_score is not None
    deepest = max(max(d.vec_k, d.fts_k) for d in
                  (depths(p.with_(overfetch=f, min_score=grid.min_score[0]))
                   for f in grid.overfetch))
    legs = [leg.depth for leg in (pool.vec_leg, pool.fts_leg) if leg is not None]
    return pool if deepest + 1 >= min(legs, default=0) else trim_pool(pool, deepest + 1)


def as_pool(pool: Pool, p: Params) -> Params:
    """p as the pool was searched: with --exact when the pool is the exact search beside an
    index (the truth of an indexed table), so its knobs match and it is read exactly."""
    return p.with_(exact=True) if pool.knobs and pool.knobs[-1] and not p.exact else p


def needs_exact_truth(store: Store, p: Params) -> bool:
    """True when p searches through an approximate index whose deep pool is no prefix of a
    shallow one: the truth is then the exact search, and each cell runs its own query."""
    index = getattr(store, "vector_index", None)
    return used_index(index, p) is not None and not prefix_exact(index, p)


def _scan_limit(p: Params, grid: Grid) -> int:
    """Hybrid safe-depth scans go to 4x the grid's deepest pool (at most HYBRID_SCAN_MAX)."""
    return min(HYBRID_SCAN_MAX, 4 * pool_depth(p.limit, max(grid.overfetch), 0))


def case_depth(store: Store, case: Case, base: Params, grid: Grid,
               truth_depth: int = EXHAUSTIVE_MAX) -> int:
    """Each leg's depth for one query: deep enough for the ground truth and every cell."""
    return depth_for("sweep", store, case.params(base), max_overfetch=max(grid.overfetch),
                     depth=truth_depth)[0]


def fetch_case(store: Store, case: Case, base: Params, grid: Grid,
               truth_depth: int = EXHAUSTIVE_MAX, vec_leg: Leg | None = None) -> Pool:
    """One retrieval per query (its vector leg possibly from a batched scan)."""
    depth = case_depth(store, case, base, grid, truth_depth)
    return fetch(store, case.query, case.params(base), depth, depth, vec_leg)


def iter_sweep(store: Store, cases: Sequence[Case], base: Params, grid: Grid,
               k: int | None = None, truth_depth: int = EXHAUSTIVE_MAX,
               scan: ScanPlan = AUTO) -> Iterator[QuerySweep]:
    """Yield one query's sweep at a time, so a caller can show progress or stop early.
    On a flat table every query's vector leg comes from one scan, done before the first."""
    t0 = time.perf_counter()
    legs = pools.vector_legs(store, cases, base,
                       lambda c: case_depth(store, c, base, grid, truth_depth), scan)
    shared = (time.perf_counter() - t0) / max(1, len(cases))  # the scan's share per query
    for i, case in enumerate(cases):
        t0 = time.perf_counter()
        exact = needs_exact_truth(store, case.params(base))
        pool = fetch_case(store, case, base.with_(exact=True) if exact else base, grid,
                          truth_depth, legs.pop(i, None))
        cells = CellPools(store, case.query, pool) if exact else None
        yield sweep_pool(pool, case, base, grid, k, store.rows,
                         time.perf_counter() - t0 + shared, cells)


@dataclass(frozen=True)
class SweepResult:
    """Every query's sweep, the means over the set, the best cell, and safe over-fetch."""

    base: Params
    grid: Grid
    queries: tuple[QuerySweep, ...]
    aggregate: dict[str, np.ndarray]
    counts: dict[str, int]  # queries contributing to each aggregate metric
    best: Best
    cancelled: bool
    seconds: float
    fetch_seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"format": "inspector-sweep", "version": 1, "base": self.base.to_json(),
                "grid": self.grid.to_json(), "cancelled": self.cancelled,
                "seconds": round(self.seconds, 4), "fetch_seconds": round(self.fetch_seconds, 4),
                "aggregate": {k: _nested(v) for k, v in self.aggregate.items()},
                "counts": dict(self.counts), "best": self.best.to_json(),
                "safe": summarize_safe([(q.case.scope or q.params.scope, q.safe)
                                        for q in self.queries], self.grid.overfetch),
                "own_query": self.own_query(),
                "queries": [q.to_json() for q in self.queries]}

    def own_query(self) -> dict[str, Any]:
        """Which cells were answered by their own query (an approximate index, where a deep
        pool is no prefix of a shallow one) instead of being derived from one deep pool."""
        own = [q.own for q in self.queries if q.own is not None]
        cells = np.any(np.stack(own), axis=0) if own else np.zeros(self.grid.shape, bool)
        return {"cells": int(cells.sum()), "of": int(cells.size),
                "overfetch": [f for i, f in enumerate(self.grid.overfetch) if cells[i].any()],
                "queries": len(own)}


def aggregate(sweeps: Sequence[QuerySweep], base: Params, grid: Grid,
              cancelled: bool = False, seconds: float = 0.0) -> SweepResult:
    """Means over queries (each metric over the queries where it is defined)."""
    grid = grid.resolved(base)
    agg: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    stacks = {key: [q.values[key] for q in sweeps if key in q.values] for key in METRIC_KEYS}
    stacks["objective"] = [q.values[q.objective] for q in sweeps]
    for key, arrs in stacks.items():
        if arrs:
            stack = np.stack(arrs)
            defined = ~np.isnan(stack)
            n = defined.sum(axis=0)
            total = np.where(defined, stack, 0.0).sum(axis=0)
            agg[key] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
            counts[key] = int(defined.any(axis=(1, 2, 3)).sum())
    best = best_region(agg["objective"], grid, "objective", base) if "objective" in agg \
        else Best("objective", None)
    return SweepResult(base=base, grid=grid, queries=tuple(sweeps), aggregate=agg,
                       counts=counts, best=best, cancelled=cancelled, seconds=seconds,
                       fetch_seconds=sum(q.fetch_s for q in sweeps))


def run_sweep(store: Store, cases: Sequence[Case], base: Params, grid: Grid,
              k: int | None = None, progress: Progress | None = None,
              cancelled: Cancelled | None = None,
              truth_depth: int = EXHAUSTIVE_MAX, scan: ScanPlan = AUTO) -> SweepResult:
    """Sweep a query set; progress(done, total, label) after each query; a true `cancelled()`
    stops between queries and returns what is done, flagged `cancelled`."""
    t0 = time.perf_counter()
    done: list[QuerySweep] = []
    stopped = False
    for q in iter_sweep(store, cases, base, grid, k, truth_depth, scan):
        done.append(q)
        if progress is not None:
            progress(len(done), len(cases), q.case.name)
        if cancelled is not None and len(done) < len(cases) and cancelled():
            stopped = True
            break  # the generator fetches nothing more
    return aggregate(done, base, grid, stopped, time.perf_counter() - t0)
