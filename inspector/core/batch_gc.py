"""Full garbage collections wait while a batch of pipeline runs works (a sweep's queries, an
audit's probes): CPython runs one each time enough objects have survived its young
generations, and each one walks every object the process holds (every pool, row and answer
a batch keeps). Measured on the demo sweep (7,296 runs): ~35 % of its time went to them.

Inside `deferred()` automatic full collections are off; the young generations run as always.
When the outermost batch ends, CPython's schedule is back and the full collection that fell
due runs once. A batch that runs long still collects every MAX_DEFER_S, at the points it
calls `valve()` (between queries, between probes). Nothing else changes: what is garbage is
freed, later; what is kept is the same.

A wait that is not a block of code (the window's, `qt.jobs.gc_wait`: from a slider's first
tick until the question rests) is a `hold()` ended by `release()`; batches and holds count
together, so the last of them to end brings CPython's schedule back, once.

Thresholds someone else set are theirs: a batch that finds full collections already off
leaves them, and one that finds its setting changed when it ends does not set it back.
"""

from __future__ import annotations

import functools
import gc
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

OFF = 1 << 30  # threshold2 while collections wait: never reached
MAX_DEFER_S = 60.0


class _State:
    lock = threading.Lock()
    depth = 0  # batches running now (threads and nesting alike)
    saved: int | None = None  # threshold2 before the first batch turned collections off
    since = 0.0


def hold() -> None:
    """Full collections wait until the matching `release()` (and every other batch's end)."""
    with _State.lock:
        if _State.depth == 0:
            t0, t1, t2 = gc.get_threshold()
            if t2 < OFF:
                _State.saved, _State.since = t2, time.monotonic()
                gc.set_threshold(t0, t1, OFF)
        _State.depth += 1


def release() -> None:
    """A `hold()` ends; the last to end gives CPython its schedule back and runs the full
    collection that fell due meanwhile, if one did."""
    with _State.lock:
        if _State.depth == 0:
            raise RuntimeError("batch_gc.release() without a hold")
        _State.depth -= 1
        if _State.depth == 0 and _State.saved is not None:
            saved, _State.saved = _State.saved, None
            t0, t1, t2 = gc.get_threshold()
            if t2 == OFF:  # still ours
                gc.set_threshold(t0, t1, saved)
                _collect_if_due(saved)


@contextmanager
def deferred() -> Iterator[None]:
    """Full collections wait until the outermost batch ends."""
    hold()
    try:
        yield
    finally:
        release()


def batch(fn: F) -> F:
    """`fn` runs as one batch (`deferred`)."""
    @functools.wraps(fn)
    def wrapped(*a: Any, **k: Any) -> Any:
        with deferred():
            return fn(*a, **k)

    return wrapped  # type: ignore[return-value]


def valve(every: float | None = None) -> None:
    """A batch's checkpoint: once `every` seconds (MAX_DEFER_S) have passed since collections
    began to wait (or the last one), a full collection runs now."""
    limit = MAX_DEFER_S if every is None else every
    with _State.lock:
        saved = _State.saved
        if saved is None or time.monotonic() - _State.since < limit:
            return
        _State.since = time.monotonic()
    _collect_if_due(saved)


def waiting() -> bool:
    """A batch has full collections waiting."""
    return _State.saved is not None


def _collect_if_due(saved: int) -> None:
    # gc.get_count()[2]: middle-generation collections since the last full one, what CPython
    # compares with threshold2
    if gc.get_count()[2] > saved:
        gc.collect()


__all__ = ["MAX_DEFER_S", "OFF", "batch", "deferred", "hold", "release", "valve", "waiting"]
