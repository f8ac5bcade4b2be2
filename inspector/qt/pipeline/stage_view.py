"""One stage's panel: its title with the row count, a line on what happened there, and the
table; keeps the selection in step with the other stages without echoing picks."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QSize, Qt, Signal
from PySide6.QtGui import QAction, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.trace import Trace
from inspector.qt.pipeline.stage_table import StageModel
from inspector.qt.pipeline.stage_words import BASE_NAME, SAMPLES, TITLES
from inspector.qt.theme import Tokens

SHORT_TITLES = {"raw": "Raw", "scoped": "Scoped", "blended": "Blended", "final": "Final"}
STAGE_MIN = 160  # narrower stages come from docks: the window's dock rule floats those
SCOPE_SHARE = 0.3  # the scope column takes at most this much of the table, or SCOPE_CHARS
SCOPE_CHARS = 18  # characters if more; wider values elide in the middle (the tooltip has the
#                   whole rule)
DOT = 10  # the outcome dot in the "#" column (stage_table._dot)
TEXT_CHARS = 24  # an open stage's text column shows at least this many characters of a row


class _MiddleElide(QStyledItemDelegate):
    """Scope values elide in the middle: "✗ platform…docs" keeps both ends of a repo name."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: Any) -> None:  # noqa: N802
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


class StageView(QWidget):
    """A stage's title (with its count), a one-line note, and its table."""

    row_picked = Signal(object)  # id
    columns_fitted = Signal()  # the fixed columns changed width: the lane rebalances
    row_action = Signal(str, object)  # action name, id
    menu_opening = Signal(object, object)  # QMenu, id: other panels may add actions
    unfold_asked = Signal()  # the folded stage's "open" was clicked: the lane makes room

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
        self.folded = False
        self.unfold = QToolButton(self, objectName="stageUnfold", text="open ▸")
        self.unfold.setAutoRaise(True)
        self.unfold.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # Tab reaches a folded stage
        self.unfold.clicked.connect(self.unfold_asked)
        self.unfold.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.title)
        lay.addWidget(self.note)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.unfold, 0, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        lay.addStretch(0)
        self._syncing = False
        self._count = 0
        self._note = ""
        self._sized_for: object = None
        self._span: int | None = -1  # the table row spanned by the end note (-1: not known)
        self._rank_digits = 2
        self.scope_need = 0  # the scope column's width for its longest value
        self.model.modelReset.connect(self._forget_span)
        self.table.installEventFilter(self)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.fit_columns(exact=True)

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
            if name == "scope":
                t.setItemDelegateForColumn(n, _MiddleElide(t))
        self.setMinimumWidth(STAGE_MIN)

    # ---- column widths, measured with the table's own font ----
    def cell_need(self, text: str, dot: bool = False) -> int:
        """The width Qt's style needs to paint this text unelided in one of the table's cells
        (with the outcome dot, for the "#" column): what QStyledItemDelegate asks for."""
        t = self.table
        opt = QStyleOptionViewItem()
        opt.initFrom(t)
        opt.font = t.font()
        opt.fontMetrics = t.fontMetrics()
        opt.text = text
        opt.features = QStyleOptionViewItem.ViewItemFeature.HasDisplay
        if dot:
            opt.features |= QStyleOptionViewItem.ViewItemFeature.HasDecoration
            opt.decorationSize = QSize(DOT, DOT)
            opt.icon = QIcon(QPixmap(DOT, DOT))
        return t.style().sizeFromContents(QStyle.ContentsType.CT_ItemViewItem, opt, QSize(),
                                          t).width() + 2

    def header_need(self, name: str) -> int:
        """Width that shows a column's header label whole."""
        h = self.table.horizontalHeader()
        labels = BASE_NAME.values() if name == "base" else (name,)
        margin = h.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, h)
        return max(h.fontMetrics().horizontalAdvance(lb) for lb in labels) + 2 * margin + 8

    def column_need(self, name: str) -> int:
        """The narrowest width that shows every value of a fixed column, and its header."""
        if name == "scope":
            need = self.scope_need
        else:
            samples = SAMPLES.get(name, ())
            if name == "#":  # ranks as wide as the stage's deepest ("12=", "120!")
                n = "9" * max(2, self._rank_digits)
                samples = (*samples, f"{n}=", f"{n}!")
            need = max([self.cell_need(x, dot=name == "#") for x in samples] + [0])
        return max(need, self.header_need(name))

    def fit_columns(self, exact: bool = False, notify: bool = True) -> None:
        """Every column but the text at the width its values need (the text stretches into the
        rest); a column the user widened stays wider. The scope column is capped at a share of
        the table so the text keeps the room."""
        t = self.table
        changed = False
        for n, name in enumerate(self.model.columns):
            if name == "text":
                continue
            want = self.column_need(name)
            if name == "scope":
                want = min(want, self.scope_cap())
            if t.columnWidth(n) < want or ((exact or name == "scope")
                                           and t.columnWidth(n) != want):
                t.setColumnWidth(n, want)
                changed = True
        if changed and notify:
            self.columns_fitted.emit()

    def scope_cap(self) -> int:
        """The widest the scope column gets: SCOPE_SHARE of the table, never below what its
        header and a short value need."""
        floor = max(self.cell_need("x" * SCOPE_CHARS), self.header_need("scope"))
        return max(floor, int(SCOPE_SHARE * max(self.width(), STAGE_MIN)))

    def fixed_width(self) -> int:
        """The room this stage needs besides its text column: the other columns, the table's
        frame and its vertical scroll bar."""
        t = self.table
        cols = sum(t.columnWidth(n) for n, name in enumerate(self.model.columns)
                   if name != "text")
        bar = t.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, t)
        return cols + 2 * t.frameWidth() + bar

    def text_need(self) -> int:
        """The narrowest text column a row can be read by: TEXT_CHARS average characters of
        the table's font, and as wide as the widest other column."""
        t = self.table
        widest = max((t.columnWidth(n) for n, name in enumerate(self.model.columns)
                      if name != "text"), default=0)
        fm = t.fontMetrics()
        pad = self.cell_need("x") - fm.horizontalAdvance("x")  # the cell's own margins
        return max(widest, pad + TEXT_CHARS * fm.averageCharWidth())

    def open_width(self) -> int:
        """The narrowest this stage is readable open: its fixed columns and a text column
        of `text_need`."""
        return self.fixed_width() + self.text_need()

    def folded_width(self) -> int:
        """A folded stage's width: its short title with the count, or its "open" button."""
        fm = self.title.fontMetrics()
        title = f"▸ {SHORT_TITLES[self.stage]} ({self._count})"
        return max(fm.horizontalAdvance(title), self.unfold.sizeHint().width()) + 6

    def set_folded(self, on: bool) -> None:
        """Folded where the lane is too narrow for every stage to be read: the title with its
        count and an "open" button; the note and the table come back when it opens."""
        if on == self.folded:
            return
        self.folded = on
        self.note.setVisible(not on)
        self.table.setVisible(not on)
        self.unfold.setVisible(on)
        self.unfold.setToolTip(f"{TITLES[self.stage]}: open this stage (the lane folds "
                               "another to make room)" if on else "")
        self.setMinimumWidth(self.folded_width() if on else STAGE_MIN)
        self._fit_title()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self.table and event.type() == QEvent.Type.FontChange:
            if self.model.trace is not None and "scope" in self.model.columns:
                self._fit_scope(self.model.trace)
            self.fit_columns(exact=True)
        return super().eventFilter(obj, event)

    # ---- the end note spans the row ----
    def _forget_span(self) -> None:
        self._span = -1  # a reset keeps the view's spans: set them again whatever they were

    def _fit_span(self) -> None:
        """The first row past the stage's rows says where the stage ends; its one cell spans
        every column so the note is never cut to "— en…"."""
        n, cap = self.model.live_count(), self.model.rowCount()
        want = n if n < cap else None
        if want == self._span:
            return
        t, port = self.table, self.table.viewport()
        # clearSpans and setSpan repaint the whole table (an over-fetch tick moves the note
        # every time): with updates held back only the note's old and new rows repaint
        held = port.testAttribute(Qt.WidgetAttribute.WA_UpdatesDisabled)
        port.setAttribute(Qt.WidgetAttribute.WA_UpdatesDisabled, True)
        try:
            t.clearSpans()
            if want is not None:
                t.setSpan(want, 0, 1, self.model.columnCount())
        finally:
            port.setAttribute(Qt.WidgetAttribute.WA_UpdatesDisabled, held)
        for row in (self._span, want):
            if row is not None and row >= 0:
                self._update_row(row)
        self._span = want

    def _update_row(self, row: int) -> None:
        """Repaint one table row (the part of it on screen)."""
        t = self.table
        y, h = t.rowViewportPosition(row), t.rowHeight(row)
        if y + h >= 0 and y <= t.viewport().height():
            t.viewport().update(0, y, t.viewport().width(), h)

    def set_trace(self, trace: Trace | None, expected: frozenset[Any], selected: Any,
                  note: str) -> None:
        self.model.set_trace(trace, expected)
        self._fit_span()
        if "scope" in self.model.columns and trace is not None \
                and trace.pool is not self._sized_for:
            self._sized_for = trace.pool  # verdicts belong to the pool: size once per pool
            self._fit_scope(trace)
        digits = len(str(max(1, self.model.rowCount())))
        if digits != self._rank_digits:
            self._rank_digits = digits
            self.fit_columns()
        self._count = len(self.model.rows)
        self._fit_title()
        if self.folded and self.minimumWidth() != self.folded_width():  # the count grew
            self.setMinimumWidth(self.folded_width())
            self.columns_fitted.emit()
        self._note = note
        self._fit_note()
        self.show_selected(selected, scroll=False)

    def _fit_note(self) -> None:
        """The note in its two lines: where it needs more at this width its last words give
        way to "…" (the whole note is the raw stage's depth tooltip, the others' own)."""
        lab, words = self.note, self._note.split(" ")
        lab.setText(self._note)
        while len(words) > 1 and lab.width() > 0 and lab.heightForWidth(lab.width()) > lab.height():
            words.pop()
            lab.setText(" ".join(words) + " …")
        if self.stage != "raw":
            lab.setToolTip(self._note if lab.text() != self._note else "")

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
        self._fit_note()
        if "scope" in self.model.columns:
            self.fit_columns(notify=False)  # the scope's cap is a share of the width

    def _fit_scope(self, trace: Trace) -> None:
        """The scope column as wide as its longest value (the repo the row had is what the
        user needs), up to scope_cap(); a scope-free pool only says "✓ in"."""
        p = trace.pool
        cells = {"✓ in"}
        if p.scope.active:
            model = self.model
            cells |= {model.scope_text(i) for i in range(len(p.in_scope)) if not p.in_scope[i]
                      or model.disagrees(i)}
        self.scope_need = max(self.cell_need(c) for c in cells)
        self.fit_columns()

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
