"""Full garbage collections wait while a batch of runs works (a sweep, an audit): none runs
inside it although some fall due, the one due runs when it ends, a long batch still collects
once every MAX_DEFER_S, and thresholds someone else set are left alone."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.core import batch_gc


def _fulls() -> int:
    return gc.get_stats()[2]["collections"]


def _survivors(n: int) -> list[Any]:
    """n objects that live on: enough middle-generation collections that CPython's own rule
    asks for a full collection."""
    return [[] for _ in range(n)]


@pytest.fixture(autouse=True)
def defaults() -> Iterator[tuple[int, int, int]]:
    """CPython's thresholds before and after every test, whatever it did."""
    threshold = gc.get_threshold()
    assert threshold[2] < batch_gc.OFF and not batch_gc.waiting()
    yield threshold
    gc.set_threshold(*threshold)


def test_a_batch_runs_no_full_collection_and_its_end_runs_the_one_due(
        defaults: tuple[int, int, int]) -> None:
    before = _fulls()
    kept: list[Any] = []
    with batch_gc.deferred():
        assert batch_gc.waiting() and gc.get_threshold()[2] == batch_gc.OFF
        for _ in range(6):
            kept.extend(_survivors(200_000))
        assert gc.get_count()[2] > defaults[2]  # a full collection fell due
        assert _fulls() == before  # and none ran
    assert _fulls() == before + 1  # the one due, at the end
    assert gc.get_threshold() == defaults and not batch_gc.waiting()


def test_nested_and_concurrent_batches_restore_once_the_last_ends(
        defaults: tuple[int, int, int]) -> None:
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with batch_gc.deferred():
            inside.set()
            leave.wait(30)

    t = threading.Thread(target=other)
    with batch_gc.deferred():
        t.start()
        assert inside.wait(30)
        with batch_gc.deferred():
            pass
        assert gc.get_threshold()[2] == batch_gc.OFF  # the inner end restored nothing
    assert gc.get_threshold()[2] == batch_gc.OFF  # the other thread's batch still runs
    leave.set()
    t.join(30)
    assert gc.get_threshold() == defaults


def test_a_long_batch_still_collects_at_its_checkpoints(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = _fulls()
    kept: list[Any] = []
    with batch_gc.deferred():
        kept.extend(_survivors(1_500_000))
        batch_gc.valve()  # within MAX_DEFER_S: waits on
        assert _fulls() == before
        monkeypatch.setattr(batch_gc, "MAX_DEFER_S", 0.0)
        batch_gc.valve()
        assert _fulls() == before + 1
        assert gc.get_threshold()[2] == batch_gc.OFF  # and still waits after it


def test_thresholds_someone_else_set_are_left_alone(defaults: tuple[int, int, int]) -> None:
    t0, t1, _ = defaults
    gc.set_threshold(t0, t1, batch_gc.OFF)  # the window's own wait, say
    with batch_gc.deferred():
        assert not batch_gc.waiting()
    assert gc.get_threshold() == (t0, t1, batch_gc.OFF)  # not turned back on by the batch
    gc.set_threshold(*defaults)
    with batch_gc.deferred():
        gc.set_threshold(t0, t1, 5)  # someone else's setting while the batch ran
    assert gc.get_threshold() == (t0, t1, 5)


def test_a_sweep_is_one_batch_until_its_last_query_or_the_caller_stops(
        tmp_path: Path, defaults: tuple[int, int, int]) -> None:
    from inspector.core.analysis import grid as G
    from inspector.core.analysis.sweep import Case, iter_sweep
    from inspector.core.engine.flow.question import Question, resolve
    from inspector.core.stores.opening import open_store
    from tests.storekit import write_tuning_store

    path = write_tuning_store(tmp_path / "s", n=200, dim=24)
    q = Question(store=str(path), preset="lancedb", text="keys", vector=[0.1] * 24, limit=5)
    axes = G.parse_grid(resolve(q)[0], ["blend.weight=0,1"])
    cases = [Case(f"q{i}", q) for i in range(3)]
    store = open_store(str(path))
    seen = []
    for _ in iter_sweep(store, cases, axes):
        seen.append(gc.get_threshold()[2])
    assert seen == [batch_gc.OFF] * 3 and gc.get_threshold() == defaults
    sweep = iter_sweep(store, cases, axes)
    next(sweep)
    assert batch_gc.waiting()
    sweep.close()  # the caller stops early (a cancelled sweep)
    assert gc.get_threshold() == defaults and not batch_gc.waiting()


def test_a_hold_lasts_until_its_release_and_counts_with_batches() -> None:
    threshold = gc.get_threshold()
    try:
        batch_gc.hold()
        with batch_gc.deferred():
            pass
        assert gc.get_threshold()[2] == batch_gc.OFF  # the batch ended, the hold did not
        batch_gc.release()
        assert gc.get_threshold() == threshold
        with pytest.raises(RuntimeError):
            batch_gc.release()  # a release without its hold is a caller's bug, said at once
    finally:
        gc.set_threshold(*threshold)
