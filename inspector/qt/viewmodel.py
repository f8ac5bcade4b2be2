"""The window's state: the open store, the query, the parameters and the traces. It forwards
the live work to a core LiveSession and runs everything slow through the window's one job
mechanism (qt.jobs); it knows Qt only for signals and never draws or scores.

Parameters follow the CLI exactly: a preset name plus explicitly given values, combined by
`inputs.build_params(preset=..., **given)`, so the window and `inspector query` agree.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.core.engine.expect import Expectation
from inspector.core.engine.inputs import build_params
from inspector.core.engine.live import PLACEMENTS, LiveSession
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Pool, Query
from inspector.core.engine.trace import Trace
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import Opened, open_for_browsing
from inspector.core.stores.store import VersionGoneError
from inspector.qt import live_jobs
from inspector.qt.jobs import Jobs
from inspector.qt.live_jobs import ExpectedRows, QueryRequest, query_job, refetch_job

EXPECT_DELAY_MS = 250  # expected rows are re-analysed once a slider rests this long
REQUERY_DELAY_MS = 150  # a parameter the cached pools cannot answer is re-queried after this


class Inspector(ExpectedRows, QObject):
    """State plus the operations on it; panels subscribe to the past-tense signals."""

    store_opened = Signal(object)  # Opened
    params_changed = Signal(object)  # Params
    query_changed = Signal()  # text or example row changed
    trace_changed = Signal()  # traces re-derived (after a fetch or a slider tick)
    busy_changed = Signal(bool)  # a store is opening or a query is in flight
    error_raised = Signal(str)  # one sentence
    error_cleared = Signal()
    selection_changed = Signal(object)  # the selected row id, or None
    expectations_changed = Signal()
    version_gone = Signal(int, object)  # the pinned version, the newest (or None)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = Jobs(self)
        self.opened: Opened | None = None
        self.preset: str | None = "docs-before-fix"
        self.given: dict[str, Any] = {"limit": 10}
        self.params: Params = build_params(preset=self.preset, **self.given)
        self.compare = False
        self.text = ""
        self.vector_of: str | None = None
        self.vector: tuple[float, ...] | None = None  # beside the text: a hybrid's given vector
        self.embedder: str | None = None  # None: the embedder the store records
        self.session: LiveSession | None = None
        self.traces: tuple[Trace, ...] = ()
        self.focus_lane = 0
        self.selected: Any = None
        self.expected: list[str] = []
        self.expectations: tuple[tuple[Expectation, ...], ...] = ()
        self.error: str | None = None
        self._after_open: str | dict[str, Any] | None = None
        self.busy = False
        self.requery_reason: str | None = None  # why the cached pools could not answer
        self._answered: tuple[Any, ...] | None = None  # the question the session answers
        self.jobs.channel_changed.connect(lambda _c, _b: self._update_busy())
        self.jobs.failed.connect(self._job_failed)

    # ---- derived facts ----
    @property
    def store(self) -> Any:
        return self.opened.store if self.opened else None

    @property
    def query(self) -> Query | None:
        return self.session.query if self.session is not None else None

    @property
    def placements(self) -> tuple[str, ...]:
        return PLACEMENTS if self.compare else (self.params.filter,)

    @property
    def expect_busy(self) -> bool:
        return self.jobs.busy("expect")

    def lane_params(self, n: int) -> Params:
        return self.params.with_(filter=self.placements[n])

    @property
    def trace(self) -> Trace | None:
        """The trace the plots and the detail pane follow (the lane last clicked)."""
        if not self.traces:
            return None
        return self.traces[min(self.focus_lane, len(self.traces) - 1)]

    def question(self) -> tuple[Any, ...]:
        """What the current answers are about: the store version and the query input. Panels
        that keep a result (sweep, compare) compare it to say when theirs is stale."""
        st = self.store
        where = (st.uri, st.table_name, st.version) if st is not None else None
        return where, self.text, self.vector_of, self.vector

    # what the window asks now as the question model: what receipts, sweeps and settings keep
    to_question = live_jobs.window_question

    def has_query(self) -> bool:
        return bool(self.text.strip()) or self.vector_of is not None or self.vector is not None

    # ---- store ----
    def open_store(self, uri: str | None, table: str | None = None,
                   then: str | None = None, options: Any = None) -> None:
        """Open a store in the background; uri None opens the bundled demo store.

        `then` is what follows a successful open: "run" the current query, or load the
        store's first "suggested" query (the default for the demo store). `options` is an
        OpenOptions; None reuses the open store's options (not its version) when uri is the
        same store, e.g. when picking another table."""
        if options is None and self.opened is not None and self.opened.options is not None \
                and uri == self.store.uri:
            options = self.opened.options.at(None)
        for channel in ("query", "expect"):  # answers about the previous store are stale
            self.jobs.cancel(channel)
        self._after_open = then or ("suggested" if uri is None else None)
        self.jobs.start("open", open_for_browsing, uri, table, options, on_done=self._opened,
                        on_error=self._open_failed)

    def _open_failed(self, message: str) -> None:
        """One sentence; when a store stays open, it says so (its answers are still valid)."""
        if self.opened is not None:
            name = "the demo store" if self.opened.demo else self.store.display_uri
            message = f"{message.rstrip('.')}; still showing {name} ({self.store.table_name})."
        self.fail(message)

    def _opened(self, opened: Opened) -> None:
        then, self._after_open = self._after_open, None
        if self.store is not None and self.store.uri != opened.store.uri \
                and "scope" in self.given:
            self.given.pop("scope")  # scopes belong to a store: do not carry one across
            self._rebuild_params()
        first = self.store is None
        same = not first and (self.store.uri, self.store.table_name) == \
            (opened.store.uri, opened.store.table_name)
        self.opened = opened
        self.session, self.traces = None, ()
        self.selected, self.expectations = None, ()
        # query by example names a row of one table: kept on a reload or another version of
        # it, and for the first store of a window (`shot`, a launch with --vector-of), dropped
        # when another table opens
        if not same and not first:
            self.vector_of = self.vector = None
        self.clear_error()
        self.store_opened.emit(self.opened)
        self.trace_changed.emit()
        self.expectations_changed.emit()
        if then == "suggested" and self.opened.store.suggested_queries:
            self.load_suggested(0)
        elif isinstance(then, dict):
            self.apply_suggestion(then)
        elif then == "run":
            self.run()

    def load_suggested(self, n: int) -> None:
        """Set up and run one of the store's suggested queries (the demo stories). A story on
        another table of the store (the indexed demo story) opens that table first."""
        if self.store is None:
            return
        self.apply_suggestion(self.store.suggested_queries[n])

    def apply_suggestion(self, q: dict[str, Any]) -> None:
        table = q.get("table")
        if table and self.store is not None and table != self.store.table_name:
            uri = None if self.opened is not None and self.opened.demo else self.store.uri
            self.open_store(uri, table)
            self._after_open = q  # applied once that table is open
            return
        keys = ("limit", "scope", "mode", "min_score", "blend", "overfetch", "filter")
        self.preset = q.get("preset")
        self.given = {k: q[k] for k in keys if k in q}
        self.given.setdefault("limit", 10)
        self.compare = False
        self.text, self.vector_of, self.vector = q.get("text") or "", None, None
        self.expected = [str(x) for x in q.get("expect", [])]
        self._rebuild_params()
        self.query_changed.emit()
        self.expectations_changed.emit()  # the expected rows changed: none stays listed
        self.run()

    # ---- parameters ----
    def set_preset(self, name: str | None) -> None:
        """A preset sets every parameter; the limit and scope the user chose are kept."""
        self.preset = name
        self.given = {k: v for k, v in self.given.items() if k in ("limit", "scope")}
        if self._rebuild_params():
            self.rederive()

    def set_param(self, key: str, value: Any) -> None:
        """Change one parameter: re-derived from the cached pools when they answer it exactly,
        else re-queried in the background."""
        if value is None or value == "":
            self.given.pop(key, None)
        else:
            self.given[key] = value
        if self._rebuild_params():
            self.rederive()

    def set_params(self, changes: dict[str, Any]) -> None:
        """Change several parameters at once (a diagnosis fix), then re-derive or re-query."""
        self.given.update(changes)
        if self._rebuild_params():
            self.rederive()

    def load_scope_map(self, path: str) -> None:
        """Use a scope map file ({scope: [prefix, ...]}) and the map strategy."""
        from inspector.core.engine.params import freeze_map
        from inspector.core.engine.scope import load_scope_map

        try:
            mapping = load_scope_map(path)
        except InspectorError as exc:
            self.fail(str(exc))
            return
        self.given.update(scope_map=freeze_map(mapping), scope_strategy="map")
        if self._rebuild_params():
            self.rederive()

    def set_compare(self, on: bool) -> None:
        if on != self.compare:
            self.compare = on
            self.params_changed.emit(self.params)
            self.rederive()

    def restore(self, preset: str | None, given: dict[str, Any], compare: bool) -> None:
        """Put back saved parameters (falls back to the defaults if they no longer validate)."""
        self.preset, self.given, self.compare = preset, dict(given), compare
        if not self._rebuild_params():
            self.preset, self.given = "docs-before-fix", {"limit": 10}
            self._rebuild_params()

    def _rebuild_params(self) -> bool:
        try:
            self.params = build_params(preset=self.preset, **self.given)
        except InspectorError as exc:
            self.fail(str(exc))
            return False
        self.params_changed.emit(self.params)
        return True

    # ---- query ----
    def set_query(self, text: str, vector_of: str | None = None) -> None:
        self.text, self.vector_of, self.vector = text, vector_of, None
        self.query_changed.emit()
        self.run()

    def use_as_query(self, row_id: Any) -> None:
        """Query by example: search with a stored row's vector."""
        self.set_query(self.text, str(row_id))

    def run(self) -> None:
        """Fetch fresh pools for the current query in the background (superseding any older)."""
        if self.store is None:
            if self.jobs.busy("open"):
                self._after_open = "run"
            return
        if not self.has_query():
            return
        try:  # the question the CLI would ask: the job derives parameters and query from it
            req = QueryRequest(question=self.to_question(), placements=self.placements)
        except InspectorError as exc:
            return self._query_failed(str(exc))
        asked = (*self.question(), self.embedder)
        if self.session is not None and self._answered != asked:
            # rows that answer another query must not stand under this one while it runs,
            # nor be re-ranked by a slider moved meanwhile (rederive waits for the answer)
            self.session, self.traces = None, ()
            self.trace_changed.emit()
        if self.expectations:  # verdicts about the previous fetch must not outlive it
            self.expectations = ()
            self.jobs.cancel("expect")
            self.expectations_changed.emit()
        ran = (self.params, self.placements)
        self.jobs.start("query", query_job, self.store, req,
                        on_done=lambda session: self._fetched(session, asked),
                        on_error=lambda message: self._query_failed(message, ran))

    def _query_failed(self, message: str, ran: tuple[Any, ...] | None = None) -> None:
        if ran is not None and ran != (self.params, self.placements):
            self.run()  # parameters changed while it ran: its failure may not be theirs
            return
        # results for other parameters would mislead: show the sentence, not stale rows
        self.session, self.traces, self.expectations = None, (), ()
        self.trace_changed.emit()
        self.expectations_changed.emit()
        self.fail(message)

    def _fetched(self, session: LiveSession, asked: tuple[Any, ...] | None = None) -> None:
        if asked is not None:  # a new query's answer (a re-query keeps the question)
            self._answered = asked
        self.session = session
        self.expectations = ()
        self.focus_lane = min(self.focus_lane, len(session.lanes) - 1)
        self.rederive()
        self._select_first()

    def _select_first(self) -> None:
        """Keep the selection if the new trace holds it, else pick the top result (or the top
        raw candidate) so the detail pane is never empty after a query."""
        t = self.trace
        if t is None:
            return
        i = t.row_of(self.selected) if self.selected is not None else None
        if i is not None and i in set(t.stage("raw").rows.tolist()):
            return  # a table holds it (the deep pool may hold rows no table shows)
        for stage in ("final", "raw"):
            rows = t.stage(stage).rows
            if len(rows):
                self.select(t.pool.ids[int(rows[0])])
                return
        self.select(None)  # nothing fetched: no row of an earlier answer stays selected

    def rederive(self) -> None:
        """Every stage for the current parameters: from the session's cached pools when they
        answer them exactly (pure numpy, ~0.1 ms), else through a background re-query. Until
        that answer arrives no trace is shown, so no stale or inexact answer is on screen."""
        s = self.session
        if s is None:  # nothing fetched yet, or the last query failed: ask again (latest wins)
            if not self.jobs.busy("query"):  # else the answer on its way is re-derived with
                self.run()  # the parameters as they are then
            return
        reason = s.why_not(self.params, self.placements)
        self.requery_reason = reason
        if reason is not None:
            self.traces = ()
            self.trace_changed.emit()
            self.jobs.start("query", refetch_job, s, self.params, self.placements,
                            on_done=self._fetched, on_error=self._query_failed,
                            delay_ms=REQUERY_DELAY_MS)
            return
        try:
            self.traces = s.traces(self.params)
        except InspectorError as exc:
            self.fail(str(exc))
            return
        self.clear_error()
        self.trace_changed.emit()
        if self.expected:
            self._analyse_expected(EXPECT_DELAY_MS)

    # ---- selection and expected rows ----
    def select(self, row_id: Any, lane: int | None = None) -> None:
        """Select a row by id in every stage; a lane number also moves the plots to that lane."""
        refocus = lane is not None and lane != self.focus_lane and lane < len(self.traces)
        if refocus:
            self.focus_lane = lane
        if row_id != self.selected or refocus:
            self.selected = row_id
            if refocus:
                self.trace_changed.emit()
            self.selection_changed.emit(row_id)

    # ---- plumbing ----
    def _job_failed(self, exc: BaseException) -> None:
        if isinstance(exc, VersionGoneError):  # cleaned up under us: offer the newest
            self.version_gone.emit(exc.version, exc.latest)

    def _update_busy(self) -> None:
        on = self.jobs.busy("open") or self.jobs.busy("query")
        if on != self.busy:
            self.busy = on
            self.busy_changed.emit(on)

    def fail(self, message: str) -> None:
        """Show one sentence in the window's error area (panels report through this too)."""
        self.error = message
        self.error_raised.emit(message)

    def clear_error(self) -> None:
        if self.error is not None:
            self.error = None
            self.error_cleared.emit()

    def show_pool(self, pool: Pool, p: Params) -> None:
        """Show a pool without its store (a reopened receipt): one lane, p's parameters; the
        sliders re-rank it as always, and nothing that needs LanceDB can start."""
        self.jobs.cancel_all()  # answers still in flight are about the store: drop them
        self.opened = None
        self.preset, self.compare = None, False
        self.given = {f.name: getattr(p, f.name) for f in fields(p)}
        self.text, self.vector_of, self.vector = pool.query.text or "", None, None
        self.expected, self.expectations, self.selected = [], (), None
        self.session = LiveSession.of_pool(pool, p)
        self.focus_lane = 0
        if not self._rebuild_params():
            raise InspectorError("The receipt's parameters do not validate in this inspector.")
        self.query_changed.emit()
        self.rederive()
        self._select_first()
