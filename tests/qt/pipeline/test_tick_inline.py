"""A tick whose re-rank is known to be quick is answered in the tick itself (issue 34): no job,
no thread handover, no wait for the GIL while the moved slider paints. A tick that needs a
search (a live over-fetch past the depth fetched) and a session whose last re-rank was slow
still go to a job, so no tick freezes the window."""

from __future__ import annotations

import time
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication


def _set(win: Any, key: str, value: float) -> Any:
    """The slider moved and its throttle flushed; no event processed yet. The answer then on
    screen."""
    win.sliders.sliders[key].setValue(value)
    win.sliders.flush()
    return win.vm.trace


def _settle(win: Any, old: Any) -> None:
    end = time.monotonic() + 30
    while win.vm.trace is old or win.vm.trace is None:
        assert time.monotonic() < end, "the tick's answer never came"
        QCoreApplication.processEvents()


@pytest.fixture
def pool(window, monkeypatch) -> Any:
    """The demo store's suggested question, its first tick answered (and timed) by a job.
    Any re-rank counts as quick here (a loaded machine's may take longer than INLINE_MS);
    the guard itself is tested below with INLINE_MS at 0."""
    from inspector.qt import viewmodel

    monkeypatch.setattr(viewmodel, "INLINE_MS", 1e9)
    vm = window.vm
    vm.load_suggested(0)
    vm.jobs.wait_idle(60)
    old = vm.trace
    assert _set(window, "blend.weight", 0.15) is old  # the session's first re-rank: a job
    _settle(window, old)
    return window


def test_a_quick_rerank_is_answered_in_the_tick(pool) -> None:
    vm = pool.vm
    for v in (0.25, 0.35, 0.45):
        old = vm.trace
        got = _set(pool, "blend.weight", v)
        assert got is not old and got is not None  # on screen before any event ran
        assert not vm.jobs.busy("answer")
        blend = next(st for st in got.stages if st.name == "blend")
        assert blend.params["weight"] == pytest.approx(v)
    # the fix search still waits for the rest, as after a job's tick
    assert vm.jobs.busy("full") and vm.answer is None
    vm.jobs.wait_idle(60)
    assert vm.answer is not None and vm.answer.trace is vm.trace


def test_an_over_fetch_within_the_fetched_depth_is_answered_in_the_tick(pool) -> None:
    from inspector.core.engine import pools

    vm = pool.vm
    searches = pools.SOURCE.fetches
    old = vm.trace
    got = _set(pool, "fetch.overfetch", 3.0)  # the pools fetched cover it: no search
    assert got is not old and pools.SOURCE.fetches == searches


def test_a_tick_that_needs_a_search_and_a_slow_session_go_to_a_job(pool, monkeypatch) -> None:
    from inspector.core.engine import pools
    from inspector.qt import viewmodel

    vm = pool.vm
    pools.SOURCE.clear()  # no pool fetched (the diagnosis's deep ones answer every depth)
    searches = pools.SOURCE.fetches
    old = vm.trace
    _set(pool, "fetch.overfetch", 4.0)  # a new depth, not fetched: a search, in a job
    assert vm.trace is old and vm.jobs.busy("answer")
    _settle(pool, old)
    assert pools.SOURCE.fetches == searches + 1
    monkeypatch.setattr(viewmodel, "INLINE_MS", 0.0)  # as if the last re-rank was slow
    old = vm.trace
    assert _set(pool, "blend.weight", 0.55) is old
    assert vm.jobs.busy("answer")
    _settle(pool, old)


def test_an_inline_rerank_that_fails_says_so(pool, monkeypatch) -> None:
    from inspector.core.errors import InspectorError
    from inspector.qt import viewmodel

    def failing(*_a: Any) -> Any:
        raise InspectorError("The store went away.")

    monkeypatch.setattr(viewmodel, "timed_rerank", failing)
    _set(pool, "blend.weight", 0.65)
    assert pool.vm.error == "The store went away." and pool.vm.trace is None


def test_an_inline_rerank_whose_version_is_gone_offers_the_newest(pool, monkeypatch) -> None:
    from inspector.core.stores.store import VersionGoneError
    from inspector.qt import viewmodel

    def gone(*_a: Any) -> Any:
        raise VersionGoneError("Version 3 of the table is gone.", 3, 7)

    offered: list[tuple[int, Any]] = []
    pool.vm.version_gone.connect(lambda v, latest: offered.append((v, latest)))
    monkeypatch.setattr(viewmodel, "timed_rerank", gone)
    _set(pool, "blend.weight", 0.75)
    assert offered == [(3, 7)] and pool.vm.trace is None


def test_a_job_timed_rerank_under_twice_the_line_earns_an_inline_try(pool, monkeypatch) -> None:
    """A re-rank timed in a job is slower than the same one inline (it shares the cores and the
    GIL with the painting main thread), so a job's time under JOB_SLOWER x INLINE_MS sends the
    next tick inline, and that tick's own time decides the one after: one slow job's tick does
    not send every later tick to jobs."""
    from inspector.qt import viewmodel

    vm = pool.vm
    real = viewmodel.timed_rerank
    said = {"ms": 0.0}

    def timed(live: Any, sets: dict[str, Any]) -> Any:
        trace, _ms = real(live, sets)
        return trace, said["ms"]  # the time the machine would have measured

    monkeypatch.setattr(viewmodel, "timed_rerank", timed)
    monkeypatch.setattr(viewmodel, "INLINE_MS", 10.0)
    said["ms"] = 25.0  # a slow re-rank, timed inline: the next tick goes to a job
    assert _set(pool, "blend.weight", 0.2) is not None and not vm.jobs.busy("answer")
    said["ms"] = 15.0  # that job's time: over the line, under twice it
    old = vm.trace
    assert _set(pool, "blend.weight", 0.3) is old and vm.jobs.busy("answer")
    _settle(pool, old)
    said["ms"] = 12.0  # the inline try: over the line, so the next tick goes to a job
    old = vm.trace
    assert _set(pool, "blend.weight", 0.4) is not old and not vm.jobs.busy("answer")
    old = vm.trace
    said["ms"] = 25.0  # a job's time over twice the line: the tick after stays in a job
    assert _set(pool, "blend.weight", 0.5) is old and vm.jobs.busy("answer")
    _settle(pool, old)
    old = vm.trace
    assert _set(pool, "blend.weight", 0.6) is old and vm.jobs.busy("answer")
    _settle(pool, old)
    said["ms"] = 9.0  # a job's time under the line: inline from the next tick on
    old = vm.trace
    assert _set(pool, "blend.weight", 0.7) is old and vm.jobs.busy("answer")
    _settle(pool, old)
    for v in (0.75, 0.8):
        old = vm.trace
        assert _set(pool, "blend.weight", v) is not old and not vm.jobs.busy("answer")


def test_a_tick_that_searched_leaves_the_last_rerank_time_standing(pool, monkeypatch) -> None:
    """A tick that needs a search runs in a job, and that job's time is the search's: the next
    tick, which re-ranks the pool the search fetched, is judged by the last re-rank's time."""
    from inspector.core.engine import pools
    from inspector.qt import viewmodel

    vm = pool.vm
    real = viewmodel.timed_rerank
    said = {"ms": 5.0}

    def timed(live: Any, sets: dict[str, Any]) -> Any:
        trace, _ms = real(live, sets)
        return trace, said["ms"]

    monkeypatch.setattr(viewmodel, "timed_rerank", timed)
    monkeypatch.setattr(viewmodel, "INLINE_MS", 10.0)
    assert _set(pool, "blend.weight", 0.2) is not None and not vm.jobs.busy("answer")
    pools.SOURCE.clear()  # no pool fetched: the next over-fetch needs a search
    said["ms"] = 50.0  # the search's job
    old = vm.trace
    assert _set(pool, "fetch.overfetch", 4.0) is old and vm.jobs.busy("answer")
    _settle(pool, old)
    said["ms"] = 5.0
    old = vm.trace
    assert _set(pool, "blend.weight", 0.3) is not old and not vm.jobs.busy("answer")
