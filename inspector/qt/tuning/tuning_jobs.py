"""Background jobs of the tuning panels: plain functions over the core (tested without a GUI).

Each runs on the global thread pool through the window's job mechanism (qt.jobs), which
drops superseded answers and turns an InspectorError into one sentence.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.sweep import (
    Case,
    Grid,
    SweepResult,
    aggregate,
    cases_from_judgments,
    iter_sweep,
)
from inspector.core.engine.flow.question import Question
from inspector.core.engine.inputs import question_params
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Query
from inspector.core.engine.trace import Trace
from inspector.core.errors import InspectorError
from inspector.core.evidence.bundle import Loaded
from inspector.core.stores.store import Store


@dataclass(frozen=True)
class SweepRequest:
    """What to sweep: the question the window asks, whose parameters are the base the grid
    varies, for its query alone (`query`, already fetched) or every query of a loaded set."""

    question: Question
    grid: Grid
    query: Query | None = None
    name: str = "current query"
    grades: tuple[tuple[str, float], ...] = ()
    query_set: Judgments | None = None

    @property
    def base(self) -> Params:
        return question_params(self.question)


def sweep_job(store: Store, req: SweepRequest, cancelled: Callable[[], bool]
              ) -> Generator[tuple[int, int, str], None, SweepResult]:
    """A generator over the core's per-query sweep: yields (done, total, query name) after
    each query, stops between queries once `cancelled()`, and returns the aggregate of what
    was swept (flagged cancelled when it stopped early)."""
    base = req.base
    if req.query_set is not None:
        cases = cases_from_judgments(store, req.query_set, base.mode, req.question.embedder)
    elif req.query is not None:
        cases = [Case(name=req.name, query=req.query, grades=req.grades)]
    elif req.question.text or req.question.vector is not None or req.question.vector_of:
        from inspector.core.engine.inputs import question_query

        query = question_query(store, req.question, base.mode)
        cases = [Case(name=req.name, query=query, grades=req.grades)]
    else:
        raise InspectorError("Run a query first: the sweep needs a query or a query set.")
    t0 = time.perf_counter()
    done = []
    for q in iter_sweep(store, cases, base, req.grid):
        done.append(q)
        yield len(done), len(cases), q.case.name
        if len(done) < len(cases) and cancelled():
            break  # the generator fetches nothing more
    return aggregate(done, base, req.grid, len(done) < len(cases), time.perf_counter() - t0)


def parse_changes(text: str) -> dict[str, Any]:
    """'overfetch=3, filter=pushdown' (commas or semicolons) -> parameter changes."""
    from inspector.core.engine.inputs import parse_changes as parse_pairs

    return parse_pairs(x for x in (p.strip() for p in text.replace(";", ",").split(",")) if x)


def side_params(current: Params, preset: str | None, changes: str) -> Params:
    """One side of a comparison: the window's parameters or a preset (keeping the window's
    limit and scope), with KEY=VALUE changes on top."""
    from inspector.core.engine.inputs import params_with_changes

    return params_with_changes(current, preset, parse_changes(changes))


def compare_job(store: Store, query: Query, a: Params, b: Params,
                labels: tuple[str, str]) -> Any:
    from inspector.core.analysis.compare import compare

    return compare(store, query, a, b, labels)


def map_job(store: Store, trace: Trace, depth: int | None = None) -> Any:
    """The pool map of the trace's parameters over a pool fetched `depth` deep (the receipt's
    depth by default), so the map shows what lies beyond the top-N cut; for exact search
    the cut and the results are the trace's own."""
    from inspector.core.analysis.poolmap import pool_map
    from inspector.core.engine.pipeline import derive
    from inspector.core.engine.pools import exhaustive_pool
    from inspector.core.evidence.receipt import DEFAULT_POOL_DEPTH

    d, p = trace.depths, trace.params
    want = max(depth or DEFAULT_POOL_DEPTH, d.pool, d.vec_k, d.fts_k)
    deep = exhaustive_pool(store, trace.pool.query, p, depth=want)
    return pool_map(store, derive(deep, p))


def receipt_job(store: Store, query: Query, question: Question, path: str,
                grades: dict[str, float] | None, against: tuple[str, Params] | None,
                label: str) -> list[str]:
    """Build the receipt for the window's query (fetched for `question`, whose parameters
    it holds) and write BUNDLE.json + BUNDLE.html."""
    from inspector.core.evidence import bundle
    from inspector.core.evidence.receipt import build_receipt

    doc = build_receipt(store, query, question_params(question), grades=grades or None,
                        against=against, label=label, question=question)
    return [str(x) for x in bundle.save(doc, path, stores=[store.uri])]


def open_receipt_job(path: str) -> Loaded:
    from inspector.core.evidence import bundle

    return bundle.load(path)
