"""Rows readable at 1366×768 (issue 20): the text column takes the room, the scope is a mark
plus its value, the rank column fits "12=" at any font size, the end note spans the table and
no header is cut to a stub. Measured on the real window with Qt's own metrics."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QPixmap
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionViewItem

from inspector.core.engine.trace import STAGES

LAPTOP = (1366, 768)


def _at(win, size: tuple[int, int]) -> None:
    win.resize(*size)
    QApplication.processEvents()
    QApplication.processEvents()


def _slide(win, key: str, value: float) -> None:
    win.sliders.sliders[key].setValue(value)
    win.sliders.flush()
    QApplication.processEvents()


def _col(view, name: str) -> int:
    return view.model.columns.index(name)


def _cell_need(table, text: str, dot: bool) -> int:
    """The width Qt's style needs to paint this text (and the outcome dot) in one of the
    table's cells, unelided: what QStyledItemDelegate asks for, with the table's font."""
    opt = QStyleOptionViewItem()
    opt.initFrom(table)
    opt.font = table.font()
    opt.fontMetrics = table.fontMetrics()
    opt.text = text
    opt.features = QStyleOptionViewItem.ViewItemFeature.HasDisplay
    if dot:
        opt.features |= QStyleOptionViewItem.ViewItemFeature.HasDecoration
        opt.decorationSize = QSize(10, 10)
        opt.icon = QPixmap(10, 10)
    opt.displayAlignment = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
    return table.style().sizeFromContents(QStyle.ContentsType.CT_ItemViewItem, opt, QSize(),
                                          table).width()


# the least share of its table's width the text column gets at 1366×768: the raw candidates
# (read against their scope) and the final results most, the stages in between, with more
# number columns, less
TEXT_AT_LEAST = {"raw": 0.35, "scoped": 0.25, "blended": 0.25, "final": 0.4}


def test_text_column_takes_the_room_at_1366(window) -> None:
    _at(window, LAPTOP)
    for stage in STAGES:
        view = window.stages.view(stage)
        t = view.table
        text = t.columnWidth(_col(view, "text"))
        others = [t.columnWidth(n) for n, c in enumerate(view.model.columns) if c != "text"]
        # the text is the widest column and takes its share of the table
        assert text >= max(others), (stage, text, others)
        share = text / t.viewport().width()
        assert share >= TEXT_AT_LEAST[stage], (stage, text, t.viewport().width())


def test_scope_is_a_mark_and_its_value_with_the_rule_in_the_tooltip(window) -> None:
    _at(window, LAPTOP)
    view = window.stages.view("raw")
    model, col = view.model, _col(view, "scope")
    trace = window.vm.trace
    assert model.live_count() and trace.pool.scope.active
    for r in range(model.live_count()):
        i = int(model.rows[r])
        cell = model.data(model.index(r, col))
        tip = model.data(model.index(r, col), Qt.ItemDataRole.ToolTipRole)
        assert cell == f"✗ {trace.pool.columns['repo'][i]}"
        assert trace.pool.scope_rule[i] in tip
    # a value wider than the column's cap elides in the middle: both ends of a name show
    opt = QStyleOptionViewItem()
    view.table.itemDelegateForColumn(col).initStyleOption(opt, model.index(0, col))
    assert opt.textElideMode == Qt.TextElideMode.ElideMiddle
    assert view.table.columnWidth(col) <= view.scope_cap()


@pytest.mark.parametrize("points", [None, 16])
def test_rank_column_fits_tied_two_digit_ranks_at_any_font_size(window, points) -> None:
    _at(window, LAPTOP)
    for stage in STAGES:
        view = window.stages.view(stage)
        t = view.table
        if points is not None:
            font = QFont(t.font())
            font.setPointSize(points)
            t.setFont(font)
            QApplication.processEvents()
        try:
            width = t.columnWidth(_col(view, "#"))
            for rank in ("12=", "12!"):
                assert t.fontMetrics().horizontalAdvance(rank) <= width, (stage, rank, width)
                need = _cell_need(t, rank, dot=True)
                assert need <= width, (stage, rank, need, width)
        finally:
            t.setFont(QFont())
            QApplication.processEvents()


def test_ranks_the_model_shows_fit_their_column(window) -> None:
    """At a deep over-fetch the raw stage holds ranks of two and three digits, tied or not."""
    _slide(window, "overfetch", 20.0)
    view = window.stages.view("raw")
    t, col = view.table, _col(view, "#")
    shown = [str(view.model.data(view.model.index(r, col)))
             for r in range(view.model.live_count())]
    assert any(len(s.rstrip("=!")) >= 2 for s in shown)
    widest = max(shown, key=t.fontMetrics().horizontalAdvance)
    assert _cell_need(t, widest, dot=True) <= t.columnWidth(col), (widest, t.columnWidth(col))


def _assert_note_spans(win, stage: str) -> None:
    view = win.stages.view(stage)
    model, t = view.model, view.table
    n = model.live_count()
    assert n < model.rowCount(), stage
    assert t.columnSpan(n, 0) == model.columnCount(), (stage, t.columnSpan(n, 0))
    note = model.data(model.index(n, 0))
    assert note == model.past_note()
    rect = t.visualRect(model.index(n, 0))
    assert _cell_need(t, note, dot=False) <= rect.width(), (stage, note, rect.width())
    # no other row spans: the row that held the note before a tick is a plain row again
    assert all(t.columnSpan(r, 0) == 1 for r in range(model.rowCount()) if r != n), stage


def test_end_notes_span_the_table_and_follow_the_slider(window) -> None:
    _at(window, LAPTOP)
    for stage in STAGES:  # the scoped-miss story: every stage past raw is empty
        if window.stages.view(stage).model.live_count() < window.stages.view(stage) \
                .model.rowCount():
            _assert_note_spans(window, stage)
    _slide(window, "overfetch", 4.0)  # a tick: rows arrive, the note moves down
    _slide(window, "overfetch", 3.0)
    for stage in ("scoped", "blended"):
        _assert_note_spans(window, stage)


@pytest.mark.parametrize("size", [LAPTOP, (1920, 1080)])
def test_headers_are_never_cut_and_say_more_in_a_tooltip(window, size) -> None:
    _at(window, size)
    for stage in STAGES:
        view = window.stages.view(stage)
        h, model = view.table.horizontalHeader(), view.model
        margin = h.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, h)
        for n in range(model.columnCount()):
            label = model.headerData(n, Qt.Orientation.Horizontal)
            need = h.fontMetrics().horizontalAdvance(label) + 2 * margin
            assert need <= h.sectionSize(n), (stage, label, need, h.sectionSize(n))
            assert model.headerData(n, Qt.Orientation.Horizontal,
                                    Qt.ItemDataRole.ToolTipRole), (stage, label)


def test_a_lane_built_from_narrow_saved_widths_still_fits_its_ranks_and_spans(window,
                                                                               ready) -> None:
    """Column widths saved by an older build (a 30 px rank column) come back no narrower
    than the ranks need, and the second lane's end notes span its tables too."""
    stages = window.stages
    final = stages.view("final")
    header = final.table.horizontalHeader()
    old = header.sectionSize(0)
    header.resizeSection(0, 30)
    stages.header_states = {"final": header.saveState()}
    header.resizeSection(0, old)
    window.vm.set_compare(True)
    ready(window.vm)
    try:
        assert len(stages.lanes) == 2
        second = stages.view("final", 1)
        assert second.table.columnWidth(0) >= second.cell_need("12=", dot=True)
        for stage in STAGES:
            view = stages.view(stage, 1)
            n = view.model.live_count()
            if n < view.model.rowCount():
                assert view.table.columnSpan(n, 0) == view.model.columnCount(), stage
    finally:
        stages.header_states = {}
        window.vm.set_compare(False)
        ready(window.vm)


def test_the_visual_checks_find_no_unreadable_rows(window) -> None:
    from inspector.qt.harness.visual_checks import stage_row_problems

    for size in (LAPTOP, (1920, 1080)):
        _at(window, size)
        assert stage_row_problems(window) == [], size
