"""Background jobs of the tuning panels: plain functions over the core (tested without a GUI).

Each takes the window's question (`vm.question.plain()`, the core's Question) and the open
store, and calls the core as the CLI does (`inspector sweep|report|diff-versions`), so the
window and `... --json` give the same numbers for the same question. Each runs on the global
thread pool through the window's job mechanism (qt.jobs), which drops superseded answers and
turns an InspectorError into one sentence.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.analysis.grid import Axis
from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.sweep import (
    Case,
    SweepResult,
    aggregate,
    cases_from_judgments,
    iter_sweep,
)
from inspector.core.engine.flow.question import Question
from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store


def has_query(q: Question) -> bool:
    return bool((q.text or "").strip()) or q.vector is not None or q.vector_of is not None


# ---- sweeps ----

def split_items(text: str) -> list[str]:
    """'fetch.overfetch=1:10:1; blend.weight=0,0.5,1' -> one STAGE.PARAM=SPEC per item (a
    new item starts at each STAGE.PARAM=, so a value may hold commas)."""
    starts = [m.start() for m in re.finditer(r"[A-Za-z_][\w-]*\.[A-Za-z_]\w*\s*=", text)]
    items = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    head = text[: starts[0]] if starts else text
    if head.strip(" ;,\n\t"):
        raise InspectorError(f"The sweep grid is STAGE.PARAM=SPEC items, not "
                             f"{head.strip()[:80]!r}.")
    return [x.strip().rstrip(";,").strip() for x in items]


def axes_for(q: Question, grid_text: str) -> list[Axis]:
    """The grid of the sweep: the items given (`--grid STAGE.PARAM=SPEC`, checked against
    the pipeline's declarations), else the pipeline's default axes, as `inspector sweep`."""
    from inspector.core.analysis import grid
    from inspector.core.engine.flow.question import resolve

    spec, _, _ = resolve(q)
    items = split_items(grid_text) if grid_text.strip() else []
    axes = grid.parse_grid(spec, items) if items else grid.default_axes(spec)
    grid.check_size(axes)
    return axes


def grid_text(axes: Sequence[Axis]) -> str:
    """Axes as the grid field shows them (what `--grid` takes)."""
    def v(x: Any) -> str:
        if isinstance(x, bool):
            return "true" if x else "false"
        return f"{x:g}" if isinstance(x, (int, float)) else str(x)

    return "; ".join(f"{a.key}={','.join(v(x) for x in a.values)}" for a in axes)


@dataclass(frozen=True)
class SweepRequest:
    """What to sweep: the window's question and the grid around it, for its query alone or
    every query of a loaded set (asked as `inspector sweep --queries` asks them)."""

    question: Question
    axes: tuple[Axis, ...]
    name: str = "current query"
    grades: tuple[tuple[str, float], ...] = ()
    query_set: Judgments | None = None
    k: int | None = None


def sweep_cases(store: Store, req: SweepRequest) -> list[Case]:
    """The sweep's queries, as `inspector sweep` builds them."""
    q = req.question
    if req.query_set is not None:
        return cases_from_judgments(q, req.query_set, store)
    if not has_query(q):
        raise InspectorError("Run a query first: the sweep needs a query or a query set.")
    return [Case(req.name, q, tuple(sorted(req.grades)))]


def sweep_job(store: Store, req: SweepRequest, cancelled: Callable[[], bool]
              ) -> Generator[tuple[int, int, str], None, SweepResult]:
    """A generator over the core's per-query sweep: yields (done, total, query name) after
    each query, stops between queries once `cancelled()` (which stops any helper process),
    and returns the aggregate of what was swept (flagged cancelled when it stopped early), as
    `run_sweep` would. A large query set is shared with helper processes as the command
    line's is by default (`sweep_jobs`): the same answers, in the same order."""
    cases = sweep_cases(store, req)
    t0 = time.perf_counter()
    done = []
    stopped = False
    for one in iter_sweep(store, cases, list(req.axes), req.k, jobs=None):  # auto
        done.append(one)
        yield len(done), len(cases), one.case.name
        if len(done) < len(cases) and cancelled():
            stopped = True
            break  # the generator fetches nothing more
    return aggregate(req.question, list(req.axes), done, req.k, stopped,
                     time.perf_counter() - t0)


# ---- comparisons ----

def parse_changes(text: str) -> list[str]:
    """'overfetch=3, fetch.cap=40' (commas or semicolons) -> KEY=VALUE items."""
    items = [p.strip() for p in re.split(r"[;,]", text) if p.strip()]
    for item in items:
        if "=" not in item:
            raise InspectorError(f"Parameter changes are KEY=VALUE, not {item!r}.")
    return items


def side_question(q: Question, preset: str | None, changes: str) -> Question:
    """One side of a comparison, as `inspector report --against-preset P --against K=V`
    asks it: the window's question, or another preset on the same query, scopes, limit and
    clock; KEY=VALUE changes on top (a STAGE.PARAM, a query option on the stage that holds
    it, limit or scope)."""
    from inspector.core.analysis.compare import other_side
    from inspector.core.engine.flow.question import resolve

    out = other_side(q, preset or None, parse_changes(changes))
    resolve(out)  # a bad assignment is said now, not in the worker
    return out


def compare_job(store: Store, a: Question, b: Question, labels: tuple[str, str]) -> Any:
    from inspector.core.analysis.compare import compare

    return compare(store, a, b, labels)[0]


# ---- the pool map ----

def map_job(store: Store, q: Question) -> Any:
    """The map of the question's run over its probe (the truth's deep run), as the receipt
    maps it (`inspector report`'s evidence.map)."""
    from inspector.core.analysis.poolmap import pool_map
    from inspector.core.analysis.truth import truth_trace
    from inspector.core.engine.flow.question import run_question, runs_for
    from inspector.core.engine.flow.runner import PoolCache

    cache = PoolCache()
    runs, _, _ = runs_for(q, store, cache)
    runs.live = True
    deep = truth_trace(runs)  # first: on a flat table its deep search serves the run
    trace = run_question(q, store, cache).trace
    if trace.vector is None:
        raise InspectorError("A full-text query has no vector, so there is nothing to map.")
    return pool_map(store, trace, deep)


# ---- the index sweep ----

def index_sweep_job(store: Store, q: Question, axes: Sequence[Axis], name: str) -> SweepResult:
    from inspector.core.analysis.index_sweep import run_index_sweep

    return run_index_sweep(store, q, [Case(name, q)], list(axes))


# ---- receipts ----

def receipt_job(store: Store, q: Question, against: Question | None,
                labels: tuple[str | None, str | None], grades: dict[str, float] | None,
                path: str) -> list[str]:
    """The receipt of the window's question (and of the Compare tab's side B), written as
    RECEIPT.json + RECEIPT.html by the guarded writer, as `inspector report` writes it."""
    from inspector.core.evidence.receipt import build_receipt, save

    doc = build_receipt(store, q, against, labels, grades or None)
    return [str(x) for x in save(doc, path, html=True, stores=[store.uri])]


def open_receipt_job(path: str, store: Store | None) -> tuple[Any, Question | None, str]:
    """The receipt read and checked, and its question re-run on the open store as of the
    recorded version: (receipt, question or None, why not)."""
    from inspector.core.evidence.receipt import load, reopen

    receipt = load(path)
    if store is None:
        return receipt, None, "no store is open"
    try:
        q, _ = reopen(receipt, store)
    except InspectorError as exc:
        return receipt, None, str(exc)
    return receipt, q, ""
