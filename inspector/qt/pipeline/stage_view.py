"""One stage's panel: its title with the row count, a line on what happened there, and the
table; keeps the selection in step with the other stages without echoing picks."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMenu,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.trace import Trace
from inspector.qt.pipeline.stage_table import (
    NARROW_SCOPE,
    TITLES,
    WIDTHS,
    StageModel,
    verdict,
)
from inspector.qt.theme import Tokens

SHORT_TITLES = {"raw": "Raw", "scoped": "Scoped", "blended": "Blended", "final": "Final"}
STAGE_MIN = 160  # narrower stages come from docks: the window's dock rule floats those
SCOPE_MAX = 420  # wider verdicts elide in the middle; the tooltip has them whole


class StageView(QWidget):
    """A stage's title (with its count), a one-line note, and its table."""

    row_picked = Signal(object)  # id
    row_action = Signal(str, object)  # action name, id
    menu_opening = Signal(object, object)  # QMenu, id: other panels may add actions

    def __init__(self, stage: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stage = stage
        self.model = StageModel(stage, self)
        self.title = QLabel(TITLES[stage], objectName="stageTitle")
        self.note = QLabel("", objectName="stageNote")
        self.note.setWordWrap(True)
        # two lines, always: the tables of a lane line up, and a new note never relayouts
        self.note.setFixedHeight(2 * self.note.fontMetrics().lineSpacing() + 2)
        self.note.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.table = QTableView(self)
        self.table.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.table.setObjectName(f"stage_{stage}")
        self.table.setModel(self.model)
        self._setup_table()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.title)
        lay.addWidget(self.note)
        lay.addWidget(self.table, 1)
        self._syncing = False
        self._count = 0
        self._sized_for: object = None
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)

    def _setup_table(self) -> None:
        t = self.table
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        t.setWordWrap(False)
        t.setAutoScroll(False)  # the selection follows a re-ranked row; the view stays put
        t.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        t.setShowGrid(False)
        t.setAlternatingRowColors(True)
        t.verticalHeader().hide()
        t.verticalHeader().setDefaultSectionSize(22)
        t.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        t.customContextMenuRequested.connect(self._menu)
        h = t.horizontalHeader()
        h.setHighlightSections(False)
        h.setMinimumSectionSize(24)
        for n, name in enumerate(self.model.columns):
            if name == "text":
                h.setSectionResizeMode(n, QHeaderView.ResizeMode.Stretch)
            else:
                h.setSectionResizeMode(n, QHeaderView.ResizeMode.Interactive)
                t.setColumnWidth(n, WIDTHS[name])
        self.setMinimumWidth(STAGE_MIN)

    def set_trace(self, trace: Trace | None, expected: frozenset[Any], selected: Any,
                  note: str) -> None:
        self.model.set_trace(trace, expected)
        if "scope" in self.model.columns and trace is not None \
                and trace.pool is not self._sized_for:
            self._sized_for = trace.pool  # verdicts belong to the pool: size once per pool
            self._fit_scope(trace)
        self._count = len(self.model.rows)
        self._fit_title()
        self.note.setText(note)
        self.show_selected(selected, scroll=False)

    def _fit_title(self) -> None:
        """The stage's name and its row count; a short name when the full one would push the
        count out of a narrow panel (the count is what the funnel is about)."""
        arrow = "" if self.stage == "raw" else "▸ "
        full = f"{arrow}{TITLES[self.stage]}  ({self._count})"
        fits = self.title.fontMetrics().horizontalAdvance(full) <= self.width()
        self.title.setText(full if fits else f"{arrow}{SHORT_TITLES[self.stage]} ({self._count})")
        self.title.setToolTip("" if fits else full)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit_title()

    def _fit_scope(self, trace: Trace) -> None:
        """The scope column as wide as its longest verdict (the repo name is what the user
        needs), up to SCOPE_MAX; a scope-free pool only says "✓ in"."""
        col = self.model.columns.index("scope")
        p = trace.pool
        if not p.scope.active:
            want = NARROW_SCOPE
        else:
            fm = self.table.fontMetrics()
            verdicts = {"⚠ " + verdict(False, str(r))
                        for r, ok in zip(list(p.scope_rule), list(p.in_scope), strict=True)
                        if not ok}
            want = max([fm.horizontalAdvance(v) + 16 for v in verdicts] + [NARROW_SCOPE])
            want = min(want, SCOPE_MAX)
        if self.table.columnWidth(col) != want:
            self.table.setColumnWidth(col, want)

    def set_tokens(self, tokens: Tokens) -> None:
        self.model.tokens = tokens
        self.model.layoutChanged.emit()

    def show_selected(self, row_id: Any, scroll: bool = True) -> None:
        """Select the row with this id (if this stage holds it) without echoing a pick."""
        r = self.model.row_for_id(row_id)
        self._syncing = True
        try:
            sm = self.table.selectionModel()
            if r < 0:
                if sm.hasSelection() or sm.currentIndex().isValid():
                    sm.clearSelection()
                    sm.setCurrentIndex(QModelIndex(), sm.SelectionFlag.NoUpdate)
            else:
                idx = self.model.index(r, 0)
                if sm.currentIndex().row() == r and sm.isRowSelected(r):
                    return  # already showing it: re-selecting would repaint the table
                sm.setCurrentIndex(idx, sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)
                if scroll:
                    self.table.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)
        finally:
            self._syncing = False

    def _current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        rid = self.model.row_id(current.row())
        if rid is None:  # a row past the stage's rows holds nothing to pick: stay put
            self.show_selected(self.model.row_id(previous.row()) if previous.isValid()
                               else None, scroll=False)
            return
        self.row_picked.emit(rid)

    def _menu(self, pos: Any) -> None:
        idx = self.table.indexAt(pos)
        if not idx.isValid():
            return
        rid = self.model.row_id(idx.row())
        menu = QMenu(self)
        expected = str(rid) in self.model.expected
        for name, label in (("use_as_query", "Use as query (search with this row's vector)"),
                            ("expect", "Unmark as expected" if expected else "Mark as expected"),
                            ("copy_id", "Copy id"), ("copy_text", "Copy text")):
            act = QAction(label, menu)
            act.triggered.connect(lambda _=False, n=name: self.row_action.emit(n, rid))
            menu.addAction(act)
        self.menu_opening.emit(menu, rid)
        menu.exec(self.table.viewport().mapToGlobal(pos))
