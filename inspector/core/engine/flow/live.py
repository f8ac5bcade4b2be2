"""A live session over any pipeline: one question, its store, and the fetch cache its runs
share. Changing a live parameter re-runs the stages from the cached fetches (a classic pool
fetched deep at once answers every over-fetch exactly where the search is prefix-exact);
changing one that shapes a fetch searches again. Either way the answer equals a fresh run (a
property test proves it). The diagnosis, its fixes, expected rows and the index facet of the
current answer come from the same runs (`full`), off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.engine.flow.registry import ParamDecl, kind_of
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import Change, freeze
from inspector.core.engine.flow.spec import PipelineSpec, apply_set


def live_params(spec: PipelineSpec) -> list[tuple[str, ParamDecl]]:
    """(STAGE.PARAM, declaration) for every parameter a change of which is answered without a
    new search, in pipeline order, each once."""
    out: dict[str, ParamDecl] = {}
    for route in spec.routes:
        for st in route.stages:
            for decl in kind_of(st.kind).params:
                if decl.live:
                    out.setdefault(f"{st.name}.{decl.name}", decl)
    return list(out.items())


def drives(spec: PipelineSpec, key: str) -> str:
    """The stage a STAGE.PARAM slider re-scores or cuts: the stage itself (its plots show
    what came in and what left it)."""
    return key.partition(".")[0]


class LiveFlow:
    def __init__(self, store: Any, question: Question, now_ms: float) -> None:
        self.store = store
        self.question = question.model_copy(update={"now": now_ms})
        self.now_ms = now_ms
        self.runs, self.notes, self.inexact = runs_for(self.question, store)
        self.runs.live = True
        self.base = self.runs.spec
        self.vector, self.source, self.why = (self.runs.vector, self.runs.source,
                                              self.runs.vector_error)
        self.cache = self.runs.cache
        self.sets: dict[str, Any] = {}

    def spec(self) -> PipelineSpec:
        return apply_set(self.base, self.sets) if self.sets else self.base

    def live_params(self) -> list[tuple[str, ParamDecl]]:
        return live_params(self.base)

    def change(self, limit: int | None = None) -> Change:
        return Change(sets=freeze(self.sets), limit=limit)

    def set(self, key: str, value: Any) -> FlowTrace:
        self.sets[key] = value
        return self.answer()

    def answer(self, limit: int | None = None) -> FlowTrace:
        trace = self.runs.run(self.change(limit))
        if self.notes or self.inexact:
            trace = trace.with_notes(self.notes, self.inexact)
        return trace

    def full(self, fixes: bool = True, facet_mode: str = "auto",
             cancelled: Callable[[], bool] | None = None) -> Any:
        """The current answer with its diagnosis (fixes run), expected rows and index facet;
        a true `cancelled()` stops it before its next run (runs.Cancelled)."""
        from inspector.core.engine.flow.answer import Answer
        from inspector.core.engine.flow.insight.diagnosis import diagnose
        from inspector.core.engine.flow.insight.expect import explain
        from inspector.core.engine.flow.insight.facet import facet, indexed_legs, wanted
        from inspector.core.engine.flow.runs import Runs

        runs = Runs(self.store, self.spec(), self.runs.text, self.vector, self.runs.scopes,
                    self.runs.limit, self.now_ms, self.source, self.why, self.cache,
                    self.runs.base_change, live=True, cancelled=cancelled)
        trace = self.answer()
        index = getattr(self.store, "vector_index", None)
        found = facet(trace, runs, index) if indexed_legs(trace, index) and \
            wanted(self.store.rows, facet_mode) else None
        diag = diagnose(trace, runs if fixes else None,
                        index_lost=found is not None and bool(found.lost_final))
        expected = tuple(explain(trace, rid, runs) for rid in self.question.expect)
        return Answer(trace, diag, expected, found, runs.count)
