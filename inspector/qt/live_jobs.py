"""The view-model's background work: plain functions over the core's LiveSession, run through
the window's jobs (qt.jobs) and testable without a GUI; and the view-model's expected-row
analysis, which starts one of them after every answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.engine.expect import Expectation
from inspector.core.engine.inputs import build_query, parse_vector
from inspector.core.engine.live import LiveSession
from inspector.core.engine.params import Params
from inspector.core.engine.trace import Trace
from inspector.core.stores.store import Store


@dataclass(frozen=True)
class QueryRequest:
    """What the query job needs: the parameters, the placements shown, and the query input."""

    params: Params
    placements: tuple[str, ...]
    text: str | None = None
    vector_of: str | None = None
    embedder: str | None = None  # None: the one the store records
    vector: tuple[float, ...] | None = None  # a given vector beside the text (a hybrid's)


def query_job(store: Store, req: QueryRequest, cancelled: Any = None) -> LiveSession:
    """Build the query once, then a live session deep enough for every slider position.
    Text that is a JSON array is taken as the query vector itself."""
    text = (req.text or "").strip()
    if req.vector is not None:
        query = build_query(store, req.params.mode, text=req.text or None,
                            vector=np.asarray(req.vector, np.float32))
    elif text.startswith("[") and req.vector_of is None:
        query = build_query(store, req.params.mode, vector=parse_vector(text))
    else:
        query = build_query(store, req.params.mode, text=text or None, vector_of=req.vector_of,
                            embedder=req.embedder)
    # a query the user runs searches the store itself (fresh), never a pool held from before
    return LiveSession.fetch(store, query, req.params, req.placements, cancelled=cancelled,
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
