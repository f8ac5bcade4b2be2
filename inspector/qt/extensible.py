"""The main window's extension points: add-ons put menus, actions, notices, docks and query
controls in by id, never by finding layouts or labels, and follow the theme through
`tokens_changed` (the one theming path)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QVBoxLayout, QWidget

from inspector.qt import fit


class ExtensibleWindow(QMainWindow):
    """Registries of menus and actions by id, a notices area, docks under one rule."""

    tokens_changed = Signal(object)  # theme.Tokens, after every theme change

    def __init__(self) -> None:
        super().__init__()
        self._menus: dict[str, QMenu] = {}
        self._actions: dict[str, QAction] = {}
        self._open_handler: Any = None
        self.notices = QVBoxLayout()  # placed by the subclass's layout
        self.notices.setSpacing(4)
        self.dock_areas: dict[QDockWidget, Qt.DockWidgetArea] = {}
        self.yielding: list[QWidget] = []  # hidden while a docked dock needs their room
        self.query_bar: Any = None  # the subclass's QueryBar (has add_widget)

    def menu(self, menu_id: str) -> QMenu:
        """A menu by id: file, query, view, help, or one an add-on added."""
        return self._menus[menu_id]

    def add_menu(self, menu_id: str, title: str, before: str | None = "help") -> QMenu:
        menu = QMenu(title, self)
        anchor = self._menus.get(before) if before else None
        if anchor is not None:
            self.menuBar().insertMenu(anchor.menuAction(), menu)
        else:
            self.menuBar().addMenu(menu)
        self._menus[menu_id] = menu
        return menu

    def action(self, action_id: str) -> QAction:
        return self._actions[action_id]

    def add_action(self, menu_id: str, act: QAction, action_id: str | None = None,
                   before: str | None = None) -> QAction:
        """Put an action in a menu (before another action, by id) and keep its shortcut
        working from any focus, even with the menu bar hidden."""
        menu = self._menus[menu_id]
        anchor = self._actions.get(before) if before else None
        if anchor is not None:
            menu.insertAction(anchor, act)
        else:
            menu.addAction(act)
        self.addAction(act)
        act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if action_id:
            self._actions[action_id] = act
        return act

    def add_notice(self, widget: QWidget) -> None:
        """A notice bar under the error bar (newer version, shape suggestion, ...)."""
        self.notices.addWidget(widget)

    def add_dock(self, dock: QDockWidget, area: Qt.DockWidgetArea) -> None:
        """Add a dock that follows the window's one dock rule (fit.place_dock): docked when
        the stages keep a usable size beside it, floating over the window otherwise. The
        dock starts hidden (its toggle action or `show()` opens it): deciding where it goes
        must not flash it on the screen or build what it shows."""
        dock.hide()
        self.addDockWidget(area, dock)
        self.dock_areas[dock] = area
        fit.prepare_docks(self, {dock: area})
        dock.visibilityChanged.connect(
            lambda on, d=dock, a=area: fit.size_docked(self, d, a) if on else fit.make_way(self))

    def add_query_widget(self, widget: QWidget) -> None:
        """A control in the query row, before the Run button."""
        self.query_bar.add_widget(widget)

    def set_open_handler(self, handler: Any) -> None:
        """What File > Open… (Ctrl+O) does."""
        self._open_handler = handler

    def _action(self, text: str, slot: Any, keys: tuple[str, ...] = (), tip: str = "") -> QAction:
        act = QAction(text, self)
        if keys:
            act.setShortcuts([QKeySequence(k) for k in keys])
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(tip)
        act.triggered.connect(slot)
        self.addAction(act)  # shortcuts work even when the menu bar is hidden
        return act

