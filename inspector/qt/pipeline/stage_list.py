"""A pipeline of stages, top to bottom: one collapsible section per stage with its count and
the engine's one line on what it did, and a table of its rows (kept rows in order, then the
rows it dropped with the drop code's words). The stage that matters opens by itself."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QScrollArea,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.flow.runner import FlowTrace, StageRun
from inspector.core.engine.flow.summary import StageSummary, stage_that_matters, summarise
from inspector.qt.pipeline.one_line import OneLine
from inspector.qt.pipeline.stage_model import (
    COLUMNS,
    FlowStageModel,
    RowTexts,
    same_rows,
)
from inspector.qt.theme import LIGHT, Tokens

ROW_HEIGHT = 22
MIN_ROWS = 4  # an open stage shows at least this many rows before the list scrolls


def _set(widget: Any, text: str, tip: str) -> None:
    """A label's or button's text and tooltip, set only when they change (an eliding label
    elides again on every setText; an answer's tick leaves most headers as they were)."""
    if widget.text() != text:
        widget.setText(text)
    if widget.toolTip() != tip:
        widget.setToolTip(tip)


class StageSection(QFrame):
    """One stage: a header line (toggle, number, name, count, what it did) and its table."""

    toggled = Signal(bool)
    row_picked = Signal(object)
    row_action = Signal(str, object)  # use_as_query | expect | copy_id | copy_text, row id
    menu_opening = Signal(object, object)  # QMenu, row id: other panels add their actions

    def __init__(self, number: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("flowStage")
        self.number = number
        self.summary: StageSummary | None = None
        self.toggle = QToolButton(self, objectName="flowStageToggle", checkable=True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setAutoRaise(True)
        self.toggle.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # what the stage did, anew on most ticks: painted, not laid out again (one_line.py)
        self.line = OneLine(self, "stageNote")
        self.model = FlowStageModel(self)
        self.table = QTableView(self)
        self.table.setObjectName(f"flow_stage_{number}")
        self.table.setModel(self.model)
        self._setup_table()
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.setSpacing(6)
        head.addWidget(self.toggle)
        head.addWidget(self.line, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(1)
        lay.addLayout(head)
        lay.addWidget(self.table, 1)
        self.table.hide()
        self._syncing = False
        self.toggle.toggled.connect(self._toggled)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._menu)

    def _menu(self, pos: Any) -> None:
        idx = self.table.indexAt(pos)
        rid = self.model.row_id(idx.row()) if idx.isValid() else None
        if rid is None:
            return
        menu = QMenu(self)
        expected = rid in self.model.expected
        for name, label in (("use_as_query", "Use as query (search with this row's vector)"),
                            ("expect", "Unmark as expected" if expected else
                             "Mark as expected"),
                            ("copy_id", "Copy id"), ("copy_text", "Copy text")):
            act = QAction(label, menu)
            act.triggered.connect(lambda _=False, n=name: self.row_action.emit(n, rid))
            menu.addAction(act)
        self.menu_opening.emit(menu, rid)
        menu.exec(self.table.viewport().mapToGlobal(pos))

    def _setup_table(self) -> None:
        t = self.table
        t.setTabKeyNavigation(False)  # Tab leaves the table; arrows move inside it
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        t.setWordWrap(False)
        t.setShowGrid(False)
        t.setAlternatingRowColors(True)
        t.verticalHeader().hide()
        t.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        t.setMinimumHeight(ROW_HEIGHT * (MIN_ROWS + 1) + 4)
        h = t.horizontalHeader()
        h.setHighlightSections(False)
        h.setMinimumSectionSize(24)
        fm = t.fontMetrics()
        widths = {"#": fm.horizontalAdvance("888=") + 14, "id": 130,
                  "score": fm.horizontalAdvance("0.00000") + 14,
                  "Δ": fm.horizontalAdvance("↑88") + 14, "what happened": 190}
        for n, name in enumerate(COLUMNS):
            if name == "text":
                h.setSectionResizeMode(n, QHeaderView.ResizeMode.Stretch)
            else:
                h.setSectionResizeMode(n, QHeaderView.ResizeMode.Interactive)
                t.setColumnWidth(n, widths[name])

    @property
    def is_open(self) -> bool:
        return self.toggle.isChecked()

    def set_open(self, on: bool) -> None:
        self.toggle.setChecked(on)

    def _toggled(self, on: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.table.setVisible(on)
        self.toggled.emit(on)

    def show_run(self, run: StageRun | None, tied: frozenset[str], expected: frozenset[str],
                 texts: RowTexts, selected: Any) -> None:
        shown = self.model.run
        if run is None:
            self.summary = None
        elif shown is None or (shown.name, shown.role) != (run.name, run.role) or \
                not same_rows(shown, run):  # a tick leaves the stages before it as they were
            self.summary = summarise(run)
        rows = self.model.rowCount()
        self.model.set_run(run, tied, expected, texts)
        if self.model.rowCount() != rows and self.table.isVisible():
            # rows added or removed: the view lays them out now, not at its next turn of the
            # event loop, so the answer's rows are painted in the answer's frame, not after
            self.table.doItemsLayout()
        if run is None:
            self.toggle.setText(f"{self.number}")
            self.line.setText("")
        else:
            s = self.summary
            count = f"{s.count}" if s.count_in is None else f"{s.count_in} → {s.count}"
            key = f"  Alt+{self.number}" if self.number <= 9 else ""
            _set(self.toggle, f"{self.number}. {run.name}" +
                 ("" if run.role == "query" else f"  ({count})"),
                 f"{run.name}: a {run.kind} stage ({run.role}). Space opens or closes "
                 f"it{key}.\n{s.line}" + (f"\n{run.note}" if run.note else ""))
            _set(self.line, s.line, s.line + (f"\n{run.note}" if run.note else ""))
        self.show_selected(selected)

    def show_selected(self, rid: Any) -> None:
        r = self.model.row_for_id(rid)
        self._syncing = True
        try:
            sm = self.table.selectionModel()
            if r < 0:
                if sm.hasSelection() or sm.currentIndex().isValid():
                    sm.clearSelection()
                    sm.setCurrentIndex(QModelIndex(), sm.SelectionFlag.NoUpdate)
            elif not (sm.currentIndex().row() == r and sm.isRowSelected(r)):
                # re-selecting the row already shown would repaint the table on every tick
                sm.setCurrentIndex(self.model.index(r, 0),
                                   sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)
        finally:
            self._syncing = False

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._syncing and current.isValid():
            rid = self.model.row_id(current.row())
            if rid is not None:
                self.row_picked.emit(rid)

    def set_tokens(self, tokens: Tokens) -> None:
        self.model.tokens = tokens
        self.model.layoutChanged.emit()


class FlowStagesPanel(QWidget):
    """Every stage of the route that ran, in order; open sections share the height."""

    row_picked = Signal(object)
    row_action = Signal(str, object)
    menu_opening = Signal(object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("flowStages")
        self.tokens: Tokens = LIGHT
        self.sections: list[StageSection] = []
        self.headline = OneLine(self, "sectionTitle")  # its count changes with a tick
        self.notes = QLabel("", self, objectName="stageNote")
        self.notes.setWordWrap(True)
        self.notes.hide()
        self._body = QWidget(self)
        self._lay = QVBoxLayout(self._body)
        self._lay.setContentsMargins(0, 0, 4, 0)
        self._lay.setSpacing(2)
        self._lay.addStretch(1)
        self.scroll = QScrollArea(self, objectName="flowScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self._body)
        self.scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.headline)
        lay.addWidget(self.notes)
        lay.addWidget(self.scroll, 1)
        self._route: tuple[Any, ...] | None = None  # which stages the sections show
        self._texts = RowTexts()  # each row's text on one line, per route
        self._opened_by_user: set[str] = set()
        self._closed_by_user: set[str] = set()
        self._auto: str | None = None

    def _ensure(self, n: int) -> None:
        while len(self.sections) < n:
            sec = StageSection(len(self.sections) + 1, self._body)
            sec.set_tokens(self.tokens)
            sec.row_picked.connect(self.row_picked)
            sec.row_action.connect(self.row_action)
            sec.menu_opening.connect(self.menu_opening)
            sec.toggled.connect(lambda on, s=sec: self._user_toggled(s, on))
            self._lay.insertWidget(self._lay.count() - 1, sec)
            self.sections.append(sec)
        for k, sec in enumerate(self.sections):
            sec.setVisible(k < n)

    def _user_toggled(self, sec: StageSection, on: bool) -> None:
        if sec.summary is None or getattr(self, "_placing", False):
            return
        name = sec.summary.name
        (self._opened_by_user if on else self._closed_by_user).add(name)
        (self._closed_by_user if on else self._opened_by_user).discard(name)
        self._stretch()

    def show_trace(self, trace: FlowTrace | None, expected: list[str], selected: Any,
                   headline: str) -> None:
        self.headline.setText(headline)
        if trace is None:
            self._last = None
            for sec in self.sections:
                sec.show_run(None, frozenset(), frozenset(), self._texts, None)
            self._ensure(len(self.sections) if self._route is not None else 0)
            return
        route = (trace.spec.name, trace.route, tuple(s.name for s in trace.stages))
        if route != self._route:  # another pipeline or route: the reader's choices reset
            self._route = route
            self._texts = RowTexts()
            self._opened_by_user.clear()
            self._closed_by_user.clear()
        self._ensure(len(trace.stages))
        tied = frozenset(i for x in trace.ties for i in x.ids)
        texts = self._texts  # a row's text on one line, made once per route when first shown
        texts.show(trace)
        exp = frozenset(expected)
        for sec, run in zip(self.sections, trace.stages, strict=False):
            sec.show_run(run, tied if run.role == "fetch" else frozenset(), exp, texts,
                         selected)
        notes = [f"warning: {w}" for w in trace.warnings] + \
            [f"not exact: {w}" for w in trace.inexact]
        self.notes.setText("\n".join(notes))
        self.notes.setVisible(bool(notes))
        self._place(trace, expected)

    def _place(self, trace: FlowTrace, expected: list[str]) -> None:
        """Open the stage that matters and the final one; what the reader opened or closed
        stays so."""
        k = stage_that_matters(trace, expected)
        self._auto = trace.stages[k].name if k is not None else None
        self._last = (trace, list(expected))
        self._placing = True
        try:
            last = len(trace.stages) - 1
            if k is not None and k != last and not self._room_for(2, len(trace.stages)):
                last = -1  # a short window: the stage that matters alone (the final is a key
                # press away), so its rows are readable without scrolling
            for i, (sec, st) in enumerate(zip(self.sections, trace.stages, strict=False)):
                if st.name in self._opened_by_user:
                    want = True
                elif st.name in self._closed_by_user:
                    want = False
                else:
                    want = i == k or i == last
                sec.set_open(want)
        finally:
            self._placing = False
        self._stretch()

    def _room_for(self, tables: int, stages: int) -> bool:
        """Whether the list shows every stage's header and `tables` open tables of at least
        MIN_ROWS rows without scrolling."""
        head = self.sections[0].toggle.sizeHint().height() + 2 if self.sections else 20
        table = self.sections[0].table.minimumHeight() if self.sections else 120
        return self.scroll.viewport().height() >= stages * head + tables * table

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        last = getattr(self, "_last", None)
        if last is not None and last[0] is not None:
            self._place(*last)  # the auto-opened stages follow the room; the user's stay

    def _stretch(self) -> None:
        """Open sections share the height; a stretch set again re-lays out the whole list
        (every section's table), so only what changed is set."""
        lay = self._lay
        for k, sec in enumerate(self.sections):
            want = 1 if sec.is_open else 0
            if lay.stretch(k) != want:
                lay.setStretch(k, want)
        any_open = any(s.is_open and s.isVisible() for s in self.sections)
        end = lay.count() - 1
        if lay.stretch(end) != (0 if any_open else 1):
            lay.setStretch(end, 0 if any_open else 1)

    def forget(self) -> None:
        """Another store: no section of the last pipeline's stages stays, not even empty."""
        self._route, self._last = None, None
        for sec in self.sections:
            sec.show_run(None, frozenset(), frozenset(), self._texts, None)
        self._ensure(0)

    def open_stage(self, k: int) -> StageSection | None:
        """Open stage k (0-based), scroll to it and focus its table (the Alt+N shortcuts)."""
        if not 0 <= k < len(self.sections) or not self.sections[k].isVisible():
            return None
        sec = self.sections[k]
        if not sec.is_open:
            sec.set_open(True)
        self.scroll.ensureWidgetVisible(sec)
        sec.table.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return sec

    def visible_sections(self) -> list[StageSection]:
        return [s for s in self.sections if s.isVisible()]

    def show_selected(self, rid: Any) -> None:
        for sec in self.sections:
            sec.show_selected(rid)

    def set_tokens(self, tokens: Tokens) -> None:
        self.tokens = tokens
        for sec in self.sections:
            sec.set_tokens(tokens)
