"""Help menu: a tour that walks the demo store's two stories in the real window, a list of
keyboard shortcuts read from the window's own actions, and About with the version."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

import inspector
from inspector.qt.theme import LIGHT, Tokens


@dataclass(frozen=True)
class Step:
    story: str
    sentence: str
    apply: Callable[[Any], None]


def open_demo_story(win: Any, n: int) -> None:
    """One of the demo store's suggested queries (opening the demo store first if
    another store is open), and its answer: the next step changes a parameter, and a change
    made while the query is in flight re-ranks the previous query's rows."""
    opened = win.vm.opened
    if opened is None or not opened.demo or win.vm.store is None:
        win.vm.open_store(None, then="none")
        win.vm.jobs.wait_idle(60.0)
    win.vm.load_suggested(n)
    win.vm.jobs.wait_idle(60.0)


def _first_raw(win: Any) -> None:
    trace = win.vm.trace
    if trace is not None and len(trace.stage("raw").rows):
        win.vm.select(trace.pool.ids[int(trace.stage("raw").rows[0])])


def _select_expected(win: Any) -> None:
    if win.vm.expected:
        win.vm.select(win.vm.expected[0])


TOUR = (
    Step("Scoped miss", "A docs search scoped to vault-agent returns nothing: the scope filter "
         "runs after a global top 10.", lambda w: open_demo_story(w, 0)),
    Step("Scoped miss", "All 10 raw candidates come from other repos; the scope column says "
         "which rule removed each.", _first_raw),
    Step("Scoped miss", "Over-fetch 2.5 fetches 25 candidates, deep enough for the first "
         "vault-agent doc to be returned.", lambda w: w.vm.set_param("overfetch", 2.5)),
    Step("Scoped miss", "Back at over-fetch 1, pushing the scope into the search returns "
         "vault-agent docs at once.", lambda w: (w.vm.set_param("overfetch", 1.0),
                                                 w.vm.set_param("filter", "pushdown"))),
    Step("Importance", "At blend weight 0 ranking ignores importance: the low-importance "
         "memory ranks first.", lambda w: open_demo_story(w, 1)),
    Step("Importance", "Blend weight 0.5 multiplies each score by 0.5 + 0.5 × importance: "
         "the expected memory overtakes it.", lambda w: w.vm.set_param("blend", 0.5)),
    Step("Importance", "The rank-shift chart shows who moved; the detail pane shows this "
         "row's score step by step.", _select_expected),
)


class TourPanel(QFrame):
    """The tour as a bar at the top of the window: where it is, one sentence, Back and Next;
    each step is applied in the real window. A bar rather than a floating panel: on a laptop
    screen a panel over the window hid the very chart or table a step talks about."""

    def __init__(self, win: Any) -> None:
        super().__init__(win, objectName="tourPanel")
        self.win = win
        self.step = -1
        self.where = QLabel("", objectName="sectionTitle")
        self.sentence = QLabel("", objectName="tourSentence")
        self.sentence.setWordWrap(True)
        self.back = QPushButton("Back")
        self.next = QPushButton("Next")
        done = QPushButton("End tour")
        self.back.clicked.connect(lambda: self.go(self.step - 1))
        self.next.clicked.connect(lambda: self.go(self.step + 1))
        done.clicked.connect(self.hide)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 3, 4, 3)
        lay.setSpacing(8)
        lay.addWidget(self.where)
        lay.addWidget(self.sentence, 1)
        for b in (self.back, self.next, done):
            lay.addWidget(b)
        self.set_tokens(LIGHT)
        self.hide()

    def set_tokens(self, tk: Tokens) -> None:
        self.setStyleSheet(f"QFrame#tourPanel {{ background: {tk.surface}; border: 1px solid "
                           f"{tk.accent}; border-radius: 6px; }} QFrame#tourPanel QLabel "
                           f"{{ color: {tk.text}; }}")

    def go(self, n: int) -> None:
        """Show and apply step n (0-based). Going back re-applies the story from its start,
        so every step shows the window as the sentence says."""
        n = max(0, min(n, len(TOUR) - 1))
        if n == self.step + 1:
            replay = [n]
        else:  # back, or a jump: the story's steps from its start
            start = max(k for k in range(n + 1) if k == 0 or TOUR[k].story != TOUR[k - 1].story)
            replay = list(range(start, n + 1))
        self.setEnabled(False)  # while a story's query is awaited, no second click
        try:
            for k in replay:
                TOUR[k].apply(self.win)
        finally:
            self.setEnabled(True)
        self.step = n
        s = TOUR[n]
        self.where.setText(f"{s.story} · step {n + 1} of {len(TOUR)}")
        self.sentence.setText(s.sentence)
        self.back.setEnabled(n > 0)
        self.next.setEnabled(n < len(TOUR) - 1)

    def start(self, step: int = 0) -> None:
        """Show the bar and apply the tour up to `step` (0-based)."""
        self.show()
        self.go(step)


def shortcut_rows(win: Any) -> list[tuple[str, str]]:
    """(what, keys) for every window action with a shortcut, from the actions themselves."""
    rows = {}
    for act in win.findChildren(QAction):
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in act.shortcuts()]
        if keys and act.text():
            rows[act.text().replace("&", "")] = ", ".join(keys)
    return sorted(rows.items(), key=lambda r: r[0].lower())


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
    """Help › Tour, Keyboard shortcuts, About."""
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
    win.add_action("help", act("&Keyboard shortcuts", shortcuts, ("Ctrl+/",)), "shortcuts")
    win.add_action("help", act("&About", lambda: show(win.about_box)), "about")
