"""Window shortcuts from any focus: a text field claims some Ctrl keys for itself (Ctrl+E
moves to the end of the line), so a key bound to one of the window's actions is not let
through to the field; standard editing keys stay the field's."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QLineEdit, QWidget

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
