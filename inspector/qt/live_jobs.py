"""The view-model's background work: plain functions over the core's LiveSession, run through
the window's jobs (qt.jobs) and testable without a GUI; the view-model's expected-row
analysis, which starts one of them after every answer; and the view-model's state as the
question model (flow.question.Question) and back: what receipts, sweeps and the saved
settings keep, and what `shot` and a restored window put into the window. The window holds a
preset name plus the parameters given explicitly, as the CLI does; the question holds the
same, so one converts to the other without loss."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.expect import Expectation
from inspector.core.engine.flow.question import Question
from inspector.core.engine.inputs import (
    given_question,
    parse_vector,
    question_given,
    question_params,
    question_query,
)
from inspector.core.engine.live import LiveSession
from inspector.core.engine.params import Params
from inspector.core.engine.trace import Trace
from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store


@dataclass(frozen=True)
class QueryRequest:
    """What the query job needs: the question the window asks (its parameters and query
    input, `window_question`) and the filter placements shown."""

    question: Question
    placements: tuple[str, ...]

    @property
    def text(self) -> str | None:
        return self.question.text


def query_job(store: Store, req: QueryRequest, cancelled: Any = None) -> LiveSession:
    """The question's parameters and query, as `inspector query` derives them, then a live
    session deep enough for every slider position. Text typed as a JSON array is the vector
    (`window_question` made it one); an array that does not parse is refused with its
    sentence, never embedded as words."""
    q = req.question
    params = question_params(q)
    if (q.text or "").startswith("[") and q.vector is None and q.vector_of is None:
        parse_vector(q.text or "")  # raises: window_question could not read it
    query = question_query(store, q, params.mode)
    # a query the user runs searches the store itself (fresh), never a pool held from before
    return LiveSession.fetch(store, query, params, req.placements, cancelled=cancelled,
                             fresh=True)


def refetch_job(session: LiveSession, params: Params, placements: tuple[str, ...],
                cancelled: Any = None) -> LiveSession:
    return session.refetched(params, placements, cancelled=cancelled)


def expect_job(session: LiveSession, traces: tuple[Trace, ...], ids: list[str],
               cancelled: Any = None) -> tuple[tuple[Expectation, ...], ...]:
    return session.expectations(traces, ids, cancelled=cancelled)


class ExpectedRows:
    """The view-model's expected rows (a mixin of qt.viewmodel.Inspector): the ids a user
    expects, and where each is dropped per lane, analysed in the background."""

    def set_expected(self, ids: list[str]) -> None:
        self.expected = list(dict.fromkeys(str(i) for i in ids if str(i).strip()))
        self.expectations = ()
        self.trace_changed.emit()
        self._analyse_expected(0)

    def toggle_expected(self, row_id: Any) -> None:
        rid = str(row_id)
        ids = [i for i in self.expected if i != rid] if rid in self.expected \
            else [*self.expected, rid]
        self.set_expected(ids)

    def _analyse_expected(self, delay_ms: int) -> None:
        """Where each expected row is dropped, per lane, in the background (debounced)."""
        if not (self.expected and self.traces and self.session is not None):
            self.jobs.cancel("expect")
            self.expectations_changed.emit()
            return
        if self.session.store is None:
            self.jobs.cancel("expect")
            self.expectations_changed.emit()
            self.fail("Expected-row analysis searches the store, and this receipt is open "
                      "without it; open the store to analyse expected rows.")
            return
        self.jobs.start("expect", expect_job, self.session, self.traces, list(self.expected),
                        on_done=self._expected_ready, on_error=self._expect_failed,
                        delay_ms=delay_ms)
        self.expectations_changed.emit()

    def _expected_ready(self, expectations: tuple[tuple[Expectation, ...], ...]) -> None:
        self.expectations = expectations
        self.expectations_changed.emit()

    def _expect_failed(self, message: str) -> None:
        self.expectations_changed.emit()
        self.fail(message)


# ---- the view-model as the question model and back ----

def window_question(vm: Any) -> Question:
    """What the window (a qt.viewmodel.Inspector) asks now; its store URI without
    credentials. A JSON array typed as the query is the vector query_job searches with."""
    st, text, vector = vm.store, vm.text.strip() or None, vm.vector
    if text and text.startswith("[") and vector is None and vm.vector_of is None:
        try:
            text, vector = None, tuple(parse_vector(text).tolist())
        except InspectorError:
            pass  # asked as typed: the query job says why it cannot run
    return given_question(
        "" if st is None else st.uri, vm.preset, vm.given,
        table=None if st is None else st.table_name, text=text,
        vector=None if vector is None else list(vector), vector_of=vm.vector_of,
        embedder=vm.embedder, expect=list(vm.expected))


def window_given(q: Question) -> tuple[str | None, dict[str, Any]]:
    """The window's (preset, given parameters) for a fixed-pipeline question. A fixed pipeline
    file or --set values have no preset name: their compiled parameters are given whole (the
    window shows a custom pipeline), the very Params `inspector query` runs."""
    if q.pipeline_file is not None or q.set:
        return None, dataclasses.asdict(question_params(q))
    return q.preset, question_given(q)


def restore_question(vm: Any, q: Question, compare: bool = False) -> None:
    """A question's parameters and query text into the window, without running it (a saved
    question); parameters that no longer validate leave the defaults (Inspector.restore).
    A vector asked alone shows as its JSON array, as a user types one."""
    preset, given = window_given(q)
    vm.restore(preset, given, compare)
    alone = q.vector is not None and q.text is None
    vm.text = json.dumps(q.vector) if alone else q.text or ""


def put_question(vm: Any, q: Question) -> None:
    """The whole question into the window, without running it (`shot`): its parameters and
    text, a vector given beside the text, the row it queries by, its embedder and expected
    rows."""
    restore_question(vm, q)
    vm.vector = tuple(q.vector) if q.vector is not None and q.text is not None else None
    vm.vector_of, vm.embedder = q.vector_of, q.embedder
    vm.expected = list(q.expect)
