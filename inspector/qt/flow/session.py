"""The window's state for a pipeline of stages: the question (preset, text, vector, scopes,
limit, clock, expected rows), the live parameters set on top, and the latest answer. Every
answer comes from a core `LiveFlow` in the window's one job mechanism (latest wins), so the
GUI thread never waits on LanceDB and never scores a row itself."""

from __future__ import annotations

import copy
import time
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.core.engine.flow.live import LiveFlow
from inspector.core.engine.flow.question import Question
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.shipped import shipped_names
from inspector.core.engine.flow.spec import PipelineSpec, load_shipped, roles_read
from inspector.core.engine.flow.summary import uses_clock
from inspector.core.errors import InspectorError
from inspector.qt.jobs import Jobs

CHANNEL = "flow"


@lru_cache(maxsize=1)
def flow_presets() -> tuple[str, ...]:
    """The shipped pipelines of stages (the fixed presets run in the fixed engine)."""
    return tuple(n for n in shipped_names() if load_shipped(n).engine == "stages")


@lru_cache(maxsize=16)
def preset_spec(name: str) -> PipelineSpec:
    return load_shipped(name)


def open_live(store: Any, question: Question, now_ms: float,
              sets: dict[str, Any]) -> tuple[LiveFlow, FlowTrace]:
    """A worker's job: a live session for the question (its search runs here), answered."""
    live = LiveFlow(store, question, now_ms)
    live.sets = dict(sets)
    return live, live.answer()


def answer_with(live: LiveFlow, sets: dict[str, Any]) -> FlowTrace:
    """A worker's job: the session's answer for these live parameters, from its cached legs.
    A shallow copy: a superseded job still running never sees the newer parameters."""
    mine = copy.copy(live)
    mine.sets = dict(sets)
    return mine.answer()


class FlowSession(QObject):
    """One pipeline question and its answer; panels subscribe to the past-tense signals."""

    question_changed = Signal()  # preset, scopes, clock, limit or text changed
    trace_changed = Signal()  # a new answer (or None while one is on its way)
    selection_changed = Signal(object)  # row id or None
    failed = Signal(str)

    def __init__(self, jobs: Jobs, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.store: Any = None
        self.preset: str | None = None
        # a pipeline file the user loaded (the preset is then None) and the spec read from it
        self.pipeline_file: str | None = None
        self.file_spec: PipelineSpec | None = None
        self.text = ""
        self.vector: list[float] | None = None
        # a stored row's vector, the embedder and the plugin's config, as `inspector shot`
        # gives them (the window's own bar sets none of them)
        self.vector_of: str | None = None
        self.embedder: str | None = None
        self.system_config: str | None = None
        self.scopes: list[str] | None = None
        self.limit: int | None = None
        self.now_ms: float = time.time() * 1000
        self.sets: dict[str, Any] = {}
        self.expected: list[str] = []
        self.live: LiveFlow | None = None
        self.trace: FlowTrace | None = None
        self.selected: str | None = None
        self.error: str | None = None
        self.reranking = False  # the job on its way re-ranks the cached legs (no search)

    # ---- facts ----
    @property
    def active(self) -> bool:
        return self.preset is not None or self.pipeline_file is not None

    @property
    def spec(self) -> PipelineSpec | None:
        if self.pipeline_file is not None:
            return self.file_spec
        return preset_spec(self.preset) if self.preset else None

    @property
    def clocked(self) -> bool:
        """True when the pipeline has stages that read the clock (now)."""
        return self.spec is not None and uses_clock(self.spec)

    @property
    def busy(self) -> bool:
        return self.jobs.busy(CHANNEL)

    def has_query(self) -> bool:
        return bool(self.text.strip()) or self.vector is not None or self.vector_of is not None

    def question(self) -> Question:
        return Question(store=self.store.uri if self.store is not None else "",
                        table=self.store.table_name if self.store is not None else None,
                        preset=self.preset, pipeline_file=self.pipeline_file,
                        text=self.text or None, vector=self.vector,
                        vector_of=self.vector_of, embedder=self.embedder,
                        system_config=self.system_config, scopes=self.scopes,
                        limit=self.limit, now=self.now_ms, columns=self._columns())

    def _columns(self) -> dict[str, str]:
        """The store's column roles (--column) that this pipeline reads; the others are the
        fixed pipeline's and change nothing here."""
        given = getattr(self.store, "role_overrides", None) or {}
        spec = self.spec
        read = roles_read(spec) if spec is not None else []
        return {role: col for role, col in given.items() if role in read}

    def current(self, key: str) -> Any:
        """A parameter's value in the answer on screen (the pipeline's own, or as set)."""
        if key in self.sets:
            return self.sets[key]
        stage, _, param = key.partition(".")
        if self.trace is not None:
            for st in self.trace.stages:
                if st.name == stage:
                    return st.params.get(param)
        spec = self.spec
        if spec is not None:
            from inspector.core.engine.flow.registry import kind_of

            for route in spec.routes:
                for st in route.stages:
                    if st.name == stage:
                        return kind_of(st.kind).resolve(st.params, st.name).get(param)
        return None

    # ---- changing the question ----
    def set_preset(self, name: str | None) -> None:
        """Another pipeline: its own parameters again (the sets were about the old one)."""
        if name == self.preset and self.pipeline_file is None:
            return
        self.preset, self.sets = name, {}
        self.pipeline_file = self.file_spec = None
        self._question_changed()

    def set_store(self, store: Any) -> None:
        self.store = store
        self.live, self.trace, self.selected = None, None, None
        if self.active:
            self._question_changed()

    def set_query(self, text: str, vector: list[float] | None = None, *,
                  keep_vector: bool = True) -> None:
        self.text = text
        if vector is not None or not keep_vector:
            self.vector = vector
        self._question_changed()

    def set_scopes(self, scopes: list[str] | None) -> None:
        self.scopes = None if scopes is None else list(scopes)
        self._question_changed()

    def set_limit(self, limit: int | None) -> None:
        self.limit = limit
        self._question_changed()

    def set_now(self, now_ms: float) -> None:
        self.now_ms = float(now_ms)
        self._question_changed()

    def set_expected(self, ids: list[str]) -> None:
        self.expected = [i for i in ids if i]
        self.trace_changed.emit()  # the stage that matters may be another one

    def _question_changed(self) -> None:
        self.question_changed.emit()
        self.ask()

    # ---- answering ----
    def ask(self) -> None:
        """Search again for the question as it is now (the answer on screen leaves at once:
        rows answering another question must not stand under this one)."""
        if not self.active or self.store is None or not self.has_query():
            self.jobs.cancel(CHANNEL)
            self._show(None)
            return
        try:
            q = self.question()
        except ValueError as exc:  # pydantic's: an unusable combination of inputs
            self.fail(str(exc).splitlines()[-1])
            return
        self.live = None
        self.reranking = False
        self._show(None)
        self.jobs.start(CHANNEL, open_live, self.store, q, self.now_ms, dict(self.sets),
                        on_done=self._opened, on_error=self.fail)

    def _opened(self, got: tuple[LiveFlow, FlowTrace]) -> None:
        self.live, trace = got
        self._show(trace)

    def set_param(self, key: str, value: Any) -> None:
        """A live parameter: re-ranked from the cached legs in a worker (latest wins)."""
        self.sets[key] = value
        if self.live is None:  # the search is still on its way: ask again with this value
            self.ask()
            return
        self._rerank()

    def reset_param(self, key: str) -> None:
        if self.sets.pop(key, None) is not None and self.live is not None:
            self._rerank()

    def _rerank(self) -> None:
        self.reranking = True
        self.jobs.start(CHANNEL, answer_with, self.live, dict(self.sets),
                        on_done=self._show, on_error=self.fail)

    def _show(self, trace: FlowTrace | None) -> None:
        self.trace = trace
        if trace is not None:
            self.error = None
        if self.selected is not None and (trace is None or not self._holds(trace,
                                                                           self.selected)):
            self.selected = None  # a row no stage holds must not stay in the detail pane
            self.selection_changed.emit(None)
        self.trace_changed.emit()
        if trace is not None and self.selected is None and trace.final.rows:
            self.select(trace.final.rows[0].id)

    @staticmethod
    def _holds(trace: FlowTrace, rid: str) -> bool:
        return any(s.id == rid for st in trace.stages for s in st.rows) or any(
            d.id == rid for st in trace.stages for d in st.dropped)

    def select(self, rid: str | None) -> None:
        if rid != self.selected:
            self.selected = rid
            self.selection_changed.emit(rid)

    def row(self, rid: str | None) -> Any:
        """The stored row of an id in the answer on screen (None when no stage holds it)."""
        if rid is None or self.trace is None:
            return None
        for st in self.trace.stages:
            for s in (*st.rows, *st.rows_in):
                if s.id == rid:
                    return s
        return None

    def fail(self, message: str) -> None:
        self.error = message
        self.failed.emit(message)

    def deactivate(self) -> None:
        self.jobs.cancel(CHANNEL)
        self.preset, self.live, self.trace, self.selected = None, None, None, None
        self.pipeline_file = self.file_spec = None
        self.sets = {}


def parse_scopes(text: str) -> list[str] | None:
    """The scopes box: empty = unscoped, `[]` = deny everything, else a JSON list or
    comma-separated scopes."""
    import json

    t = text.strip()
    if not t:
        return None
    if t.startswith("["):
        try:
            got = json.loads(t)
        except json.JSONDecodeError:
            raise InspectorError(f"The scopes {t!r} are not a JSON list; write them "
                                 f"comma-separated or as [\"a\", \"b\"].") from None
        if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
            raise InspectorError("The scopes must be a list of texts.")
        return got
    return [s.strip() for s in t.split(",") if s.strip()]
