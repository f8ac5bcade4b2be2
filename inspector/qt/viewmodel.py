"""The window's state: the question (an evented model, `question_model.WindowQuestion`), the
open store, and the answer on screen. The view-model reacts to the question's change events:
a field that shapes a search asks again, a live parameter re-ranks the cached fetches, the
expected rows are explained again. Every answer comes from the core (`LiveFlow`), through the
window's one job mechanism (qt.jobs) or, for a re-rank known to be quick that needs no search,
in the tick itself (INLINE_MS; the next arrow key's answer is made ahead the same way,
AHEAD_MS), so the GUI thread never waits on LanceDB. The heavy work is plain functions below,
testable without a window."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer, Signal

from inspector.core.engine.flow.answer import Answer
from inspector.core.engine.flow.live import LiveFlow, live_params
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.engine.flow.rows import dropped_ids
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import Change
from inspector.core.engine.flow.spec import PipelineSpec
from inspector.core.engine.flow.summary import summarise
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import Opened, open_for_browsing
from inspector.core.stores.store import VersionGoneError
from inspector.qt.jobs import Jobs, gc_wait, job_message
from inspector.qt.question_model import WindowQuestion, opened_question, suggestion_question

FULL_DELAY_MS = 250  # the diagnosis's fixes and expected rows are found once a slider rests
# a re-rank runs in the tick itself, not in a job, when the session's last one took less than
# this and it needs no search (a live over-fetch past the depth fetched goes to a job): the
# thread handover and the wait for the GIL while the moved slider paints (~1-2 ms a tick) are
# saved, and no tick freezes the window longer than a re-rank known to be this quick
INLINE_MS = 8.0
# a re-rank timed in a job ran beside the painting main thread, on shared cores and waiting for
# the GIL: 1.7-1.8x the same re-rank timed inline (issue 34's notes: 11 ms against 6.3). So a
# job's time under JOB_SLOWER * INLINE_MS earns the next tick an inline try, and that try's own
# time decides from then on; one slow job's tick no longer sends every later tick to jobs
JOB_SLOWER = 2.0
# the answer a held arrow key's next tick will ask is made this long after a tick (its frame
# painted by then), while the window idles until the key repeats (~30-40 ms): that tick finds
# its answer made (the question's memo of runs) and its stages' summaries counted
AHEAD_MS = 4
_AHEAD_EVENT = QEvent.Type(QEvent.registerEventType())
# fields whose change needs a new search (a new live session); `set` is split below
SEARCH_FIELDS = frozenset({"text", "vector", "vector_of", "embedder", "preset",
                           "pipeline_file", "system_config", "columns", "scopes", "limit",
                           "now", "widen", "exact", "params"})


# ---- the work, as plain functions (run in the window's jobs) ----

def open_job(uri: str | None, table: str | None, options: Any = None) -> tuple[Opened, Any]:
    """The store opened for browsing, and the shape its schema has (its suggested preset)."""
    from inspector.core.stores.shapes import detect_shape

    opened = open_for_browsing(uri, table, options)
    return opened, detect_shape(opened.store)


def live_keys(spec: PipelineSpec) -> frozenset[str]:
    return frozenset(k for k, _ in live_params(spec))


def split_sets(sets: dict[str, Any], live: frozenset[str]) -> tuple[dict[str, Any],
                                                                      dict[str, Any]]:
    """(what shapes the search, what re-ranks the cached fetches)."""
    return ({k: v for k, v in sets.items() if k not in live},
            {k: v for k, v in sets.items() if k in live})


def open_live(store: Any, q: Question, sets: dict[str, Any],
              fresh: bool = False) -> tuple[LiveFlow, FlowTrace]:
    """A live session for the question (its search runs here) answered with the live sets.
    `fresh`: the store is searched again, no pool held from before answers (Run again: a
    version removed under the open store is said, not answered from memory)."""
    if fresh:
        from inspector.core.engine import pools

        pools.SOURCE.clear()
    now = float(q.now) if q.now is not None else time.time() * 1000  # as `inspector query`
    live = LiveFlow(store, q, now)
    live.sets = dict(sets)
    return live, live.answer()


def rerank(live: LiveFlow, sets: dict[str, Any]) -> FlowTrace:
    """The session's answer for these live parameters, from its cached fetches. A shallow
    copy: a superseded job still running never sees newer parameters."""
    mine = copy.copy(live)
    mine.sets = dict(sets)
    return mine.answer()


def timed_rerank(live: LiveFlow, sets: dict[str, Any]) -> tuple[FlowTrace, float]:
    """`rerank` and how long it took (ms)."""
    t0 = time.perf_counter()
    trace = rerank(live, sets)
    return trace, (time.perf_counter() - t0) * 1000


def quick_rerank(live: LiveFlow, sets: dict[str, Any]) -> tuple[FlowTrace, float] | None:
    """`timed_rerank` from the cached fetches alone; None when the answer needs a search (a
    live over-fetch past the depth fetched), which then runs in a job."""
    from inspector.core.engine import pools

    try:
        with pools.cached_only():
            return timed_rerank(live, sets)
    except pools.WouldSearch:
        return None


def full_answer(live: LiveFlow, sets: dict[str, Any], expect: list[str],
                cancelled: Callable[[], bool] | None = None) -> Answer:
    """The run on screen with its diagnosis (every fix run), expected rows and index facet;
    a superseded job stops before its next run (`cancelled`), freeing its thread."""
    mine = copy.copy(live)
    mine.sets = dict(sets)
    mine.question = live.question.model_copy(update={"expect": list(expect)})
    return mine.full(cancelled=cancelled)


@lru_cache(maxsize=64)
def _resolved(preset: str | None, file: str | None, config: str | None, columns: str,
              sets: str) -> PipelineSpec:
    q = Question(store="", preset=preset, pipeline_file=file, system_config=config,
                 columns=json.loads(columns), set=json.loads(sets))
    return resolve(q)[0]


def resolved(q: Question, sets: dict[str, Any] | None = None) -> PipelineSpec:
    """The pipeline a question runs (its file, config, roles and --set applied), remembered
    for the fields that shape it: a slider tick asks it twice without reading a file."""
    return _resolved(q.preset, q.pipeline_file, q.system_config,
                     json.dumps(q.columns, sort_keys=True),
                     json.dumps(q.set if sets is None else sets, sort_keys=True, default=str))


def has_query(q: Question) -> bool:
    return bool((q.text or "").strip()) or q.vector is not None or q.vector_of is not None


def change_sets(change: Change) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in change.sets}


class Inspector(QObject):
    """The question and its answer; panels subscribe to the question's events and to these
    past-tense signals."""

    store_opened = Signal(object)  # Opened
    trace_changed = Signal()  # a new run on screen (None while one is on its way)
    answer_changed = Signal()  # its diagnosis, fixes, expected rows, facet (or None)
    selection_changed = Signal(object)  # row id or None
    busy_changed = Signal(bool)  # a store is opening or an answer is on its way
    error_raised = Signal(str)
    error_cleared = Signal()
    notice_raised = Signal(str)  # a line about the question (what a store could not take)
    version_gone = Signal(int, object)  # the pinned version, the newest (or None)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = Jobs(self)
        self.question = WindowQuestion.fresh()
        self.opened: Opened | None = None
        self.shape: Any = None
        self.live: LiveFlow | None = None
        self.trace: FlowTrace | None = None
        self.answer: Answer | None = None
        self.selected: str | None = None
        self.error: str | None = None
        self.busy = False
        self.reranking = False  # the job on its way re-ranks the cached fetches
        self.reranked = False  # the answer on screen came from such a re-rank (a tick)
        self._showing = False  # inside _show, telling the widgets of a new answer
        self.driven: str | None = None  # the stage the last moved slider drives
        self._asked: tuple[dict[str, Any], dict[str, Any]] = ({}, {})  # the live's sets
        self._rerank_ms: float | None = None  # how long the session's last re-rank took
        self._rerank_in_job = False  # and whether it was timed in a job (JOB_SLOWER)
        self._ahead: tuple[Any, str, Any] | None = None  # (live session, key, value)
        self._ahead_ms: float | None = None  # how long the session's last one made ahead took
        self._ahead_timer = QTimer(self, singleShot=True, interval=AHEAD_MS)
        self._ahead_timer.timeout.connect(self._post_ahead)
        self._batch = 0
        self._pending: set[str] = set()
        self._after_open: Any = None
        self.question.events.connect(self._field_changed)
        self.jobs.channel_changed.connect(lambda _c, _b: self._update_busy())
        self.jobs.failed.connect(self._job_failed)

    # ---- facts ----
    @property
    def store(self) -> Any:
        return self.opened.store if self.opened else None

    def spec(self) -> PipelineSpec | None:
        """The pipeline the question runs, its files and --set applied (None: invalid)."""
        try:
            return resolved(self.question)
        except (InspectorError, ValueError, TypeError):
            return None

    def current(self, key: str) -> Any:
        """A STAGE.PARAM's value in the answer on screen, else as the question sets it, else
        the pipeline's own."""
        if key in self.question.set:
            return self.question.set[key]
        stage, _, param = key.partition(".")
        if self.trace is not None:
            for st in self.trace.stages:
                if st.name == stage:
                    return st.params.get(param)
        spec = self.spec()
        if spec is not None:
            from inspector.core.engine.flow.registry import kind_of

            for route in spec.routes:
                for st in route.stages:
                    if st.name == stage:
                        return kind_of(st.kind).resolve(st.params, st.name).get(param)
        return None

    # ---- the question's events ----
    def _field_changed(self, info: Any) -> None:
        name = info.signal.name
        if self._batch:
            self._pending.add(name)
            return
        self._react({name})

    def put(self, **changes: Any) -> bool:
        """Several fields of the question at once, reacted to once. False (and one sentence
        in the error bar) when the new question is not valid; nothing changes then."""
        self._batch += 1
        try:
            self.question.put(**changes)
        except InspectorError as exc:
            self.fail(str(exc))
            return False
        finally:
            self._batch -= 1
        pending, self._pending = self._pending, set()
        if pending:
            self._react(pending)
        return True

    def _react(self, names: set[str]) -> None:
        gc_wait()  # no full garbage collection in a tick: it waits for the rest
        if names & SEARCH_FIELDS:
            self.ask()
        elif "set" in names:
            self._sets_changed()
        elif "expect" in names:
            self.trace_changed.emit()  # the stars move; the stage that matters may change
            self._find_full()

    def _sets_changed(self) -> None:
        """Only live parameters changed: re-ranked from the cached fetches; else a search."""
        if self.live is None:
            self.ask()
            return
        fetch, live = split_sets(self.question.set, live_keys(self.live.base))
        if fetch != self._asked[0]:
            self.ask()
            return
        self._asked = (fetch, live)
        self.reranking = True
        self.jobs.cancel("full")
        if self._inline():
            try:
                got = quick_rerank(self.live, live)
            except Exception as exc:  # noqa: BLE001 - said in the error bar, as a job's is
                self.jobs.cancel("answer")
                self._failed(job_message(exc))
                self._job_failed(exc)  # as the job's would be (a version gone is offered)
                return
            if got is not None:
                self.jobs.cancel("answer")  # an older tick's job must not answer after this
                self._timed(got)
                return
            # the tick needs a search: its job's time is the search's, not a re-rank's, and
            # says nothing of the next tick (which re-ranks the pool this one fetched)
            self.jobs.start("answer", timed_rerank, self.live, live, on_done=self._searched,
                            on_error=self._failed)
            return
        self.jobs.start("answer", timed_rerank, self.live, live, on_done=self._timed_in_job,
                        on_error=self._failed)

    def _inline(self) -> bool:
        """A re-rank runs in the tick itself (see INLINE_MS, JOB_SLOWER)."""
        ms, in_job = self._rerank_ms, self._rerank_in_job
        return ms is not None and ms < INLINE_MS * (JOB_SLOWER if in_job else 1.0)

    def _timed(self, got: tuple[FlowTrace, float], in_job: bool = False) -> None:
        trace, self._rerank_ms = got
        self._rerank_in_job = in_job
        self._show(trace)
        if in_job and self._ahead is not None:  # asked while this job ran: made now
            self._ahead_timer.start()

    def _timed_in_job(self, got: tuple[FlowTrace, float]) -> None:
        self._timed(got, in_job=True)

    def _searched(self, got: tuple[FlowTrace, float]) -> None:
        self._show(got[0])  # the last re-rank's time still stands
        if self._ahead is not None:  # asked while this job ran: made now
            self._ahead_timer.start()

    # ---- answering ----
    def ask(self, fresh: bool = False) -> None:
        """Search again for the question as it is now (the answer on screen leaves at once:
        rows answering another question must not stand under this one); `fresh`: the store
        itself, no pool held from before."""
        q = self.question
        self.jobs.cancel("full")
        if self.store is None:
            if self.jobs.busy("open"):
                self._after_open = "keep"
            return
        self.live, self.reranking = None, False
        self._show(None)
        if not has_query(q):
            self.jobs.cancel("answer")
            return
        spec = self.spec()
        if spec is None:
            try:
                resolve(q.plain())
            except (InspectorError, ValueError) as exc:
                self.fail(str(exc))
            return
        fetch, live = split_sets(q.set, live_keys(spec))
        self._asked = (fetch, live)
        base = q.plain().model_copy(update={"set": fetch})
        self.jobs.start("answer", open_live, self.store, base, live, fresh,
                        on_done=self._opened_live, on_error=self._failed)

    def _opened_live(self, got: tuple[LiveFlow, FlowTrace]) -> None:
        self.live, trace = got
        self._rerank_ms = None  # a new session: its first re-rank is timed in a job
        self._ahead_ms = None
        self._show(trace)

    def _show(self, trace: FlowTrace | None) -> None:
        reranked = self.reranking
        self.trace, self.answer = trace, None
        self.reranking = False
        self.reranked = reranked and trace is not None  # read by trace_changed's handlers
        if trace is not None:
            self.clear_error()
        if self.selected is not None and (trace is None or not holds(trace, self.selected)):
            self.selected = None  # a row no stage holds must not stay in the detail pane
            self.selection_changed.emit(None)
        self._showing = True  # its fixes are searched next (`finding`)
        try:
            self.trace_changed.emit()
            self.answer_changed.emit()
        finally:
            self._showing = False
        if trace is None:
            return
        if self.selected is None:
            first = trace.final.rows or next((st.rows for st in trace.stages
                                              if st.role == "fetch" and st.rows), ())
            if first:
                self.select(first[0].id)
        # a re-rank (a slider, a typed live value): the fixes are searched once it rests,
        # each newer re-rank restarting the wait, so no tick queues behind a fix search
        self._find_full(FULL_DELAY_MS if reranked or self.jobs.busy("answer") else 0)

    @property
    def finding(self) -> bool:
        """The fixes of the answer on screen are being searched for, or will be once it is
        shown (a tick's: after the slider rests). The window says so from the moment the
        answer is shown, so a run of ticks never adds and removes the line each tick."""
        return self.jobs.busy("full") or (self._showing and self.live is not None
                                          and self.trace is not None)

    def _find_full(self, delay_ms: int = 0) -> None:
        """The diagnosis's fixes, the expected rows and the index facet, in a worker."""
        if self.live is None or self.trace is None:
            return
        self.jobs.start("full", full_answer, self.live, self._asked[1],
                        list(self.question.expect), on_done=self._full,
                        on_error=self._failed, delay_ms=delay_ms)

    def _full(self, got: Answer) -> None:
        self.answer = got
        self.answer_changed.emit()

    def _failed(self, message: str) -> None:
        self.live, self.trace, self.answer = None, None, None
        self.trace_changed.emit()
        self.answer_changed.emit()
        self.fail(message)

    def run_again(self) -> None:
        """Ctrl+R / F5: search the store again for the same question."""
        self.ask(fresh=True)

    # ---- what the user does ----
    def own(self, key: str) -> Any:
        """A STAGE.PARAM's value in the pipeline itself (its file, config and the question's
        other --set values), without the question's own setting of it."""
        from inspector.core.engine.flow.registry import kind_of

        q = self.question
        try:
            spec = resolved(q, {k: v for k, v in q.set.items() if k != key})
        except (InspectorError, ValueError, TypeError):
            return None
        stage, _, param = key.partition(".")
        for route in spec.routes:
            for st in route.stages:
                if st.name == stage:
                    return kind_of(st.kind).resolve(st.params, st.name).get(param)
        return spec.settings.get(key)

    def set_param(self, key: str, value: Any) -> None:
        """A STAGE.PARAM set on the question (None, or the pipeline's own value: back to the
        pipeline's own, so the question holds only what the user changed)."""
        sets = self._sets_with(key, value)
        if sets is not None:
            self.put(set=sets)

    def _sets_with(self, key: str, value: Any) -> dict[str, Any] | None:
        """The question's sets with STAGE.PARAM set to `value` (None: no change)."""
        sets = dict(self.question.set)
        if value is not None and value == self.own(key):
            value = None
        if value is None:
            if sets.pop(key, None) is None:
                return None
        else:
            sets[key] = value
        return sets

    def answer_ahead(self, key: str, value: Any) -> None:
        """A slider's next value (its next arrow key): its answer is made once the window
        idles (AHEAD_MS), as a tick would make it, and not shown. Only where a tick re-ranks
        inline: from the cached fetches (never a search), quicker than INLINE_MS. Each call
        replaces the one before; a newer tick's answer goes first."""
        self._ahead = (self.live, key, value)
        self._ahead_timer.start()

    def _post_ahead(self) -> None:
        # posted below Qt's own low priority: the layouts and paints the tick's frame posts
        # (the detail pane's second paint, an UpdateRequest at low priority) go first
        QCoreApplication.postEvent(self, QEvent(_AHEAD_EVENT),
                                   Qt.EventPriority.LowEventPriority.value - 1)

    def event(self, e: QEvent) -> bool:
        if e.type() == _AHEAD_EVENT:
            self._answer_ahead()
            return True
        return super().event(e)

    def _answer_ahead(self) -> None:
        want = self._ahead
        if want is None or want[0] is None or want[0] is not self.live:
            self._ahead = None
            return  # another question since
        if self.jobs.busy("answer"):
            return  # kept: asked again once the job has answered (_timed)
        self._ahead = None
        live, key, value = want
        if self._ahead_ms is not None and self._ahead_ms >= INLINE_MS:
            # the last one made ahead took longer than a tick may: this one is not made, so
            # the next tick re-ranks and times itself again (a tick answered from memory
            # says nothing of a re-rank's time), and that time decides the one after
            self._ahead_ms = None
            return
        if not self._inline():
            return
        sets = self._sets_with(key, value)
        if sets is None:
            return
        fetch, sets = split_sets(sets, live_keys(live.base))
        if fetch != self._asked[0]:
            return  # it needs a search: the tick asks it
        runs = live.runs.count
        try:
            got = quick_rerank(live, sets)
        except Exception:  # noqa: BLE001 - the tick that asks it runs it again and says why
            return
        if got is None:
            return
        if live.runs.count != runs:  # made now, not remembered
            self._ahead_ms = got[1]
        for st in got[0].stages:  # what the tick's stage list shows, counted now
            summarise(st)

    def drive(self, key: str) -> None:
        """The plots follow the stage a moved slider drives."""
        from inspector.core.engine.flow.live import drives

        spec = self.live.base if self.live is not None else self.spec()
        if spec is not None:
            self.driven = drives(spec, key)

    def apply_change(self, change: Change) -> None:
        """A fix the engine ran: its parameters and what-ifs set on the question."""
        q = self.question
        self.put(set={**q.set, **change_sets(change)},
                 widen={**q.widen, **dict(change.widen)}, exact=q.exact or change.exact,
                 limit=change.limit if change.limit is not None else q.limit)

    def clear_what_ifs(self) -> None:
        self.put(widen={}, exact=False)

    def set_preset(self, name: str) -> None:
        """Another pipeline: its own parameters again (the sets were about the old one)."""
        self.put(preset=name, pipeline_file=None, set={}, widen={}, exact=False)

    def set_pipeline_file(self, path: str, sets: dict[str, Any] | None = None) -> bool:
        from inspector.core.engine.flow.spec import apply_set, load_stages_file

        _resolved.cache_clear()  # the file is read afresh
        try:
            spec = load_stages_file(path)
            if sets:
                apply_set(spec, sets)  # a bad --set is said before anything changes
        except InspectorError as exc:
            self.fail(str(exc))
            return False
        return self.put(preset=None, pipeline_file=path, set=dict(sets or {}), widen={},
                        exact=False)

    def load_scope_map(self, path: str) -> None:
        """A scope map file ({scope: [prefix, ...]}) on the stages that take one (the
        classic scope rule's map strategy), as `--scope-map FILE` sets it."""
        from inspector.core.engine.flow.spec import held_options
        from inspector.core.engine.scope import load_scope_map

        spec = self.spec()
        try:
            mapping = load_scope_map(path)
        except InspectorError as exc:
            self.fail(str(exc))
            return
        held = held_options(spec, {"scope_map": mapping, "scope_strategy": "map"}) \
            if spec is not None else {}
        if "scope_map" not in held:
            self.fail(f"Pipeline {spec.name if spec else ''} has no stage that takes a scope "
                      f"map.")
            return
        self.put(set={**self.question.set, **{k: v for one in held.values()
                                              for k, v in one.items()}})

    def set_query(self, text: str, **more: Any) -> None:
        """Text typed and run (with `more` fields typed beside it): a JSON array is the
        vector itself; a new text drops the row queried by example; the same text searches
        again."""
        from inspector.core.engine.flow.inputs import parse_vector

        t = text.strip()
        if t.startswith("["):
            try:
                vec = [float(x) for x in parse_vector(t)]
            except InspectorError as exc:
                self.fail(str(exc))
                return
            self.put(**more, text=None, vector=vec, vector_of=None)
            return
        q = self.question
        fields = {**more, "text": text or None}
        if q.vector_of is not None and text != (q.text or ""):
            fields["vector_of"] = None
        if all(getattr(q, k) == v for k, v in fields.items()):
            self.ask()  # Enter on the same question: search again
            return
        self.put(**fields)

    def use_as_query(self, row_id: Any) -> None:
        """Query by example: search with a stored row's vector."""
        self.put(vector_of=str(row_id), vector=None)

    def set_expected(self, ids: list[str]) -> None:
        self.put(expect=list(dict.fromkeys(str(i).strip() for i in ids if str(i).strip())))

    def toggle_expected(self, row_id: Any) -> None:
        rid = str(row_id)
        ids = list(self.question.expect)
        self.set_expected([i for i in ids if i != rid] if rid in ids else [*ids, rid])

    def select(self, rid: Any) -> None:
        rid = None if rid is None else str(rid)
        if rid != self.selected:
            self.selected = rid
            self.selection_changed.emit(rid)

    # ---- stores ----
    def open_store(self, uri: str | None, table: str | None = None, then: Any = None,
                   options: Any = None) -> None:
        """Open a store in the background; uri None opens the bundled demo store. `then`:
        None starts from the store (its suggested preset and question); "keep" asks the
        question as it is (a launch or `shot` that gave one); a suggestion dict applies it."""
        if options is None and self.opened is not None and self.opened.options is not None \
                and uri == self.store.uri:
            options = self.opened.options.at(None)
        self.jobs.cancel("answer")
        self.jobs.cancel("full")
        self._after_open = then
        self.jobs.start("open", open_job, uri, table, options, on_done=self._opened,
                        on_error=self._open_failed)

    def _open_failed(self, message: str) -> None:
        if self.opened is not None:
            name = "the demo store" if self.opened.demo else self.store.display_uri
            message = f"{message.rstrip('.')}; still showing {name} ({self.store.table_name})."
        self.fail(message)

    def _opened(self, got: tuple[Opened, Any]) -> None:
        """The store is open: the question is set up for it (kept, a suggestion, or the
        store's own), then the window hears of the store, then the question is asked once."""
        opened, shape = got
        then, self._after_open = self._after_open, None
        before = self.opened
        same = before is not None and (before.store.uri, before.store.table_name) == \
            (opened.store.uri, opened.store.table_name)
        self.opened, self.shape = opened, shape
        self.live, self.trace, self.answer, self.selected = None, None, None, None
        self.clear_error()
        st = opened.store
        fields: dict[str, Any] = {"store": st.uri, "table": st.table_name}
        lines: list[str] = []
        story = then if isinstance(then, dict) else \
            st.suggested_queries[0] if then is None and not same and opened.demo \
            and st.suggested_queries else None
        if story is not None and not (story.get("table") and story["table"] != st.table_name):
            try:
                fields.update(suggestion_question(story))
            except InspectorError as exc:
                lines.append(str(exc))
        elif then is None and not same:
            changes, lines = opened_question(self.question, st, shape)
            fields.update(changes)
        self._batch += 1
        try:
            self.question.put(**fields)
        except InspectorError as exc:
            lines.append(str(exc))
        finally:
            self._batch -= 1
            self._pending.clear()
        self.store_opened.emit(opened)
        self.trace_changed.emit()
        self.answer_changed.emit()
        for line in lines:
            self.notice_raised.emit(line)
        if story is not None and story.get("table") and story["table"] != st.table_name:
            self.apply_suggestion(story)  # the story's own table opens next
        elif then != "none" and not self.jobs.busy("answer"):
            self.ask()  # (a handler of store_opened may have asked already)

    def load_suggested(self, n: int) -> None:
        """Set up and run one of the store's suggested queries (the demo stories)."""
        if self.store is None:
            return
        stories = self.store.suggested_queries
        if not 0 <= n < len(stories):
            self.fail(f"This store has {len(stories)} suggested queries; there is no "
                      f"number {n + 1}.")
            return
        self.apply_suggestion(stories[n])

    def apply_suggestion(self, s: dict[str, Any]) -> None:
        table = s.get("table")
        if table and self.store is not None and table != self.store.table_name:
            uri = None if self.opened is not None and self.opened.demo else self.store.uri
            self.open_store(uri, table, then=s)
            return
        try:
            fields = suggestion_question(s)
        except InspectorError as exc:
            self.fail(str(exc))
            return
        st = self.store
        self.put(store=st.uri, table=st.table_name, **fields)
        self.ask()

    # ---- plumbing ----
    def _job_failed(self, exc: BaseException) -> None:
        if isinstance(exc, VersionGoneError):  # cleaned up under us: offer the newest
            self.version_gone.emit(exc.version, exc.latest)

    def _update_busy(self) -> None:
        on = self.jobs.busy("open") or self.jobs.busy("answer")
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


def holds(trace: FlowTrace, rid: str) -> bool:
    return any(s.id == rid for st in trace.stages for s in (*st.rows, *st.rows_in)) or any(
        rid in dropped_ids(st.dropped) for st in trace.stages)


def scored(trace: FlowTrace | None, rid: str | None) -> Any:
    """The row `rid` as the answer on screen scored it last (None: no stage holds it)."""
    if trace is None or rid is None:
        return None
    for st in reversed(trace.stages):  # from the end: the last stage that holds it, mostly
        for rows in (st.rows, st.rows_in):  # the final one, is read first
            for s in reversed(rows):
                if s.id == rid:
                    return s
    return None
