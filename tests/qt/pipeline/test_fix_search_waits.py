"""A slider's ticks never queue behind the diagnosis's fix search: the fixes (each a run of
the pipeline, 160 of them on memory-lancedb-pro's hybrid route) are searched once the slider
rests, and a search a newer tick supersedes stops before its next run, freeing its thread.
On the old code every tick started a fix search at once, which nothing could stop; with two
of them holding the thread pool's two threads, a tick waited seconds for its re-rank
(bench/tick.py, 13 stages: p95 3.3 s)."""

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
