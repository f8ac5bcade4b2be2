"""Keyboard use of the window. Window shortcuts from any focus: a text field claims some Ctrl
keys for itself (Ctrl+E moves to the end of the line), so a key bound to one of the window's
actions is not let through to the field; standard editing keys stay the field's. One Tab order
through every control and every stage table (top to bottom, left to right, as the window
reads), kept when panels add widgets, and Alt+N to jump to stage N. Tables never trap Tab
(tabKeyNavigation is off wherever one is made)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QWidget,
)

EDITING = {QKeySequence(k).toString() for k in ("Ctrl+A", "Ctrl+C", "Ctrl+V", "Ctrl+X",
                                                "Ctrl+Z", "Ctrl+Y", "Ctrl+Shift+Z")}


class ShortcutGuard(QObject):
    """Application event filter for one window."""

    def __init__(self, win: QWidget) -> None:
        super().__init__(win)
        self.win = win
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def bound(self) -> set[str]:
        return {seq.toString() for act in self.win.actions() for seq in act.shortcuts()
                if act.isEnabled()} - EDITING

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt naming
        if event.type() != QEvent.Type.ShortcutOverride or not isinstance(event, QKeyEvent):
            return False
        if not isinstance(obj, QLineEdit | QAbstractSpinBox | QComboBox):
            return False
        if obj.window() is not self.win:
            return False
        pressed = QKeySequence(event.keyCombination()).toString()
        if pressed in self.bound():
            event.ignore()  # not overridden: the window's shortcut fires
            return True
        return False


MAX_STAGE_KEYS = 9  # Alt+1 .. Alt+9


def tab_chain(win: Any) -> list[QWidget]:
    """Every focusable control in reading order (hidden ones are skipped by Qt itself)."""
    qb = win.query_bar
    chain: list[QWidget] = [qb.table, qb.suggested, qb.text, qb.example]
    row = qb._query_row
    chain += [row.itemAt(i).widget() for i in range(row.count())
              if row.itemAt(i).widget() not in (None, qb.text, qb.example, qb.stale,
                                                qb.run_button)]
    chain += [qb.run_button, qb.preset, qb.limit]
    chain += win.question_bar.focus_chain()
    chain += [b for b in win.error_bar.findChildren(QAbstractButton)]
    notices = win.notices
    for i in range(notices.count()):
        w = notices.itemAt(i).widget()
        if w is not None:
            chain += [b for b in w.findChildren(QAbstractButton)]
    chain += win.banner.findChildren(QAbstractButton)
    chain += [w for w in win.index_bar.findChildren(QWidget)
              if isinstance(w, QAbstractButton | QAbstractSpinBox)]
    chain += win.sliders.focus_chain()
    for sec in win.stages.sections:
        chain += [sec.toggle, sec.table]
    chain += [win.scatter_box.plot, win.bump_box.plot]  # once built (never builds them)
    chain += [win.detail_scroll, win.detail.columns, win.expected.entry]
    seen: set[int] = set()
    out = []
    for w in chain:
        if w is not None and id(w) not in seen and w.focusPolicy() & Qt.FocusPolicy.TabFocus:
            seen.add(id(w))
            out.append(w)
    return out


class TabOrder:
    """Applies the chain whenever the set of widgets in it changed (a new lane, fix buttons,
    a pipeline's sections). Reading the chain walks every panel (~0.6 ms), so an answer asks
    for it `later`: once, after the frame that shows the answer is painted."""

    def __init__(self, win: Any) -> None:
        self.win = win
        self._key: tuple[int, ...] = ()
        # a timer, not a queued call: a queued call runs before the paint (Qt posts a
        # window's update request at low priority), a timer's turn comes after it
        self._timer = QTimer(win, singleShot=True, interval=0)
        self._timer.timeout.connect(self.apply)

    def later(self) -> None:
        """`apply` once the events queued now are done (the answer's paint among them); a
        burst of answers applies it once. A Tab pressed after that follows the new chain."""
        if not self._timer.isActive():
            self._timer.start()

    def apply(self) -> None:
        chain = tab_chain(self.win)
        key = tuple(id(w) for w in chain)
        if key == self._key:
            return
        self._key = key
        for a, b in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(a, b)


def go_to_stage(win: Any, n: int) -> QWidget | None:
    """Focus stage n (1-based) of the pipeline on screen, opening it."""
    sec = win.stages.open_stage(n - 1)
    if sec is None:
        return None
    table = sec.table
    if not table.currentIndex().isValid() and table.model().rowCount() > 0:
        table.setCurrentIndex(table.model().index(0, 0))
    return table


def install(win: Any) -> TabOrder:
    """The stage shortcuts (View › Go to stage N) and the Tab order."""
    menu = win.menu("view").addMenu("&Go to stage")
    for n in range(1, MAX_STAGE_KEYS + 1):
        act = QAction(f"Stage {n}", win)
        act.setShortcut(QKeySequence(f"Alt+{n}"))
        act.setToolTip(f"Focus the table of stage {n} (opening it)")
        act.triggered.connect(lambda _=False, k=n: go_to_stage(win, k))
        menu.addAction(act)
        win.addAction(act)
        act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    order = TabOrder(win)
    order.apply()
    return order
