"""The tuning panels' view of the window while their analyses (sweeps, compare, the pool map,
the index sweep, receipts, audits) still take the pool-level Params, Query and Trace: those
are derived from the window's question for a pipeline of the classic shape (compile_fixed),
in a worker, once the dock is shown. Every other call goes to the view-model. To be removed
when the analyses answer a Question (their engineer's API), panel by panel."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.core.errors import InspectorError

# the classic options the panels set (sweep cells, the compare's sides) and where they live
LEGACY_OPTIONS = ("overfetch", "blend", "min_score", "cap", "mode", "filter", "fts_k",
                  "vec_k", "rrf_k", "nprobes", "refine_factor", "ef")


def legacy_job(store: Any, q: Any) -> tuple[Any, Any, Any]:
    """(Params, Query, Trace) of the fixed engine for a question whose pipeline has the
    classic shape; one sentence when it has not."""
    from inspector.core.engine.flow.fixed import compile_fixed
    from inspector.core.engine.flow.question import resolve
    from inspector.core.engine.inputs import question_query
    from inspector.core.engine.params import Params
    from inspector.core.engine.pipeline import run

    spec = resolve(q)[0]
    scope = q.scopes[0] if q.scopes else None
    try:
        fields = compile_fixed(spec)(q.limit or spec.limit.default, scope is not None)
    except InspectorError:
        raise InspectorError(f"The tuning panels analyse the classic pipelines (scope rule, "
                             f"pool, scope filter, blend, min score); {spec.name} is not one "
                             f"of them yet.") from None
    params = Params(**fields, limit=q.limit or spec.limit.default, scope=scope)
    query = question_query(store, q, params.mode)
    return params, query, run(store, query, params)


class TuningBridge(QObject):
    """What the panels read: params, query and trace of the fixed engine for the question on
    screen; the view-model for everything else."""

    trace_changed = Signal()
    params_changed = Signal(object)
    query_changed = Signal()

    def __init__(self, vm: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._vm = vm
        self.params: Any = None
        self.query: Any = None
        self.trace: Any = None
        self.active = False  # derived only while a panel is shown
        self._asked: Any = None
        self._waiting: list[Any] = []  # panels' runs waiting for the derived state
        vm.answer_changed.connect(self.refresh)
        vm.question.events.text.connect(lambda _v: self.query_changed.emit())
        vm.question.events.vector_of.connect(lambda _v: self.query_changed.emit())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._vm, name)

    # ---- the question, as the panels knew it ----
    @property
    def text(self) -> str:
        return self._vm.question.text or ""

    @property
    def vector_of(self) -> str | None:
        return self._vm.question.vector_of

    @property
    def embedder(self) -> str | None:
        return self._vm.question.embedder

    @property
    def expected(self) -> list[str]:
        return list(self._vm.question.expect)

    @property
    def preset(self) -> str | None:
        return self._vm.question.preset

    def to_question(self) -> Any:
        return self._vm.question.plain()

    def question(self) -> tuple[Any, ...]:
        """What the answers are about: the store version and the query input."""
        st, q = self._vm.store, self._vm.question
        where = (st.uri, st.table_name, st.version) if st is not None else None
        return where, q.text, q.vector_of, None if q.vector is None else tuple(q.vector)

    def has_query(self) -> bool:
        q = self._vm.question
        return bool((q.text or "").strip()) or q.vector is not None or q.vector_of is not None

    def set_param(self, key: str, value: Any) -> None:
        """A classic option (a sweep cell's over-fetch, blend, min score) set on the stage
        that holds it, as `inspector query --overfetch` sets it."""
        from inspector.core.engine.flow.spec import held_options

        spec = self._vm.spec()
        held = held_options(spec, {key: value}) if spec is not None else {}
        if key not in held:
            self._vm.fail(f"Pipeline {spec.name if spec else ''} has no stage that takes "
                          f"{key}.")
            return
        for k, v in held[key].items():  # a value equal to the pipeline's own leaves the set
            self._vm.set_param(k, v)

    def run(self) -> None:
        self._vm.run_again()

    def show_pool(self, pool: Any, params: Any) -> None:
        raise InspectorError("Reopening a receipt in the window comes back once receipts are "
                             "answers of the one engine; `inspector receipt` reads it.")

    # ---- derived in a worker ----
    def ready(self) -> bool:
        """Whether params, query and trace are the question's on screen."""
        vm = self._vm
        return self.query is not None and vm.store is not None and self._asked == \
            self._key()

    def when_ready(self, then: Any) -> None:
        """Call `then` once the fixed engine's view of the question is derived (now, if it
        is): a panel's Run never waits for it on the GUI thread."""
        if self.ready():
            then()
            return
        self._waiting.append(then)
        self.activate()
        self.refresh(force=True)

    def _key(self) -> Any:
        vm = self._vm
        if vm.store is None:
            return None
        return (vm.store.uri, vm.store.table_name, vm.store.version,
                vm.question.plain().model_dump_json(exclude={"now"}))

    def activate(self) -> None:
        if not self.active:
            self.active = True
            self.refresh()

    def refresh(self, force: bool = False) -> None:
        vm = self._vm
        if not self.active or vm.store is None or not self.has_query() or \
                not force and (vm.trace is None or vm.answer is None):
            return
        key = self._key()
        if key == self._asked and (self.query is not None or vm.jobs.busy("legacy")):
            return
        self._asked = key
        vm.jobs.start("legacy", legacy_job, vm.store, vm.question.plain(),
                      on_done=self._derived, on_error=self._failed)

    def _derived(self, got: tuple[Any, Any, Any]) -> None:
        self.params, self.query, self.trace = got
        self.params_changed.emit(self.params)
        self.trace_changed.emit()
        waiting, self._waiting = self._waiting, []
        for then in waiting:
            then()

    def _failed(self, message: str) -> None:
        self.params = self.query = self.trace = None
        self.trace_changed.emit()
        if self._waiting:
            self._waiting = []
            self._vm.fail(message)
