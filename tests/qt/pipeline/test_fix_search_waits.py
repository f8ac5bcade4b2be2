"""A slider's ticks do a tick's work and no more (issue 34). They never queue behind the
diagnosis's fix search: the fixes (each a run of the pipeline, 160 of them on
memory-lancedb-pro's hybrid route) are searched once the slider rests, and a search a newer
tick supersedes stops before its next run, freeing its thread. On the old code every tick
started a fix search at once, which nothing could stop; with two of them holding the thread
pool's two threads, a tick waited seconds for its re-rank (bench/tick.py, 13 stages: p95
3.3 s). The plots redraw once the slider rests, and the tables format only the rows they
show."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """When each fix search started (viewmodel.full_answer, run in the window's jobs)."""
    from inspector.qt import viewmodel

    started: list[float] = []
    real = viewmodel.full_answer

    def counting(*a: Any, **k: Any) -> Any:
        started.append(time.monotonic())
        return real(*a, **k)

    monkeypatch.setattr(viewmodel, "full_answer", counting)
    return started


def _tick(win: Any, key: str, value: float) -> None:
    """A slider tick, until its re-ranked answer is on screen (not until the jobs are idle:
    the fix search waits for the slider to rest)."""
    old = win.vm.trace
    win.sliders.sliders[key].setValue(value)
    win.sliders.flush()
    end = time.monotonic() + 30
    while win.vm.trace is old or win.vm.trace is None:
        assert time.monotonic() < end, "the tick's answer never came"
        QCoreApplication.processEvents()


def test_ticks_start_no_fix_search_until_the_slider_rests(window, monkeypatch) -> None:
    from inspector.qt.viewmodel import FULL_DELAY_MS

    vm = window.vm
    vm.load_suggested(0)
    vm.jobs.wait_idle(60)
    started = _counted(monkeypatch)
    shown: list[float] = []  # when each answer reached the widgets (the wait starts after)

    def note() -> None:
        shown.append(time.monotonic())

    vm.trace_changed.connect(note)
    try:
        for v in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
            _tick(window, "blend.weight", v)
    finally:
        vm.trace_changed.disconnect(note)
    assert started == []  # ticks closer together than FULL_DELAY_MS: no fix search yet
    assert vm.answer is None and vm.jobs.busy("full")  # one waits for the rest
    vm.jobs.wait_idle(60)
    # Qt may fire a coarse timer up to 5 % early
    assert len(started) == 1 and started[0] - shown[-1] >= FULL_DELAY_MS / 1000 * 0.9
    assert vm.answer is not None and vm.answer.trace is vm.trace


def test_a_superseded_fix_search_stops_before_its_next_run(window) -> None:
    """The job's `cancelled` reaches the runs: once set, the next run raises Cancelled and
    no further run is made."""
    from inspector.core.engine.flow.runs import Cancelled
    from inspector.qt.viewmodel import full_answer

    vm = window.vm
    vm.load_suggested(0)
    vm.jobs.wait_idle(60)
    stop = threading.Event()
    runs: list[int] = []
    real = vm.live.runs.__class__._run

    def counted(self: Any, c: Any) -> Any:
        runs.append(1)
        if len(runs) == 3:
            stop.set()  # superseded while its third run is made
        return real(self, c)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(vm.live.runs.__class__, "_run", counted)
        with pytest.raises(Cancelled):
            full_answer(vm.live, {"blend.weight": 0.37}, [], cancelled=stop.is_set)
    assert len(runs) == 3
    assert full_answer(vm.live, {"blend.weight": 0.37}, []).diagnosis is not None


def test_the_plots_wait_for_the_slider_to_rest(window) -> None:
    """The tables follow every tick and the plots redraw once the slider rests
    (PLOT_SETTLE_MS). On the old code the window decided by a flag that was cleared before
    the tick's re-rank came back, so every tick redrew both plots (~9 ms of a demo tick)."""
    from inspector.qt.pipeline.plot_box import plotted_stage
    from inspector.qt.pipeline.plots import stage_points
    from tests.qt.qtkit import rest

    def plotted() -> dict[str, tuple]:  # the scatter's points per group, as drawn last
        return dict(window.scatter._shown)

    def wanted() -> dict[str, tuple]:  # what the answer on screen plots
        vm = window.vm
        st = plotted_stage(vm.trace, vm.driven, vm.question.expect)
        return {k: (tuple(x), tuple(y), tuple(ids))
                for k, (x, y, ids) in stage_points(vm.trace, st).items()}

    vm = window.vm
    vm.load_suggested(0)
    vm.jobs.wait_idle(60)
    window.flush_plots()
    assert window.scatter_box.isVisible() and not window.plots_pending
    before = plotted()
    assert before == wanted()
    _tick(window, "blend.weight", 0.35)
    assert wanted() != before  # the tick moved points
    assert window.plots_pending and plotted() == before  # and the plot has not redrawn yet
    rest(window)
    assert plotted() == wanted()  # once the slider rested


def test_a_tick_formats_only_the_rows_on_screen(window, monkeypatch) -> None:
    """A deep pool's tick makes the cells of the rows a table shows, not of every row of
    every stage (~4,000 on the demo at over-fetch 20, each a tuple of formatted texts, on
    every tick of the old code); what the tables show is still the engine's answer."""
    from inspector.qt.pipeline import stage_model

    vm = window.vm
    vm.put(preset="memory-plugin", set={"min_score.min": 0.0, "fetch.overfetch": 20.0},
           limit=50, scopes=None, expect=[], text="which editor theme does the user prefer",
           vector=None, vector_of=None)
    vm.jobs.wait_idle(60)
    rows = sum(len(st.rows) + len(st.dropped) for st in vm.trace.stages)
    assert rows > 2000
    made: list[int] = []
    real = stage_model.FlowStageModel._kept_cells

    def counted(self: Any, r: int, s: Any) -> Any:
        made.append(r)
        return real(self, r, s)

    monkeypatch.setattr(stage_model.FlowStageModel, "_kept_cells", counted)
    _tick(window, "blend.weight", 0.45)
    QCoreApplication.processEvents()  # the frame: the views ask for the cells they paint
    assert 0 < len(made) < 400  # the open tables' visible rows (a few dozen each)
    for sec in window.stages.sections:  # every cell a reader can scroll to is the engine's
        if sec.isVisible() and sec.model.run is not None:
            run = sec.model.run
            assert [sec.model.cell(r, "score") for r in range(len(run.rows))] == \
                [f"{s.score:.4f}" for s in run.rows]


def test_a_tick_neither_flashes_the_busy_bar_nor_drops_the_finding_line(window) -> None:
    """Each tick's answer is followed by a fix search, so the banner says "Finding fixes"
    throughout a run of ticks, and a re-rank of a few ms shows no busy bar. On the old code
    both came and went on every tick, and each came and went re-laid out the whole window
    (four frames a tick instead of one)."""
    vm = window.vm
    vm.load_suggested(0)
    vm.jobs.wait_idle(60)
    assert vm.answer is not None and vm.answer.diagnosis.code != "ok"  # a miss, with fixes
    finding: list[bool] = []
    bar: list[bool] = []
    show_answer, set_visible = window.banner.show_answer, window.busy_bar.setVisible

    def banner(trace: Any, answer: Any, expected: Any, find: bool, *a: Any) -> None:
        finding.append(find or answer is not None)  # its fixes searched, or found
        show_answer(trace, answer, expected, find, *a)

    def busy(on: bool) -> None:
        bar.append(on)
        set_visible(on)

    window.banner.show_answer, window.busy_bar.setVisible = banner, busy
    try:
        for v in (0.15, 0.25, 0.35, 0.45):
            _tick(window, "blend.weight", v)
    finally:
        del window.banner.show_answer, window.busy_bar.setVisible
    assert finding and all(finding)
    assert len(finding) == 4  # told once a tick (the trace, its signal and the fix search's
    # start each told it on the old code)
    assert True not in bar and not window.busy_bar.isVisible()


def test_a_tick_leaves_the_limit_box_alone(window) -> None:
    """A slider's tick changes the question's values, and the query bar is shown the
    question again: its limit box, whose range and value did not change, is neither
    repainted nor re-laid out. On the old code each tick set its range again, which asked
    the whole window for a new layout and repainted the rows above the tables in two extra
    frames before the tick's answer came."""
    from PySide6.QtCore import QEvent, QObject

    vm = window.vm
    vm.load_suggested(1)
    vm.jobs.wait_idle(60)
    box = window.query_bar.limit
    seen: list[str] = []

    class Watch(QObject):
        def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt's name
            if event.type() in (QEvent.Type.Paint, QEvent.Type.LayoutRequest):
                seen.append(f"{type(obj).__name__} {event.type().name}")
            return False

    watch = Watch()
    for w in (box, box.lineEdit(), window.query_bar):
        w.installEventFilter(watch)
    try:
        for v in (0.15, 0.25, 0.35):
            _tick(window, "blend.weight", v)
            for _ in range(3):  # the frames that paint what the tick made dirty
                QCoreApplication.processEvents()
    finally:
        for w in (box, box.lineEdit(), window.query_bar):
            w.removeEventFilter(watch)
    assert vm.question.set.get("blend.weight") == 0.35 and box.value() == vm.question.limit
    assert seen == []


def test_rows_a_tick_adds_are_laid_out_in_the_answers_own_frame(window) -> None:
    """An over-fetch tick adds rows to the open tables: each lays them out at once, so the
    frame that paints the answer paints its rows (on the old code the view waited for its
    next turn of the event loop, and the rows came one frame, ~4 ms, after the rest)."""
    vm = window.vm
    vm.put(preset="memory-plugin", set={"min_score.min": 0.0, "fetch.overfetch": 4.0},
           limit=50, scopes=None, expect=[], text="which editor theme does the user prefer",
           vector=None, vector_of=None)
    vm.jobs.wait_idle(60)
    QCoreApplication.processEvents()
    fetch = next(sec for sec in window.stages.sections if sec.model.run is not None
                 and sec.model.run.role == "fetch")
    fetch.set_open(True)
    QCoreApplication.processEvents()
    before = fetch.model.rowCount()
    seen: list[tuple[int, int]] = []

    def probe() -> None:  # connected after the window's handlers: what the frame will paint
        bar = fetch.table.verticalScrollBar()
        seen.append((fetch.model.rowCount(), bar.maximum()))

    vm.trace_changed.connect(probe)
    try:
        _tick(window, "fetch.overfetch", 6.0)
    finally:
        vm.trace_changed.disconnect(probe)
    QCoreApplication.processEvents()
    rows, laid_out = seen[-1]
    assert rows > before
    assert laid_out == fetch.table.verticalScrollBar().maximum() > 0


def test_a_slow_re_rank_shows_the_busy_bar_once_it_has_taken_a_while(window,
                                                                      monkeypatch) -> None:
    """No bar for a re-rank of a few ms, but one that is still running after RERANK_BUSY_MS
    (a deep pool on a slow machine) says the window is working."""
    from inspector.qt import viewmodel
    from inspector.qt.window import RERANK_BUSY_MS

    vm = window.vm
    vm.load_suggested(0)
    vm.jobs.wait_idle(60)
    release = threading.Event()
    real = viewmodel.rerank

    def slow(*a: Any, **k: Any) -> Any:
        release.wait(30)
        return real(*a, **k)

    monkeypatch.setattr(viewmodel, "rerank", slow)
    window.sliders.sliders["blend.weight"].setValue(0.55)
    window.sliders.flush()
    assert vm.reranking and not window.busy_bar.isVisible()
    end = time.monotonic() + 30
    while not window.busy_bar.isVisible():
        assert time.monotonic() < end, "the busy bar never showed for a slow re-rank"
        QCoreApplication.processEvents()
        time.sleep(0.005)
    assert time.monotonic() - (end - 30) >= RERANK_BUSY_MS / 1000 * 0.9
    release.set()
    vm.jobs.wait_idle(60)
    QCoreApplication.processEvents()
    assert not window.busy_bar.isVisible()


def test_a_tick_changes_a_stage_table_by_the_models_protocol(window, qtlog) -> None:
    """Rows a tick adds or removes reach the views by the model protocol (Qt's own model
    tester watches each step): the views count the old rows until they are told of the new
    ones, and no row is asked of that the model does not have."""
    from PySide6.QtCore import QModelIndex
    from PySide6.QtTest import QAbstractItemModelTester

    vm = window.vm
    vm.put(preset="memory-plugin", set={"min_score.min": 0.0, "fetch.overfetch": 4.0},
           limit=50, scopes=None, expect=[], text="which editor theme does the user prefer",
           vector=None, vector_of=None)
    vm.jobs.wait_idle(60)
    mode = QAbstractItemModelTester.FailureReportingMode.Warning
    testers = [QAbstractItemModelTester(sec.model, mode) for sec in window.stages.sections
               if sec.model.run is not None]
    counts = []
    for f in (6.0, 2.0, 5.0, 1.0):  # rows added, removed, added, removed
        _tick(window, "fetch.overfetch", f)
        counts.append(sum(sec.model.rowCount() for sec in window.stages.sections))
    assert counts[0] > counts[1] < counts[2] > counts[3]
    failures = [r.message for r in qtlog.records if "FAIL" in r.message]
    assert testers and not failures, failures[:3]
    # no cell behind an invalid index, in any role (a view asks while rows come and go)
    for sec in window.stages.sections:
        assert sec.model.rowCount() == 0 or sec.model.data(sec.model.index(0, 0)) is not None
        answers = {role: sec.model.data(QModelIndex(), role) for role in range(16)}
        assert set(answers.values()) == {None}, answers
