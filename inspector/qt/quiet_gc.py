"""Python's full garbage collections wait until the window rests.

CPython collects its oldest generation once enough objects have survived the younger ones
(after `threshold2` middle-generation collections, and a quarter more long-lived objects). A
full collection walks every tracked object with the GIL held. A live session makes a new list
of rows for each stage on every tick and keeps its recent answers, so about one tick in twenty
paid one: 40 to over 300 ms at a 1,000-row pool on the bench's machine, longer the more the
process holds. That is a slider that sticks.

While the question keeps changing (`poke`: a slider's tick, a typed value), automatic full
collections are off. Once it has rested for QUIET_MS, the full collection that fell due in
the meantime runs (if one did), and CPython's own schedule is back. A change that never rests
(a slider held down for minutes) still gets one every MAX_DEFER_S (a minute). The young
generations are collected as always: each is a fraction of a millisecond.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QCoreApplication, QTimer

QUIET_MS = 400  # the question unchanged this long: the window rests
# a change that never rests still collects this often: a tick leaves little garbage that only a
# full collection frees (a few hundred objects over a bench's 120 ticks), so waiting is cheap
MAX_DEFER_S = 60.0
_OFF = 1 << 30  # threshold2 while deferred: never reached


class _State:
    saved: int | None = None  # threshold2 while collections wait; None: not waiting
    since = 0.0  # when they began to wait, or the last collection while waiting
    timer: QTimer | None = None  # the wait for the rest, on the application it belongs to


def _timer() -> QTimer | None:
    """The rest's timer, made on the running application (a new one after an application was
    replaced: the waiting state is kept here, not on the old one's objects)."""
    app = QCoreApplication.instance()
    if app is None:
        return None
    t = _State.timer
    try:
        if t is not None and t.parent() is app:
            return t
    except RuntimeError:  # deleted with its application
        pass
    t = _State.timer = QTimer(app, singleShot=True)
    t.timeout.connect(rest)
    return t


def poke() -> None:
    """The question changed: full collections wait until it rests."""
    timer = _timer()
    if timer is None:
        return
    t0, t1, t2 = gc.get_threshold()
    if _State.saved is None:
        if t2 >= _OFF:
            return  # someone else turned them off: not ours to turn back on
        _State.saved, _State.since = t2, time.monotonic()
        gc.set_threshold(t0, t1, _OFF)
    elif time.monotonic() - _State.since >= MAX_DEFER_S:
        _collect_if_due()
        _State.since = time.monotonic()
    timer.start(QUIET_MS)  # (re)start the wait for the rest


def rest() -> None:
    """The window rests: CPython's schedule is back, and a collection that fell due runs now."""
    if _State.saved is None:
        return
    try:
        if _State.timer is not None:
            _State.timer.stop()
    except RuntimeError:  # deleted with its application
        _State.timer = None
    t0, t1, _ = gc.get_threshold()
    gc.set_threshold(t0, t1, _State.saved)
    _collect_if_due()
    _State.saved = None


def waiting() -> bool:
    """Full collections are waiting for the window to rest."""
    return _State.saved is not None


def _collect_if_due() -> None:
    # gc.get_count()[2]: middle-generation collections since the last full one, the count
    # CPython compares with threshold2 (it also waits for a quarter more long-lived objects;
    # a rest collects at most once, so this is never more often than once a rest)
    if _State.saved is not None and gc.get_count()[2] > _State.saved:
        gc.collect()
