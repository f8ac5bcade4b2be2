"""A live session over any pipeline: one question, its store, and the pool cache. Changing a
live parameter re-runs the stages from the cached legs; changing one that shapes a fetch
searches again. Either way the answer equals a fresh run (a property test proves it)."""

from __future__ import annotations

from typing import Any

from inspector.core.engine.flow.question import Question, query_vector, resolve
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.runner import FlowTrace, PoolCache, run
from inspector.core.engine.flow.spec import PipelineSpec, apply_set


def live_params(spec: PipelineSpec) -> list[tuple[str, Any]]:
    """(STAGE.PARAM, declaration) for every parameter a change of which is answered without a
    new search, in pipeline order, each once."""
    out: dict[str, Any] = {}
    for route in spec.routes:
        for st in route.stages:
            for decl in kind_of(st.kind).params:
                if decl.live:
                    out.setdefault(f"{st.name}.{decl.name}", decl)
    return list(out.items())


class LiveFlow:
    def __init__(self, store: Any, question: Question, now_ms: float) -> None:
        self.store = store
        self.question = question
        self.now_ms = now_ms
        self.base, self.notes, self.inexact = resolve(question)
        self.vector, self.source, self.why = query_vector(store, question)
        self.cache = PoolCache()
        self.sets: dict[str, Any] = {}

    def spec(self) -> PipelineSpec:
        return apply_set(self.base, self.sets) if self.sets else self.base

    def live_params(self) -> list[tuple[str, Any]]:
        return live_params(self.base)

    def set(self, key: str, value: Any) -> FlowTrace:
        self.sets[key] = value
        return self.answer()

    def answer(self, limit: int | None = None) -> FlowTrace:
        q = self.question
        return run(self.store, self.spec(), text=q.text, vector=self.vector,
                   scopes=None if q.scopes is None else tuple(q.scopes),
                   limit=q.limit if limit is None else limit, now_ms=self.now_ms,
                   query_source=self.source, cache=self.cache, vector_error=self.why)
