"""Notice a store that changes while it is open: a cheap check in a worker every few seconds
(only while the window is visible), and a non-modal notice offering to reload. Answers stay on
the pinned version until the user reloads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from inspector.qt.jobs import Jobs
from inspector.qt.stores.store_jobs import Newer, newer_job
from inspector.qt.theme import LIGHT, Tokens

POLL_MS = 5000


class NoticeBar(QFrame):
    """A one-line, non-modal notice with optional action buttons and a dismiss cross."""

    dismissed = Signal()

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName=name)
        self.label = QLabel("", objectName="noticeText")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._buttons: list[QPushButton] = []
        self._lay = QHBoxLayout(self)
        self._lay.setContentsMargins(10, 3, 4, 3)
        self._lay.setSpacing(6)
        self._lay.addWidget(self.label, 1)
        close = QToolButton(text="✕", objectName="noticeClose")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self._dismiss)
        self.close_button = close
        self._lay.addWidget(close)
        self._kind = "info"
        self.set_tokens(LIGHT)
        self.hide()

    def show_notice(self, html: str, actions: tuple[tuple[str, Callable[[], None]], ...] = (),
                    kind: str = "info", tokens: Tokens | None = None) -> None:
        """Replace the text and buttons; kind is 'info' or 'warn' (the background)."""
        for b in self._buttons:
            b.deleteLater()
        self._buttons = []
        for n, (text, slot) in enumerate(actions):
            b = QPushButton(text, self, objectName=f"noticeAction{n}")
            b.clicked.connect(lambda _=False, s=slot: s())
            self._lay.insertWidget(self._lay.count() - 1, b)
            self._buttons.append(b)
        self.label.setText(html)
        self._kind = kind
        self.set_tokens(tokens or LIGHT)
        self.show()

    def button(self, n: int = 0) -> QPushButton:
        return self._buttons[n]

    def _dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()

    def set_tokens(self, tk: Tokens) -> None:
        bg = tk.warn_bg if self._kind == "warn" else tk.ok_bg
        self.setStyleSheet(f"QFrame#{self.objectName()} {{ background: {bg}; "
                           f"border-radius: 6px; }} QFrame#{self.objectName()} QLabel "
                           f"{{ color: {tk.text}; }}")


class StoreWatch(QObject):
    """Polls the open store for a newer version while `window` is visible."""

    newer_found = Signal(object)  # Newer
    poll_failed = Signal(str)  # one sentence

    def __init__(self, store_of: Callable[[], Any], window: QWidget, jobs: Jobs,
                 interval_ms: int = POLL_MS) -> None:
        super().__init__(window)
        self._store_of = store_of
        self._jobs = jobs
        self._window = window
        self.timer = QTimer(self, interval=interval_ms)
        self.timer.timeout.connect(self.check)
        self._asked: Any = None
        self.last: Newer | None = None
        window.installEventFilter(self)
        if window.isVisible():
            self.timer.start()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._window:
            kind = event.type()
            if kind == QEvent.Type.Show:
                self.timer.start()
            elif kind in (QEvent.Type.Hide, QEvent.Type.Close):
                self.timer.stop()
        return False

    def check(self) -> None:
        """Ask once, in a worker; skipped while a check is in flight or the window is hidden."""
        store = self._store_of()
        if store is None or self._jobs.busy("newer") or not self._window.isVisible() \
                or self._window.isMinimized():
            return
        self._asked = store
        self._jobs.start("newer", newer_job, store, on_done=self._answered,
                         on_error=self._failed)

    def _answered(self, newer: Newer) -> None:
        if self._asked is not self._store_of():
            return  # the store was reopened meanwhile
        if newer.changed:
            self.last = newer
            self.newer_found.emit(newer)

    def _failed(self, message: str) -> None:
        """A failed poll (store moved, network down) is said once in the window's status."""
        self.poll_failed.emit(message)

    def stop(self) -> None:
        self.timer.stop()
