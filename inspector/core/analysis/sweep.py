"""Sweeps over any pipeline: a grid of declared stage parameters (`grid.py`) over one question
or a query set, every cell the question answered with those parameters set.

A query's cells are answered by its `Runs` (the one answer's runs under changes) through one
fetch cache: a change that a live session answers from cached fetches is no new search, and
the classic pool source answers a shallower over-fetch from a deeper pool where the search is
prefix-exact. Each query's truth (`truth.py`) runs first, as deep as the diagnosis probes, so
on a flat table its one deep search answers every cell after it. Cells, curve, truths and the
safe depth read only the ids a run keeps and its stages' marks (`Runs.final_ids`,
`Runs.outline_once`): over the pool's columns where the route has column forms
(`flow/columns.py`), checked against the rows on two runs of each query. Per cell: rows returned,
expected rows found, scoped recall@k against the truth, with judgments recall, precision, MRR
and nDCG at k, and where a vector leg searches an ANN index the recall against the same cell
searched exactly (`index_recall`). Per query: its safe depth (`safe.py`).

Queries run one at a time and each keeps only its metrics and the positions of the rows its
cells return: its cache, runs and traces go when its grid is done, so memory is bounded by
one query's pool whatever the number of queries (tests/core/analysis/test_sweep_memory.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core import batch_gc
from inspector.core.analysis import metrics as M
from inspector.core.analysis import sweep_jobs
from inspector.core.analysis.grid import Axis, cells, check_size, companions
from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.safe import SafeDepth, depth_key, safe_depth, summarize_safe
from inspector.core.analysis.truth import (
    deep_stages,
    probe_depth,
    run_once,
    searched_index,
    truth_ids,
)
from inspector.core.engine.flow.question import Question, resolve, runs_for
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.flow.runs import Change, Runs, freeze
from inspector.core.engine.pools import Lru
from inspector.core.errors import InspectorError

METRIC_KEYS = ("scoped_recall", "recall", "precision", "mrr", "ndcg", "index_recall")
Progress = Callable[[int, int, str], None]
Cancelled = Callable[[], bool]


@dataclass(frozen=True)
class Case:
    """One query of a sweep: the question asked and its judgments (if any)."""

    name: str
    question: Question
    grades: tuple[tuple[str, float], ...] = ()

    @property
    def scope(self) -> str | None:
        s = self.question.scopes
        return None if s is None else ", ".join(s) or "(none)"


def cases_from_judgments(base: Question, judgments: Judgments, store: Any = None
                         ) -> list[Case]:
    """Each query of a set as the base question asked of it: its text (embedded with the
    store's embedder), a row's vector (`vector_of`; with `store`, every example of the set
    read in one `id IN (...)` read and asked as its vector) or its own vector; its scope,
    else the base question's; its judgments."""
    if not judgments.queries:
        raise InspectorError("The query set is empty.")
    wanted = [jq.vector_of for jq in judgments.queries if jq.vector is None and jq.vector_of]
    examples = store.vectors_of(wanted) if store is not None and wanted else {}
    out = []
    for jq in judgments.queries:
        vector = jq.vector if jq.vector is not None else examples.get(jq.vector_of or "")
        scopes = [jq.scope] if jq.scope is not None else base.scopes
        q = base.model_copy(update={
            "text": jq.text, "vector": None if vector is None else [float(x) for x in vector],
            "vector_of": None if vector is not None else jq.vector_of, "expect": [],
            "scopes": scopes})
        out.append(Case(jq.label, q, tuple(sorted(jq.grade_map().items()))))
    return out


@dataclass(frozen=True)
class Best:
    """The best value of a metric, how many cells reach it, and the cheapest of them: the
    smallest depths, then the other parameters nearest their values as asked."""

    metric: str
    value: float | None
    cells: int = 0
    pick: dict[str, Any] | None = None
    index: int | None = None  # the pick's position in the grid

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "value": self.value, "cells": self.cells,
                "pick": self.pick}


def best_of(values: np.ndarray, axes: Sequence[Axis], metric: str) -> Best:
    if values.size == 0 or np.all(np.isnan(values)):
        return Best(metric, None)
    top = float(np.nanmax(values))
    at = np.flatnonzero(np.nan_to_num(values, nan=-np.inf) >= top - 1e-9)
    grid = list(cells(list(axes)))

    def cost(i: int) -> tuple[float, ...]:
        return tuple(float(grid[i][a.key]) if a.effect == "depth" else
                     abs(float(grid[i][a.key]) - float(a.current))
                     if _num(a.current) else 0.0 for a in axes)

    pick = min(at.tolist(), key=cost)
    return Best(metric, top, len(at), grid[pick], pick)


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass(frozen=True)
class QuerySweep:
    """One query's grid: per cell (in `grid.cells` order) each metric (NaN: undefined), the
    rows returned (-1: the pipeline refused the cell), the expected rows found and the
    positions in `ids` of the rows returned. It keeps no run, trace nor pool."""

    case: Case
    k: int
    objective: str  # ndcg when judged, else scoped_recall
    values: dict[str, np.ndarray]
    returned: np.ndarray
    expected: np.ndarray
    finals: np.ndarray  # (cells, limit) positions in `ids`, -1 padded
    ids: tuple[str, ...]  # every row some cell returns
    base_ids: tuple[str, ...]  # the question's own final rows
    truth: tuple[str, ...]  # the truth's top k
    safe: SafeDepth
    runs: int
    seconds: float
    notes: tuple[str, ...] = ()

    def final_ids(self, cell: int) -> list[str]:
        return [self.ids[r] for r in self.finals[cell] if r >= 0]

    def changed(self) -> np.ndarray:
        """Per cell: True when its final list differs from the question's own."""
        return np.array([tuple(self.final_ids(i)) != self.base_ids
                         for i in range(len(self.returned))], bool)

    def to_json(self) -> dict[str, Any]:
        q = self.case.question
        return {"name": self.case.name, "text": q.text, "vector_of": q.vector_of,
                "scopes": q.scopes, "judged": bool(self.case.grades), "k": self.k,
                "objective": self.objective, "truth": list(self.truth),
                "returned": self.returned.tolist(), "expected": len(q.expect),
                "expected_found": self.expected.tolist(),
                "values": {k: _nested(v) for k, v in self.values.items()},
                "safe": self.safe.to_json(), "runs": self.runs, "notes": list(self.notes)}


def _nested(a: np.ndarray) -> Any:
    return np.where(np.isnan(a), None, np.round(a, 6)).tolist()


def _depth_keys(runs: Runs, axes: Sequence[Axis]) -> set[str]:
    """Parameters the truth does not read: depths of the stages it searches deep."""
    deep = set(deep_stages(runs.spec))
    return {a.key for a in axes if a.effect == "depth" and a.key.partition(".")[0] in deep}


Prepared = tuple[Runs, list[str], list[str]]  # runs_for's answer, made once a question


def sweep_case(store: Any, case: Case, axes: Sequence[Axis], k: int | None = None,
               cache: PoolCache | None = None, prepared: Prepared | None = None,
               specs: SharedSpecs | None = None) -> QuerySweep:
    """The whole grid for one question; each cell run through one fetch cache. `prepared`:
    the question's runs made already (its text embedded once, not once more here); `specs`:
    the pipelines the sweep's other questions ran, shared where this one's is the same."""
    t0 = time.perf_counter()
    runs, notes, inexact = prepared or runs_for(case.question, store, cache or PoolCache())
    if specs is not None:
        specs.share(runs)
    runs.live = True  # a live fetch serves every live parameter's value at once
    also = companions(runs.spec, list(axes))
    truth_of: dict[Any, list[str] | None] = {}
    skip = _depth_keys(runs, axes) | set(also)  # a depth's companions: depths too
    asked = {a.key: a.current for a in axes}

    def truth(sets: dict[str, Any]) -> list[str] | None:
        key = freeze({k: v for k, v in sets.items() if k not in skip and
                      not (k in asked and v == asked[k])})
        if key not in truth_of:
            truth_of[key] = truth_ids(runs, dict(key))
        return truth_of[key]

    base_truth = truth({})  # first: its deep search answers the cells after it
    base = runs.run()
    grid = list(cells(list(axes)))
    # cells, curve, truths and safe depth over columns where the route has them, checked on
    # two runs over rows: the question's own and its grid's last cell (the deepest: a scoped
    # miss's own run may return nothing to compare)
    if not (runs.columns_agree() and
            (not grid or runs.columns_agree(Change().with_sets(**{**grid[-1], **also})))):
        truth_of.clear()
        base_truth = truth({})
        notes = [*notes, "the column form of this pipeline answered the question otherwise "
                 "than its rows did; its cells, truths and safe depth were run over rows"]
    kk = k or base.limit
    grades = dict(case.grades) or None
    judged = bool(grades) and any(g > 0 for g in (grades or {}).values())
    exact = searched_index(base, store)
    keys = ["scoped_recall", *(M.METRICS[:4] if grades else ()), *(("index_recall",)
                                                                    if exact else ())]
    n = len(grid)
    values = {key: np.full(n, np.nan) for key in keys}
    returned = np.full(n, -1, np.int64)
    expected = np.zeros(n, np.int64)
    finals = np.full((n, base.limit), -1, np.int32)
    where: dict[str, int] = {}
    refused: list[str] = []
    for i, cell in enumerate(grid):
        sets = {**cell, **also}
        try:
            ids = runs.final_ids(Change().with_sets(**sets))
        except InspectorError as exc:
            refused.append(str(exc))
            continue
        returned[i] = len(ids)
        expected[i] = sum(1 for e in case.question.expect if e in ids)
        finals[i, : min(len(ids), base.limit)] = [where.setdefault(x, len(where))
                                                   for x in ids[: base.limit]]
        got = M.all_metrics(ids, kk, grades, truth(sets))
        for key in keys:
            v = got.get(key if key == "mrr" else f"{key}@{kk}")
            values[key][i] = np.nan if v is None else v
        if exact:
            values["index_recall"][i] = _index_recall(runs, sets, ids, kk)
    key = depth_key(runs.spec, axes)
    curve = _curve(runs, axes, key, also, base_truth, kk)
    safe = safe_depth(runs, base, base_truth, kk, key, curve)
    if refused:
        notes = [*notes, f"{len(refused)} cell(s) refused by the pipeline, e.g.: {refused[0]}"]
    return QuerySweep(
        case=case, k=kk, objective="ndcg" if judged else "scoped_recall", values=values,
        returned=returned, expected=expected, finals=finals, ids=tuple(where),
        base_ids=tuple(base.final.ids), truth=tuple((base_truth or [])[:kk]), safe=safe,
        runs=runs.count, seconds=time.perf_counter() - t0,
        notes=tuple([*notes, *(f"not exact: {x}" for x in inexact)]))


def _index_recall(runs: Runs, sets: dict[str, Any], ids: list[str], k: int) -> float:
    """Recall@k of a cell against the same cell searched exactly (the index bypassed)."""
    try:
        want = run_once(runs, Change(freeze(sets), exact=True)).final.ids
    except InspectorError:
        return float("nan")
    got = M.scoped_recall(ids, want, k)
    return float("nan") if got is None else got


def _curve(runs: Runs, axes: Sequence[Axis], key: str | None, also: dict[str, Any],
           truth: list[str] | None, k: int) -> list[tuple[Any, float | None]]:
    """Scoped recall along the sweep's depth axis, every other parameter as asked."""
    ax = next((a for a in axes if a.key == key), None)
    if ax is None or truth is None:
        return []
    out = []
    for v in ax.values:
        try:
            ids = runs.final_ids(Change().with_sets(**{**also, key: v}))
        except InspectorError:
            out.append((v, None))
            continue
        out.append((v, M.scoped_recall(ids, truth, k)))
    return out


# settings applied to one pipeline a sweep remembers across its questions: a grid's cells
# (110 by default) and the depths its safe-depth searches try
SHARED_SPECS_MAX = 1024


class SharedSpecs:
    """The pipelines a sweep's questions run, one object for equal ones, each with what the
    sweep's changes make of it (`Runs.adopt`): every question of a sweep applies the same
    cells' settings to the same pipeline, so each set is applied once, not once a question."""

    def __init__(self) -> None:
        self._by: dict[str, list[tuple[Any, Lru]]] = {}

    def share(self, runs: Runs) -> None:
        try:
            key = runs.spec.model_dump_json()
        except Exception:  # noqa: BLE001 - a pipeline that does not serialise is its own
            return
        alike = self._by.setdefault(key, [])
        for spec, applied in alike:
            if spec == runs.spec:
                runs.adopt(spec, applied)
                return
        applied = Lru(SHARED_SPECS_MAX, None)
        alike.append((runs.spec, applied))
        runs.adopt(runs.spec, applied)


class Scanned:
    """The cases' vector legs from batched scans of a flat table (`pools.vector_legs`), each
    handed to the pool source just before its case is swept (`warm`): the case's truth then
    finds its deep pool fetched, and every cell after it too, with no LanceDB search of its
    own. The pool is the one the fetch stage would have fetched (`audit.plan.Planner` reads the
    stage's request before the run); the scan checks itself against LanceDB's search each
    pass. A case the scan cannot take (an index, a fetch stage that searches LanceDB itself,
    a refused query) is searched by its own runs as before: `warm` does nothing for it."""

    def __init__(self, store: Any, cases: Sequence[Case], axes: Sequence[Axis]) -> None:
        from inspector.core.analysis.audit.plan import Planner, Request
        from inspector.core.engine import pools
        from inspector.core.engine.flow.spec import apply_set
        from inspector.core.engine.pools.batched import scannable

        self.store, self.legs = store, None
        self.asked: dict[int, _Asked] = {}
        self.prepared: dict[int, Prepared] = {}  # each case's runs, handed to its sweep
        self._slot: dict[int, int] = {}
        self.scanned = 0
        if not cases or scannable(store) is not None:
            return
        depth = probe_depth(getattr(store, "rows", None))
        for i, case in enumerate(cases):
            try:
                self.prepared[i] = runs_for(case.question, store, PoolCache())
            except InspectorError:
                continue  # the sweep says why, in the case's own words
            runs = self.prepared[i][0]
            spec = apply_set(runs.spec, dict(runs.base_change.sets)) \
                if runs.base_change.sets else runs.spec
            req = Planner(store, spec, runs.limit, runs.now_ms).request(
                text=runs.text, vector=runs.vector, scopes=runs.scopes, source=runs.source)
            if not isinstance(req, Request) or req.params.mode == "fts":
                continue
            over = [float(v) for a in axes if a.key == f"{req.stage}.overfetch"
                    for v in a.values if _num(v)]
            self.asked[i] = _Asked(req.query, req.params, pools.depth_for(
                "sweep", store, req.params, max_overfetch=max(over, default=None),
                depth=depth))
        if self.asked:
            wanted = list(self.asked.values())
            self.legs = pools.vector_legs(store, wanted, wanted[0].p, lambda a: a.depths[0])
            self._slot = {i: n for n, i in enumerate(self.asked)}

    def warm(self, i: int) -> Prepared | None:
        """Before case i is swept: its pool, from its scanned leg (nothing when it has none),
        and its runs as made here (None: its sweep makes them)."""
        from inspector.core.engine import pools

        prepared = self.prepared.pop(i, None)
        asked = self.asked.pop(i, None)
        if asked is None or self.legs is None:
            return prepared
        leg = self.legs.pop(self._slot[i])
        if leg is not None:
            pools.fetch(self.store, asked.query, asked.p, *asked.depths, vec_leg=leg)
            self.scanned += 1
        return prepared


@dataclass(frozen=True)
class _Asked:
    """A case's fetch request as `pools.vector_legs` takes a query, and its depths."""

    query: Any
    p: Any
    depths: tuple[int, int]

    def params(self, base: Any) -> Any:
        return self.p


def iter_sweep(store: Any, cases: Sequence[Case], axes: Sequence[Axis],
               k: int | None = None, scan: bool = True, jobs: int | None = 1
               ) -> Iterator[QuerySweep]:
    """One query's sweep at a time, in the cases' order, so a caller can show progress or stop
    early; with `scan` (on a flat table) every case's vector leg from batched scans
    (`Scanned`). Full garbage collections wait until the last query is taken or the caller
    stops (`batch_gc`). `jobs`: processes sharing the queries, this one included (None or 0:
    one per processor when each has enough queries; see `sweep_jobs`); the same answers."""
    check_size(list(axes))
    parts = sweep_jobs.processes(store, len(cases), jobs)[0]
    if parts > 1:
        yield from sweep_jobs.shared_sweep(
            store, cases, axes, k, scan, parts,
            lambda some: iter_sweep(store, some, axes, k, scan, jobs=1))
        return
    with batch_gc.deferred():  # ended when the caller has every query, or stops early
        legs = Scanned(store, cases, axes) if scan else None
        specs = SharedSpecs()
        for i, case in enumerate(cases):
            batch_gc.valve()
            prepared = legs.warm(i) if legs is not None else None
            yield sweep_case(store, case, axes, k, prepared=prepared, specs=specs)


@dataclass(frozen=True)
class SweepResult:
    """Every query's sweep, the means over the set per cell, the best cell, the safe depth."""

    question: Question
    pipeline: str
    axes: tuple[Axis, ...]
    k: int | None
    queries: tuple[QuerySweep, ...]
    aggregate: dict[str, np.ndarray]
    counts: dict[str, int]  # queries contributing to each aggregate metric
    best: Best
    cancelled: bool
    seconds: float

    @property
    def cells(self) -> list[dict[str, Any]]:
        return list(cells(list(self.axes)))

    def to_json(self) -> dict[str, Any]:
        grid = self.cells
        changed = np.sum([q.changed() for q in self.queries], axis=0) if self.queries \
            else np.zeros(len(grid), int)
        returned = np.stack([np.where(q.returned >= 0, q.returned, np.nan)
                             for q in self.queries]) if self.queries else None
        rows = []
        for i, at in enumerate(grid):
            one: dict[str, Any] = {"at": at}
            for key, arr in self.aggregate.items():
                one[key] = None if np.isnan(arr[i]) else round(float(arr[i]), 6)
            mean = None if returned is None or np.all(np.isnan(returned[:, i])) else \
                float(np.nanmean(returned[:, i]))
            one["returned"] = None if mean is None else round(mean, 6)
            one["expected_found"] = int(sum(q.expected[i] for q in self.queries))
            one["changed"] = int(changed[i])
            rows.append(one)
        return {"format": "inspector-sweep", "version": 2,
                "question": self.question.model_dump(mode="json", by_alias=True),
                "pipeline": self.pipeline, "axes": [a.to_json() for a in self.axes],
                "k": self.k, "cancelled": self.cancelled, "seconds": round(self.seconds, 4),
                "runs": sum(q.runs for q in self.queries), "counts": dict(self.counts),
                "best": self.best.to_json(), "cells": rows,
                "safe": summarize_safe([(q.case.scope, q.safe) for q in self.queries]),
                "queries": [q.to_json() for q in self.queries]}


def aggregate(question: Question, axes: Sequence[Axis], sweeps: Sequence[QuerySweep],
              k: int | None = None, cancelled: bool = False, seconds: float = 0.0
              ) -> SweepResult:
    """Means over queries (each metric over the queries where it is defined); the objective
    is each query's own (nDCG where judged, else scoped recall)."""
    agg: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    stacks = {key: [q.values[key] for q in sweeps if key in q.values] for key in METRIC_KEYS}
    stacks = {"objective": [q.values[q.objective] for q in sweeps], **stacks}
    for key, arrs in stacks.items():
        if arrs:
            stack = np.stack(arrs)
            defined = ~np.isnan(stack)
            n = defined.sum(axis=0)
            total = np.where(defined, stack, 0.0).sum(axis=0)
            agg[key] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
            counts[key] = int(defined.any(axis=1).sum())
    best = best_of(agg["objective"], axes, "objective") if "objective" in agg \
        else Best("objective", None)
    spec, _, _ = resolve(question)
    return SweepResult(question, spec.name, tuple(axes), k, tuple(sweeps), agg, counts, best,
                       cancelled, seconds)


def run_sweep(store: Any, question: Question, cases: Sequence[Case], axes: Sequence[Axis],
              k: int | None = None, progress: Progress | None = None,
              cancelled: Cancelled | None = None, jobs: int | None = 1) -> SweepResult:
    """Sweep a query set around `question`; progress(done, total, label) after each query; a
    true `cancelled()` stops between queries and returns what is done, flagged. `jobs`: as
    `iter_sweep`'s."""
    t0 = time.perf_counter()
    done: list[QuerySweep] = []
    stopped = False
    for q in iter_sweep(store, cases, axes, k, jobs=jobs):
        done.append(q)
        if progress is not None:
            progress(len(done), len(cases), q.case.name)
        if cancelled is not None and len(done) < len(cases) and cancelled():
            stopped = True
            break
    return aggregate(question, axes, done, k, stopped, time.perf_counter() - t0)


def axis_values(result: SweepResult, metric: str = "objective") -> np.ndarray:
    """A metric's means shaped like the grid (one dimension per axis)."""
    return result.aggregate[metric].reshape([len(a.values) for a in result.axes])


__all__ = ["Best", "Case", "QuerySweep", "SweepResult", "aggregate", "axis_values",
           "best_of", "cases_from_judgments", "iter_sweep", "run_sweep", "sweep_case"]
