"""The window's state: the open store, the query, the parameters, the cached pools and the
traces derived from them. Knows Qt only for signals; never draws, never scores.

Parameters follow the CLI exactly: a preset name plus explicitly given values, combined by
`inputs.build_params(preset=..., **given)`, so the window and `inspector query` agree.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core.engine.inputs import build_params
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pool import Pool, Query
from inspector.core.engine.trace import Expectation, Trace
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import Opened
from inspector.qt import workers
from inspector.qt.expected_rows import ExpectedRows
from inspector.qt.workers import Answer, Fetched, QueryRequest

LIVE_KEYS = ("overfetch", "blend", "min_score")  # re-derived from the cached pool, no fetch
PLACEMENTS = ("post", "pushdown")


class Inspector(ExpectedRows, QObject):
    """State plus the operations on it; panels subscribe to the past-tense signals."""

    store_opened = Signal(object)  # Opened
    params_changed = Signal(object)  # Params
    query_changed = Signal()  # text or example row changed
    trace_changed = Signal()  # traces re-derived (after a fetch or a slider tick)
    busy_changed = Signal(bool)
    error_raised = Signal(str)  # one sentence
    error_cleared = Signal()
    selection_changed = Signal(object)  # the selected row id, or None
    expectations_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.opened: Opened | None = None
        self.preset: str | None = "docs-before-fix"
        self.given: dict[str, Any] = {"limit": 10}
        self.params: Params = build_params(preset=self.preset, **self.given)
        self.compare = False
        self.text = ""
        self.vector_of: str | None = None
        self.embedder: str | None = None  # None: the embedder the store records
        self.query: Query | None = None
        self.lanes: tuple[workers.Lane, ...] = ()
        self.traces: tuple[Trace, ...] = ()
        self.focus_lane = 0
        self.selected: Any = None
        self.expected: list[str] = []
        self.expectations: tuple[tuple[Expectation, ...], ...] = ()
        self.expect_busy = False
        self.error: str | None = None
        self._generation = 0
        self._expect_generation = 0
        self._exhaustive: dict[int, Pool] = {}
        self._requested: Params | None = None
        self._lanes_key: Any = None
        self._open_generation = 0
        self._after_open: str | None = None
        self._opening = False
        self._querying = False
        self._jobs: set[Any] = set()
        self.busy = False
        self._expect_timer = QTimer(self, singleShot=True, interval=250)
        self._expect_timer.timeout.connect(self._start_expect)

    # ---- derived facts ----
    @property
    def store(self) -> Any:
        return self.opened.store if self.opened else None

    @property
    def placements(self) -> tuple[str, ...]:
        return PLACEMENTS if self.compare else (self.params.filter,)

    def lane_params(self, n: int) -> Params:
        return self.params.with_(filter=self.placements[n])

    @property
    def trace(self) -> Trace | None:
        """The trace the plots and the detail pane follow (the lane last clicked)."""
        if not self.traces:
            return None
        return self.traces[min(self.focus_lane, len(self.traces) - 1)]

    def has_query(self) -> bool:
        return bool(self.text.strip()) or self.vector_of is not None

    # ---- store ----
    def open_store(self, uri: str | None, table: str | None = None,
                   then: str | None = None, options: Any = None) -> None:
        """Open a store in the background; uri None opens the bundled demo store.

        `then` is what follows a successful open: "run" the current query, or load the
        store's first "suggested" query (the default for the demo store). `options` is a
        store_options.OpenOptions; None reuses the open store's options (not its version)
        when uri is the same store, e.g. when picking another table."""
        if options is None and self.opened is not None and self.opened.options is not None \
                and uri == self.store.uri:
            options = self.opened.options.at(None)
        self._open_generation += 1
        self._generation += 1  # answers about the previous store are now stale
        self._after_open = then or ("suggested" if uri is None else None)
        self._opening, self._querying = True, False
        self._update_busy()
        self._run(workers.open_job, self._open_generation, uri, table, options,
                  on_answer=self._opened)

    def _opened(self, ans: Answer) -> None:
        if ans.generation != self._open_generation:
            return
        self._opening = False
        self._update_busy()
        then, self._after_open = self._after_open, None
        if ans.error:
            self.fail(ans.error)
            return
        if self.store is not None and self.store.uri != ans.value.store.uri \
                and "scope" in self.given:
            self.given.pop("scope")  # scopes belong to a store: do not carry one across
            self._rebuild_params()
        same = self.store is not None and (self.store.uri, self.store.table_name) == \
            (ans.value.store.uri, ans.value.store.table_name)
        self.opened = ans.value
        self.lanes, self.traces, self.query = (), (), None
        self.selected, self.expectations, self._exhaustive = None, (), {}
        if not same:  # a reload or another version of the same table keeps query by example
            self.vector_of = None
        self.clear_error()
        self.store_opened.emit(self.opened)
        self.trace_changed.emit()
        if then == "suggested" and self.opened.store.suggested_queries:
            self.load_suggested(0)
        elif then == "run":
            self.run()

    def load_suggested(self, n: int) -> None:
        """Set up and run one of the store's suggested queries (the demo stories)."""
        if self.store is None:
            return
        q = self.store.suggested_queries[n]
        keys = ("limit", "scope", "mode", "min_score", "blend", "overfetch", "filter")
        self.preset = q.get("preset")
        self.given = {k: q[k] for k in keys if k in q}
        self.given.setdefault("limit", 10)
        self.compare = False
        self.text, self.vector_of = q.get("text") or "", None
        self.expected = [str(x) for x in q.get("expect", [])]
        self._rebuild_params()
        self.query_changed.emit()
        self.run()

    # ---- parameters ----
    def set_preset(self, name: str | None) -> None:
        """A preset sets every parameter; the limit and scope the user chose are kept."""
        self.preset = name
        self.given = {k: v for k, v in self.given.items() if k in ("limit", "scope")}
        if self._rebuild_params():
            self.run()

    def set_param(self, key: str, value: Any) -> None:
        """Change one parameter: sliders re-derive in place, anything else re-runs the query."""
        if value is None or value == "":
            self.given.pop(key, None)
        else:
            self.given[key] = value
        if not self._rebuild_params():
            return
        if key in LIVE_KEYS:
            self.rederive()
        else:
            self.run()

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
            self.run()

    def set_compare(self, on: bool) -> None:
        if on != self.compare:
            self.compare = on
            self.params_changed.emit(self.params)
            self.run()

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
        self.text, self.vector_of = text, vector_of
        self.query_changed.emit()
        self.run()

    def use_as_query(self, row_id: Any) -> None:
        """Query by example: search with a stored row's vector."""
        self.set_query(self.text, str(row_id))

    def run(self) -> None:
        """Fetch fresh pools for the current query in the background (superseding any older)."""
        if self.store is None:
            if self._opening:
                self._after_open = "run"
            return
        if not self.has_query():
            return
        self._generation += 1
        self._querying = True
        self._update_busy()
        req = QueryRequest(params=self.params, placements=self.placements,
                           text=self.text, vector_of=self.vector_of, embedder=self.embedder)
        self._requested = self.params
        self._run(workers.query_job, self._generation, self.store, req,
                  on_answer=self._fetched)

    def _fetched(self, ans: Answer) -> None:
        if ans.generation != self._generation:
            return  # a newer request superseded this one
        self._querying = False
        self._update_busy()
        if ans.error:
            # results for other parameters would mislead: show the sentence, not stale rows
            self.lanes, self.traces, self.expectations, self._lanes_key = (), (), (), None
            self.trace_changed.emit()
            self.fail(ans.error)
            return
        got: Fetched = ans.value
        self.query, self.lanes, self._exhaustive = got.query, got.lanes, {}
        self._lanes_key = self._fetch_key(self._requested)
        self.expectations = ()
        self.focus_lane = min(self.focus_lane, len(self.lanes) - 1)
        self.rederive()
        self._select_first()

    def _select_first(self) -> None:
        """Keep the selection if the new trace holds it, else pick the top result (or the top
        raw candidate) so the detail pane is never empty after a query."""
        t = self.trace
        if t is None or (self.selected is not None and t.row_of(self.selected) is not None):
            return
        for stage in ("final", "raw"):
            rows = t.stage(stage).rows
            if len(rows):
                self.select(t.pool.ids[int(rows[0])])
                return

    def rederive(self) -> None:
        """Every stage for the current parameters from the cached pools (pure numpy, ~0.1 ms)."""
        if not self.lanes or self._fetch_key(self.params) != self._lanes_key:
            return  # the pools answer other parameters: a fetch is on its way, or it failed
        if tuple(lane.placement for lane in self.lanes) != self.placements:
            self.run()
            return
        try:
            traces = []
            for n, lane in enumerate(self.lanes):
                p = self.lane_params(n)
                traces.append(derive(lane.pool, p, probe=lane.probe_for(p)))
        except InspectorError as exc:
            self.fail(str(exc))
            return
        self.traces = tuple(traces)
        self.clear_error()
        self.trace_changed.emit()
        if self.expected:
            self.expect_busy = True
            self._expect_timer.start()
            self.expectations_changed.emit()

    @staticmethod
    def _fetch_key(p: Params | None) -> Any:
        """Everything but the live knobs: what a cached pool was fetched for."""
        return None if p is None else p.with_(overfetch=1.0, blend=0.0, min_score=0.0)

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
    def _run(self, fn: Any, generation: int, *args: Any, on_answer: Any) -> None:
        job = workers.start(fn, generation, *args, on_answer=on_answer)
        self._jobs.add(job)
        job.finished.connect(lambda: self._jobs.discard(job))

    def _update_busy(self) -> None:
        on = self._opening or self._querying
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
        sliders re-rank it as always, and nothing that needs LanceDB can start. The lane's
        probe is the pool itself, as `receipt.build_receipt` derives its trace."""
        self._generation += 1  # answers still in flight are about the store: drop them
        self._open_generation += 1
        self._opening = self._querying = False
        self._update_busy()
        self.opened = None
        self.preset, self.compare = None, False
        self.given = {f.name: getattr(p, f.name) for f in fields(p)}
        self.text, self.vector_of = pool.query.text or "", None
        self.expected, self.expectations, self.selected = [], (), None
        self.query = pool.query
        self.lanes = (workers.Lane(placement=p.filter, pool=pool,
                                   probe=pool if p.filter == "post" else None),)
        self._lanes_key = self._fetch_key(p)
        self.focus_lane = 0
        if not self._rebuild_params():
            raise InspectorError("The receipt's parameters do not validate in this inspector.")
        self.query_changed.emit()
        self.rederive()
        self._select_first()
