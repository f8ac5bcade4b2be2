"""Python's full garbage collections wait for the window to rest (issue 34): a slider's tick
never pays one. On the old code one tick in ~20 did, at a 1,000-row pool 40 to over 300 ms,
more the more the process held (200 arrow keys on the over-fetch slider: max 390-490 ms, against
180-190 ms now, that one a new search)."""

from __future__ import annotations

import gc
import time
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication

from inspector.core import batch_gc
from inspector.qt import jobs


def _fulls() -> int:
    return gc.get_stats()[2]["collections"]


def _tick(win: Any, value: float) -> None:
    """A tick of the blend slider, until its answer is on screen."""
    old = win.vm.trace
    win.sliders.sliders["blend.weight"].setValue(value)
    win.sliders.flush()
    end = time.monotonic() + 30
    while win.vm.trace is old or win.vm.trace is None:
        assert time.monotonic() < end, "the tick's answer never came"
        QCoreApplication.processEvents()


def _survivors(n: int) -> list[Any]:
    """n objects that live on: enough middle-generation collections, and long-lived objects,
    that CPython's own rule asks for a full collection."""
    return [[] for _ in range(n)]


@pytest.fixture
def slow_rest(monkeypatch: pytest.MonkeyPatch) -> float:
    """A rest long enough that a loaded machine's tick never reaches it mid-burst."""
    monkeypatch.setattr(jobs, "GC_QUIET_MS", 3000)
    return 3.0


def test_a_burst_of_ticks_pays_no_full_collection_and_the_rest_runs_the_one_due(
        window, qtbot, slow_rest) -> None:
    window.vm.load_suggested(0)
    window.vm.jobs.wait_idle(60)
    threshold = gc.get_threshold()
    before = _fulls()
    kept: list[Any] = []
    for v in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        _tick(window, v)
        kept.extend(_survivors(200_000))  # what a session's answers leave, and more
    last_tick = time.monotonic()
    assert gc.get_count()[2] > threshold[2]  # a full collection fell due in the burst
    assert _fulls() == before  # and none ran in it
    assert jobs.gc_waiting() and gc.get_threshold()[2] > threshold[2]
    qtbot.waitUntil(lambda: not jobs.gc_waiting(), timeout=20_000)
    assert time.monotonic() - last_tick >= slow_rest * 0.9  # only once the window rested
    assert _fulls() == before + 1  # the one that was due, once
    assert gc.get_threshold() == threshold  # and CPython's schedule is back
    del kept


def test_a_change_that_never_rests_still_collects(window, monkeypatch, slow_rest) -> None:
    monkeypatch.setattr(jobs, "GC_MAX_DEFER_S", 0.0)
    window.vm.load_suggested(0)
    window.vm.jobs.wait_idle(60)
    before = _fulls()
    kept: list[Any] = []
    for v in (0.1, 0.2, 0.3):
        kept.extend(_survivors(200_000))
        _tick(window, v)
    assert jobs.gc_waiting()  # the burst has not rested
    assert _fulls() > before  # yet the collections that fell due ran
    del kept


def test_collections_someone_else_turned_off_stay_off(qapp) -> None:
    t0, t1, t2 = gc.get_threshold()
    jobs.gc_rest()
    off = (1 << 31) - 1  # another tool deferring full collections its own way
    gc.set_threshold(t0, t1, off)
    try:
        jobs.gc_wait()
        assert not jobs.gc_waiting()
        jobs.gc_rest()
        assert gc.get_threshold() == (t0, t1, off)
    finally:
        gc.set_threshold(t0, t1, t2)


def test_the_window_and_a_sweep_wait_together_the_last_to_end_brings_collections_back(
        qapp) -> None:
    """The window's wait and a batch's (a sweep, an audit) are one count: the window resting
    in the middle of a sweep leaves the sweep's wait alone, and a sweep ending in the middle of
    a burst of ticks leaves the window's. On the old code each saw the other's "off" as someone
    else's and stood aside, so the first to end turned collections back on under the other."""
    jobs.gc_rest()
    threshold = gc.get_threshold()
    try:
        jobs.gc_wait()  # a burst of ticks
        with batch_gc.deferred():  # a sweep starts during it
            jobs.gc_rest()  # the window rests while the sweep runs
            assert gc.get_threshold()[2] == batch_gc.OFF
        assert gc.get_threshold() == threshold
        with batch_gc.deferred():  # a sweep runs
            jobs.gc_wait()  # and the user moves a slider
        assert jobs.gc_waiting()
        assert gc.get_threshold()[2] == batch_gc.OFF  # the ticks still wait
        jobs.gc_rest()
        assert gc.get_threshold() == threshold
        assert not batch_gc.waiting()
    finally:
        jobs.gc_rest()
        gc.set_threshold(*threshold)
