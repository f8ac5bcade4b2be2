"""One question's runs under changes: parameters set, what-if depths, the index bypassed, the
limit. Every analysis that tries a change (the diagnosis's fixes, expected rows, the index
facet) asks this object, which runs the pipeline through the one fetch cache and remembers
each answer, so no change is run twice and none is offered without having been run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from inspector.core.engine.flow.columns import Outline
from inspector.core.engine.flow.runner import FlowTrace, PoolCache, outline, run
from inspector.core.engine.flow.spec import PipelineSpec, apply_set
from inspector.core.engine.pools import Lru
from inspector.core.errors import InspectorError

Sets = tuple[tuple[str, Any], ...]


def freeze(d: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                        for k, v in (d or {}).items()))


@dataclass(frozen=True)
class Change:
    """A change to a question: parameters (`STAGE.PARAM` or a setting), what-if depths per
    stage, the index bypassed, another limit."""

    sets: Sets = ()
    widen: tuple[tuple[str, int], ...] = ()
    exact: bool = False
    limit: int | None = None

    def with_sets(self, **more: Any) -> Change:
        return Change(freeze({**dict(self.sets), **more}), self.widen, self.exact, self.limit)

    @property
    def what_if(self) -> bool:
        return self.exact or bool(self.widen)

    def argv(self) -> list[str]:
        """The extra command-line arguments that apply this change to the same query."""
        import json

        out: list[str] = []
        for k, v in self.sets:
            shown = v if isinstance(v, str) else json.dumps(list(v) if isinstance(v, tuple)
                                                              else v)
            out += ["--set", f"{k}={shown}"]
        for k, d in self.widen:
            out += ["--widen", f"{k}={d}"]
        if self.exact:
            out.append("--exact")
        if self.limit is not None:
            out += ["--limit", str(self.limit)]
        return out


NO_CHANGE = Change()

# answers a question's runs remember: a slider swept to and fro is answered from memory, and a
# live session held for hours stays the size of MEMO_MAX answers (every answer holds each
# stage's rows: ~0.8 MB at a 1,000-row pool); a diagnosis asks each change about once in turn,
# so the bound runs none of its changes twice (160 runs either way on memory-lancedb-pro's
# scoped miss)
MEMO_MAX = 128


def new_memo() -> Lru:
    """A question's remembered answers (FlowTrace or InspectorError by Change): the pool
    source's bounded LRU (thread-safe: a live session's re-rank jobs share it), no row bound."""
    return Lru(MEMO_MAX, None)


class Cancelled(Exception):  # noqa: N818 - what happened, as the sweep's flag says it
    """Raised by Runs.run once its `cancelled()` is true: no answer is made."""


@dataclass
class Runs:
    """Runs of one question on one open store (the base is the question's own run)."""

    store: Any
    spec: PipelineSpec
    text: str | None
    vector: np.ndarray | None
    scopes: tuple[str, ...] | None
    limit: int | None
    now_ms: float
    source: str = "text"
    vector_error: str | None = None
    cache: PoolCache = field(default_factory=PoolCache)
    base_change: Change = NO_CHANGE
    live: bool = False
    # a superseded analysis (the window's fix search once a slider moved on) stops before
    # its next run: true `cancelled()` raises Cancelled there
    cancelled: Callable[[], bool] | None = None
    count: int = 0  # pipeline runs made (memoised answers not counted)
    # what the stages keep across this question's runs (runner.Context.memo): shared by its
    # copies (a truth's run, a live tick's), gone with the question
    stage_memo: dict[str, Any] = field(default_factory=dict)
    # `final_ids` may answer over columns (false once they answered a run otherwise than its
    # rows did: `columns_agree`)
    columns: bool = True
    _memo: Lru = field(default_factory=new_memo)
    _specs: Lru = field(default_factory=lambda: Lru(MEMO_MAX, None))
    # final ids (or the error) by Change, made over columns: a few ids each
    _ids: Lru = field(default_factory=lambda: Lru(4 * MEMO_MAX, None))

    def _full(self, change: Change) -> Change:
        return Change(freeze({**dict(self.base_change.sets), **dict(change.sets)}),
                      freeze({**dict(self.base_change.widen), **dict(change.widen)}),
                      self.base_change.exact or change.exact,
                      change.limit if change.limit is not None else self.base_change.limit)

    def run(self, change: Change = NO_CHANGE) -> FlowTrace:
        """The answer under `change` (on top of the base change), or the error it raises."""
        full = self._full(change)
        got = self._memo.get(full)
        if got is None:
            self._go_on()
            try:
                got = self._run(full)
            except InspectorError as exc:
                got = exc
            self._memo.put(full, got)
        if isinstance(got, InspectorError):
            raise got
        return got

    def _go_on(self) -> None:
        """Before a new run: Cancelled once the analysis was superseded (`cancelled()`)."""
        if self.cancelled is not None and self.cancelled():
            raise Cancelled("the analysis was superseded")

    def _run(self, c: Change) -> FlowTrace:
        self.count += 1
        spec = self._spec(c.sets) if c.sets else self.spec
        limit = c.limit if c.limit is not None else self.limit
        return run(self.store, spec, text=self.text, vector=self.vector, scopes=self.scopes,
                   limit=limit, now_ms=self.now_ms, query_source=self.source,
                   cache=self.cache, vector_error=self.vector_error, exact=c.exact,
                   widen=dict(c.widen), live=self.live, memo=self.stage_memo)

    def final_ids(self, change: Change = NO_CHANGE, remember: bool = True) -> list[str]:
        """The ids `run(change)` keeps in its last stage, or the error it raises: from a run
        made already, else over columns (`runner.outline`, remembered: a few ids), else from
        a run (`remember` false: one remembered nowhere, as a deep truth's). For callers that
        read a run's ids alone (a sweep's cells and truths)."""
        full = self._full(change)
        got: Any = self._memo.get(full)
        if got is None:
            got = self._ids.get(full)
        if got is None:
            self._go_on()
            try:
                got = self._column_ids(full) if self.columns else None
                if got is None:
                    got = self._run(full)
            except InspectorError as exc:
                got = exc
            if isinstance(got, FlowTrace):
                if remember:
                    self._memo.put(full, got)
            else:
                self._ids.put(full, got)
        if isinstance(got, InspectorError):
            raise got
        return list(got.final.ids) if isinstance(got, FlowTrace) else list(got)

    def _column_ids(self, c: Change) -> tuple[str, ...] | None:
        got = self._outline(c)
        return None if got is None else got.ids

    def _outline(self, c: Change) -> Outline | None:
        """`runner.outline` under c, counted as `_run` counts a run (a refusal too, so a
        search's budget is spent as over rows); None (not counted) where the rows answer."""
        self.count += 1
        spec = self._spec(c.sets) if c.sets else self.spec
        got = outline(self.store, spec, text=self.text, vector=self.vector,
                      scopes=self.scopes, limit=c.limit if c.limit is not None else self.limit,
                      now_ms=self.now_ms, query_source=self.source,
                      vector_error=self.vector_error, exact=c.exact, widen=dict(c.widen),
                      live=self.live, memo=self.stage_memo)
        if got is None:
            self.count -= 1
        return got

    def outline_once(self, change: Change = NO_CHANGE) -> Outline | FlowTrace:
        """What `run(change)` keeps, remembered nowhere: over columns where the route allows
        (its stages' rows kept and notes, its final ids), else the run itself (made, not
        remembered), or the error either raises. For searches that read only a run's final
        ids and marks and may run deep (a sweep's safe depth)."""
        full = self._full(change)
        got = self._memo.get(full)
        if isinstance(got, InspectorError):
            raise got
        if got is not None:
            return got
        self._go_on()
        made = self._outline(full) if self.columns else None
        return made if made is not None else self._run(full)

    def columns_agree(self, change: Change = NO_CHANGE) -> bool:
        """Whether the column form answers `change` as its run's rows do (true where columns
        do not answer it). A caller about to ask `final_ids` many times checks one run first;
        where they differ, `final_ids` answers from runs from then on."""
        full = self._full(change)
        counted = self.count  # the same change run twice to compare: one run, the rows'
        try:
            cols: Any = self._column_ids(full)
        except InspectorError as exc:
            cols = exc
        self.count = counted
        if cols is None:
            return True
        try:
            rows: Any = tuple(self.run(change).final.ids)
        except InspectorError as exc:
            rows = exc
        failed = isinstance(cols, InspectorError), isinstance(rows, InspectorError)
        agree = failed[0] == failed[1] and (str(cols) == str(rows) if failed[0] else
                                            cols == rows)
        if not agree:
            self.columns = False
            self._ids = Lru(4 * MEMO_MAX, None)  # what the columns answered goes
        return agree

    def adopt(self, spec: PipelineSpec, applied: Lru) -> None:
        """Run `spec` (equal to this question's pipeline) and remember what each set of
        changes makes of it in `applied`: questions of one sweep share both, so a cell's
        settings are applied to their pipeline once, not once a question."""
        if spec is not self.spec and spec != self.spec:
            raise ValueError("adopt: another pipeline than the question's")
        self.spec, self._specs = spec, applied

    def _spec(self, sets: Sets) -> PipelineSpec:
        """The pipeline with `sets` applied (a frozen spec, remembered per set of changes:
        a sweep's safe-depth search and curve ask a cell's settings again)."""
        try:
            got = self._specs.get(sets)
        except TypeError:  # a table parameter set: applied every time
            return apply_set(self.spec, dict(sets))
        if got is None:
            got = apply_set(self.spec, dict(sets))
            self._specs.put(sets, got)
        return cast(PipelineSpec, got)

    def try_run(self, change: Change) -> FlowTrace | None:
        try:
            return self.run(change)
        except InspectorError:
            return None
