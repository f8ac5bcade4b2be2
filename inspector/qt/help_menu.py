"""Help menu: the tour of the demo store's stories (qt/tour/), the keyboard
shortcuts and a command palette, both read from the window's own actions (so an action an
add-on registers appears in them by itself), and About with the version."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

import inspector
from inspector.qt.tour.panel import TourPanel
from inspector.qt.tour.steps import TOUR

__all__ = ["TOUR", "TourPanel", "install", "shortcut_rows"]  # TOUR: tests and the gallery


def _words(text: str) -> str:
    """A menu text without its mnemonic marks ("&&" is a literal "&")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


@dataclass(frozen=True)
class Command:
    """One of the window's actions as the palette and the shortcuts list show it."""

    path: str  # the menus it sits in, "View › Theme"; "" for an action in no menu
    text: str
    keys: str  # its shortcuts, as the platform writes them
    action: QAction

    @property
    def name(self) -> str:
        return f"{self.path} › {self.text}" if self.path else self.text


def commands(win: Any) -> list[Command]:
    """Every action the window holds, in menu order (the menu bar's, then those bound to the
    window alone), read from the actions themselves at the time of asking."""
    found: list[Command] = []
    seen: set[int] = set()

    def add(act: QAction, path: str) -> None:
        if act.isSeparator() or not act.text() or id(act) in seen:
            return
        seen.add(id(act))
        keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                         for k in act.shortcuts())
        found.append(Command(path, _words(act.text()), keys, act))

    def walk(menu: QMenu, path: str) -> None:
        for act in menu.actions():
            sub = act.menu()
            if isinstance(sub, QMenu):
                seen.add(id(act))
                walk(sub, f"{path} › {_words(sub.title())}" if path else _words(sub.title()))
            elif act.isVisible():
                add(act, path)

    for top in win.menuBar().actions():
        if isinstance(top.menu(), QMenu):
            walk(top.menu(), _words(top.menu().title()))
    suggested = getattr(win.query_bar, "suggested", None)  # the store's stories
    if suggested is not None and suggested.isVisible() and suggested.menu() is not None:
        walk(suggested.menu(), _words(suggested.text()))
    for act in win.actions():
        add(act, "")
    return found


def shortcut_rows(win: Any) -> list[tuple[str, str]]:
    """(what, keys) for every window action with a shortcut, from the actions themselves."""
    rows = {c.text: c.keys for c in commands(win) if c.keys}
    return sorted(rows.items(), key=lambda r: r[0].lower())


def matches(command: Command, typed: str) -> bool:
    """Every word typed appears in the command's menu path, name or keys (any case)."""
    hay = f"{command.name} {command.keys}".lower()
    return all(w in hay for w in typed.lower().split())


class CommandPalette(QDialog):
    """Every action of the window by name, with its shortcut: type to filter, Up and Down to
    choose, Enter runs it, Esc closes. Read afresh each time it opens."""

    def __init__(self, win: Any) -> None:
        super().__init__(win)
        self.setObjectName("commandPalette")
        self.setWindowTitle("Command palette")
        self.win = win
        self.all: list[Command] = []
        self.field = QLineEdit(self, objectName="paletteField")
        self.field.setPlaceholderText("Type an action's name; Enter runs it, Esc closes")
        self.list = QTreeWidget(self, objectName="paletteList")
        self.list.setColumnCount(2)
        self.list.setHeaderHidden(True)
        self.list.setRootIsDecorated(False)
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the field keeps the keyboard
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.field.textChanged.connect(self.refill)
        self.field.returnPressed.connect(self.run_current)
        self.field.installEventFilter(self)
        self.list.itemActivated.connect(lambda item, _c: self.run(item))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 8, 8, 8)
        lay.addWidget(self.field)
        lay.addWidget(self.list, 1)

    def open_palette(self) -> None:
        me = self.win.action("palette")
        self.all = [c for c in commands(self.win) if c.action is not me]
        self.field.clear()
        self.refill()
        width = min(640, max(420, self.win.width() // 2))
        self.resize(width, min(460, max(260, self.win.height() * 2 // 3)))
        top = self.win.mapToGlobal(self.win.rect().topLeft())
        self.move(top.x() + (self.win.width() - width) // 2, top.y() + 60)
        self.show()
        self.raise_()
        self.activateWindow()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def shown(self) -> list[str]:
        """The names the list shows now, in order."""
        return [self.list.topLevelItem(i).text(0) for i in range(self.list.topLevelItemCount())]

    def refill(self) -> None:
        self.list.clear()
        first = None
        for c in (c for c in self.all if matches(c, self.field.text())):
            item = QTreeWidgetItem([c.name, c.keys])
            item.setData(0, Qt.ItemDataRole.UserRole, c.action)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if not c.action.isEnabled():
                item.setFlags(Qt.ItemFlag.NoItemFlags)
                item.setToolTip(0, "Not available now")
            elif first is None:
                first = item
            self.list.addTopLevelItem(item)
        if first is not None:
            self.list.setCurrentItem(first)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt naming
        """Up, Down, Page Up and Page Down in the field move the list's choice."""
        if obj is self.field and event.type() == QEvent.Type.KeyPress \
                and isinstance(event, QKeyEvent) and event.key() in (
                    Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
            QApplication.sendEvent(self.list, QKeyEvent(event.type(), event.key(),
                                                        event.modifiers()))
            return True
        return False

    def run_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.run(item)

    def run(self, item: QTreeWidgetItem) -> None:
        act = item.data(0, Qt.ItemDataRole.UserRole)
        if not isinstance(act, QAction) or not act.isEnabled():
            return
        self.hide()
        self.win.activateWindow()  # the action finds the focus where it was, in the window
        QTimer.singleShot(0, act.trigger)


class ShortcutsDialog(QDialog):
    def __init__(self, win: Any) -> None:
        super().__init__(win)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(win)
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.table.setHorizontalHeaderLabels(["Action", "Keys"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, (what, keys) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(what))
            self.table.setItem(r, 1, QTableWidgetItem(keys))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.resizeColumnToContents(1)
        note = QLabel("Sliders: arrows move one step, Page Up/Down a big step, Home/End the "
                      "ends. Shortcuts work from any field.")
        note.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table, 1)
        lay.addWidget(note)
        self.resize(460, 520)


def about_text() -> str:
    return (f"<b>Memory-store inspector {inspector.__version__}</b><p>See a memory store's "
            "retrieval pipeline stage by stage: raw, scoped, blended and final, with live "
            "over-fetch and blend sliders.</p><p>The same engine as <tt>inspector query"
            "</tt>.</p>")


def install(win: Any) -> None:
    """Help › Tour, Command palette, Keyboard shortcuts, About."""
    def act(text: str, slot: Callable[[], Any], keys: tuple[str, ...] = ()) -> QAction:
        a = QAction(text, win)
        a.setShortcuts([QKeySequence(k) for k in keys])
        a.triggered.connect(slot)
        return a

    def show(dialog: QWidget) -> None:
        dialog.show()
        dialog.raise_()

    win.tour = TourPanel(win)
    win.add_notice(win.tour)
    win.tokens_changed.connect(win.tour.set_tokens)
    win.shortcuts_dialog = None
    win.about_box = QMessageBox(QMessageBox.Icon.NoIcon, "About", about_text(),
                                QMessageBox.StandardButton.Close, win)
    win.about_box.setTextFormat(Qt.TextFormat.RichText)

    def shortcuts() -> None:
        win.shortcuts_dialog = ShortcutsDialog(win)  # read the actions as they are now
        show(win.shortcuts_dialog)

    win.add_action("help", act("&Tour of the demo stories", win.tour.start), "tour")
    win.command_palette = CommandPalette(win)
    win.add_action("help", act("Command &palette…", win.command_palette.open_palette,
                               ("Ctrl+Shift+P", "Ctrl+K")), "palette")
    win.add_action("help", act("&Keyboard shortcuts", shortcuts, ("Ctrl+/",)), "shortcuts")
    win.add_action("help", act("&About", lambda: show(win.about_box)), "about")
