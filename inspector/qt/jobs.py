"""The window's one job mechanism: latest-wins background jobs on the global thread pool.

Each job runs on a named channel. Starting a job supersedes the channel's previous one: its
cancel flag is set (long core work polls it and stops early) and its answer, if it still
arrives, is dropped on the GUI thread by comparing generations. A job may be delayed
(debounced: a newer start restarts the delay). The mechanism knows when nothing is pending or
running, emits `went_idle`, and offers `wait_idle` for tests and scripts.

A job function may take keyword hooks: `cancelled` (a callable that turns true once the job is
superseded or cancelled) and, for generator functions, each yielded value reaches `on_yield`.

Full garbage collections are scheduled here too (`gc_wait`, `gc_rest`): they wait until the
window rests, so no slider tick pays one (see the section below).
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal
from superqt.utils import create_worker

from inspector.core import batch_gc
from inspector.core.errors import InspectorError

Done = Callable[[Any], None]
Failed = Callable[[str], None]


@dataclass
class _Slot:
    generation: int = 0
    cancel: threading.Event = field(default_factory=threading.Event)
    running: bool = False
    worker: Any = None
    timer: QTimer | None = None


def job_message(exc: BaseException) -> str:
    """What the error bar says of a job's exception."""
    if isinstance(exc, InspectorError):
        return str(exc)
    return f"Unexpected {type(exc).__name__}: {exc}"


class Jobs(QObject):
    """Latest-wins jobs by channel, with busy state, cancellation and an idle signal."""

    failed = Signal(object)  # the exception of any job that failed (not superseded)
    busy_changed = Signal(bool)  # any channel
    channel_changed = Signal(str, bool)  # one channel started (True) or settled (False)
    went_idle = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._slots: dict[str, _Slot] = {}
        self._busy = False
        self._channel_busy: dict[str, bool] = {}

    # ---- starting and stopping ----
    def start(self, channel: str, fn: Callable[..., Any], *args: Any, on_done: Done,
              on_error: Failed | None = None, on_yield: Callable[[Any], None] | None = None,
              delay_ms: int = 0) -> int:
        """Run fn(*args) for `channel`, superseding its previous job; on_done(value) or
        on_error(message) run on the GUI thread only if no newer job started meanwhile.
        Returns the job's generation."""
        slot = self._slots.setdefault(channel, _Slot())
        self._supersede(slot)
        gen = slot.generation
        if delay_ms > 0:
            slot.timer = QTimer(self, singleShot=True, interval=delay_ms)
            slot.timer.timeout.connect(lambda: self._launch(channel, gen, fn, args, on_done,
                                                            on_error, on_yield))
            slot.timer.start()
            self._update()
        else:
            self._launch(channel, gen, fn, args, on_done, on_error, on_yield)
        return gen

    def cancel(self, channel: str) -> None:
        """Stop the channel's job: no answer will be delivered."""
        slot = self._slots.get(channel)
        if slot is not None:
            self._supersede(slot)
            self._update()

    def stop(self, channel: str) -> None:
        """Ask the channel's job to stop early but still deliver what it has (a sweep keeps
        the queries done so far)."""
        slot = self._slots.get(channel)
        if slot is not None:
            slot.cancel.set()

    def cancel_all(self) -> None:
        for channel in list(self._slots):
            self.cancel(channel)

    def _supersede(self, slot: _Slot) -> None:
        slot.generation += 1
        slot.cancel.set()
        slot.cancel = threading.Event()
        if slot.timer is not None:
            slot.timer.stop()
            slot.timer.deleteLater()
            slot.timer = None
        slot.running = False

    def _launch(self, channel: str, gen: int, fn: Callable[..., Any], args: tuple[Any, ...],
                on_done: Done, on_error: Failed | None,
                on_yield: Callable[[Any], None] | None) -> None:
        slot = self._slots[channel]
        if gen != slot.generation:
            return
        if slot.timer is not None:
            slot.timer.deleteLater()
            slot.timer = None
        kwargs = {"cancelled": slot.cancel.is_set} if _takes(fn, "cancelled") else {}
        worker = create_worker(fn, *args, _start_thread=False, _ignore_errors=True, **kwargs)
        current = lambda: gen == slot.generation  # noqa: E731

        def returned(value: Any) -> None:
            if current():
                slot.running = False
                self._update()
                on_done(value)

        def errored(exc: BaseException) -> None:
            if current():
                slot.running = False
                self._update()
                (on_error or (lambda _m: None))(job_message(exc))
                self.failed.emit(exc)

        worker.returned.connect(returned)
        worker.errored.connect(errored)
        if on_yield is not None and hasattr(worker, "yielded"):
            worker.yielded.connect(lambda v: current() and on_yield(v))
        slot.worker, slot.running = worker, True
        self._update()
        worker.start()

    # ---- state ----
    def busy(self, channel: str | None = None) -> bool:
        """True while the channel (or any channel) has a job pending or running."""
        slots = [self._slots[channel]] if channel in self._slots else \
            ([] if channel is not None else list(self._slots.values()))
        return any(s.running or s.timer is not None for s in slots)

    def _update(self) -> None:
        for channel in list(self._slots):
            on = self.busy(channel)
            if on != self._channel_busy.get(channel, False):
                self._channel_busy[channel] = on
                self.channel_changed.emit(channel, on)
        busy = self.busy()
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)
            if not busy:
                self.went_idle.emit()

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Spin the event loop until no job is pending or running (tests and scripts)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            QCoreApplication.processEvents()
            if not self.busy():
                QCoreApplication.processEvents()
                if not self.busy():
                    return
            time.sleep(0.005)
        raise InspectorError(f"The window did not settle within {timeout:.0f} s.")


def _takes(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# ---- full garbage collections wait until the window rests --------------------------------------
# CPython collects its oldest generation once enough objects have survived the younger ones
# (after `threshold2` middle-generation collections, and a quarter more long-lived objects). A
# full collection walks every tracked object with the GIL held. A live session makes a new list
# of rows for each stage on every tick and keeps its recent answers, so about one tick in twenty
# paid one: 40 to over 300 ms at a 1,000-row pool on the bench's machine, longer the more the
# process holds. That is a slider that sticks.
#
# While the question keeps changing (`gc_wait`: a slider's tick, a typed value), automatic full
# collections are off. Once it has rested for GC_QUIET_MS, the full collection that fell due in
# the meantime runs (if one did), and CPython's own schedule is back. A change that never rests
# (a slider held down for minutes) still gets one every GC_MAX_DEFER_S (a minute). The young
# generations are collected as always: each is a fraction of a millisecond.
GC_QUIET_MS = 400  # the question unchanged this long: the window rests
# a change that never rests still collects this often: a tick leaves little garbage that only a
# full collection frees (a few hundred objects over a bench's 120 ticks), so waiting is cheap
GC_MAX_DEFER_S = batch_gc.MAX_DEFER_S


class _GcState:
    held = False  # the window holds full collections (`batch_gc.hold`) until it rests
    timer: QTimer | None = None  # the wait for the rest, on the application it belongs to


def _gc_timer() -> QTimer | None:
    """The rest's timer, made on the running application (a new one after an application was
    replaced: the waiting state is kept here, not on the old one's objects)."""
    app = QCoreApplication.instance()
    if app is None:
        return None
    t = _GcState.timer
    try:
        if t is not None and t.parent() is app:
            return t
    except RuntimeError:  # deleted with its application
        pass
    t = _GcState.timer = QTimer(app, singleShot=True)
    t.timeout.connect(gc_rest)
    return t


def gc_wait() -> None:
    """The question changed: full collections wait until it rests (one `batch_gc.hold` for the
    whole burst; a sweep or an audit running meanwhile holds them too, and the last to end
    brings them back)."""
    timer = _gc_timer()
    if timer is None:
        return
    if not _GcState.held:
        _GcState.held = True
        batch_gc.hold()
    else:
        batch_gc.valve(GC_MAX_DEFER_S)
    timer.start(GC_QUIET_MS)  # (re)start the wait for the rest


def gc_rest() -> None:
    """The window rests: its hold ends (`batch_gc.release`: CPython's schedule is back unless a
    batch still holds, and a collection that fell due runs now)."""
    if not _GcState.held:
        return
    try:
        if _GcState.timer is not None:
            _GcState.timer.stop()
    except RuntimeError:  # deleted with its application
        _GcState.timer = None
    _GcState.held = False
    batch_gc.release()


def gc_waiting() -> bool:
    """Full collections are waiting for the window to rest."""
    return _GcState.held and batch_gc.waiting()
