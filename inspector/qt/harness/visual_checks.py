"""What a machine can see in a rendered window: tick labels that cover the plotted range at the
right scale, texts in a plot that do not overlap, widgets inside the window and its other
windows on the screen, no floating dock over a stage table, plots at or above their minimum
size, scope verdicts shown in full, stage tables whose rows can be read (headers, ranks and
end notes whole, the text the widest), a pipeline of stages whose headers all show.
Used by the gallery and by the tests; each check returns plain sentences."""

from __future__ import annotations

import re
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QSplitter,
    QStyle,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from inspector.qt.harness.cut_checks import cut_problems, plot_texts

TEXT_CHARS = 24  # an open stage's text column shows at least this many characters of a row

NUMBER = re.compile(r"^[−-]?\d+(\.\d+)?(e[−+-]?\d+)?$")


def tick_labels(axis: pg.AxisItem) -> list[str]:
    """The tick label texts the axis paints at its current size and range."""
    img = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(img)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in specs[2]] if specs else []


def overlapping_texts(widget: pg.PlotWidget, most: int = 2) -> list[tuple[str, str]]:
    """Pairs of texts in one plot whose painted rectangles overlap (by more than rounding)."""
    texts = plot_texts(widget)
    pairs = []
    for n, (a, ra) in enumerate(texts):
        for b, rb in texts[n + 1:]:
            both = ra & rb
            if both.width() > 0.5 and both.height() > 0.5:
                pairs.append((a, b))
                if len(pairs) >= most:
                    return pairs
    return pairs


def text_overlap_problems(win: QWidget) -> list[str]:
    """Texts that overlap in any visible plot of the window (its docks' plots included)."""
    out = []
    for w in win.findChildren(pg.PlotWidget):
        if w.isVisible():
            out += [f"{w.objectName() or 'a plot'}: {a!r} overlaps {b!r}"
                    for a, b in overlapping_texts(w)]
    return out


def axis_problems(name: str, axis: pg.AxisItem, data: tuple[float, float] | None) -> list[str]:
    """Numeric tick labels must lie inside the axis's range and span a fair part of it, and
    the plotted data (lo, hi) must lie inside that range."""
    lo, hi = sorted(float(v) for v in axis.range)
    values = [float(t.replace("−", "-")) for t in tick_labels(axis) if NUMBER.match(t)]
    out: list[str] = []
    if not values:
        return [f"{name}: no numeric tick labels"]
    tol = (hi - lo) * 0.02 + 1e-12
    if min(values) < lo - tol or max(values) > hi + tol:
        out.append(f"{name}: tick labels {min(values):g}..{max(values):g} outside the axis "
                   f"range {lo:g}..{hi:g} (a hidden scale factor?)")
    elif len(values) < 2 and hi - lo > 0:
        out.append(f"{name}: only one tick label")
    if data is not None and (data[0] < lo - tol or data[1] > hi + tol):
        out.append(f"{name}: data {data[0]:g}..{data[1]:g} outside the axis range "
                   f"{lo:g}..{hi:g}")
    return out


def _scrolled(w: QWidget, top: QWidget) -> bool:
    """Inside a scroll area's viewport, where overflowing is what scrolling is for."""
    p = w.parentWidget()
    while p is not None and p is not top:
        if isinstance(p, QAbstractScrollArea):
            return True
        p = p.parentWidget()
    return False


def outside_problems(win: QWidget) -> list[str]:
    """Visible widgets of the window (not of floating docks or popups) that stick out of it."""
    box = win.rect().adjusted(-1, -1, 1, 1)
    out = []
    for w in win.findChildren(QWidget):
        if not w.isVisible() or w.window() is not win or _scrolled(w, win):
            continue
        r = QRect(w.mapTo(win, QPoint(0, 0)), w.size())
        if not box.contains(r):
            label = w.objectName() or type(w).__name__
            out.append(f"{label} at {r.x()},{r.y()} {r.width()}x{r.height()} lies outside the "
                       f"{win.width()}x{win.height()} window")
    return out[:5]


def own_window_problems(win: QWidget) -> list[str]:
    """The window's own other windows (a floating dock, a dialog) on the screen."""
    screen = win.screen().availableGeometry().adjusted(-1, -1, 1, 1)
    out = []
    for w in win.findChildren(QWidget):
        if w.isWindow() and w.isVisible() and not screen.contains(w.frameGeometry()):
            g = w.frameGeometry()
            out.append(f"{w.objectName() or type(w).__name__} at {g.x()},{g.y()} "
                       f"{g.width()}x{g.height()} lies off the screen")
    return out


def plot_size_problems(win: QWidget) -> list[str]:
    out = []
    for w in win.findChildren(pg.PlotWidget):
        if not w.isVisible():
            continue
        m = w.minimumSize()
        if m.width() < 120 or m.height() < 100:
            out.append(f"{w.objectName() or 'a plot'} has no usable minimum size ({m.width()}x"
                       f"{m.height()})")
        elif w.width() < m.width() or w.height() < m.height():
            out.append(f"{w.objectName() or 'a plot'} is {w.width()}x{w.height()}, below its "
                       f"minimum {m.width()}x{m.height()}")
    return out


def dock_problems(win: Any) -> list[str]:
    """Visible docks at least their minimum size (floating ones are windows of their own)."""
    out = []
    for dock in getattr(win, "dock_areas", {}):
        if dock.isVisible():
            m = dock.minimumSizeHint()
            if dock.height() < m.height() or dock.width() < m.width():
                out.append(f"{dock.objectName()} is {dock.width()}x{dock.height()}, below its "
                           f"minimum {m.width()}x{m.height()}")
    return out


def covered_stage_problems(win: Any) -> list[str]:
    """Stage tables a floating dock covers: a heatmap click there re-ranks tables the user
    cannot see."""
    tables = [t for t in win.findChildren(QTableView) if t.isVisible() and t.window() is win
              and t.objectName().startswith(("stage_", "flow_stage_"))]
    out = []
    for dock in getattr(win, "dock_areas", {}):
        if not (dock.isVisible() and dock.isFloating()):
            continue
        box = dock.frameGeometry()
        for t in tables:
            seen = QRect(t.mapToGlobal(QPoint(0, 0)), t.size())
            if box.intersects(seen):
                both = box & seen
                out.append(f"{dock.objectName()} covers {t.objectName()} ({both.width()}x"
                           f"{both.height()} px of its {seen.width()}x{seen.height()})")
    return out


def flow_problems(win: Any, rows: int = 3) -> list[str]:
    """A pipeline of stages read at a glance: every stage's header (number, name, count)
    whole and inside the list's view (while no dock takes the room: then the list scrolls),
    one stage open at least, and each open stage showing `rows` rows (or all it has)
    without scrolling the list."""
    panel, out = win.stages, []
    sections = panel.visible_sections()
    view = panel.scroll.viewport()
    for sec in sections:
        t = sec.toggle
        if t.width() < t.sizeHint().width():
            out.append(f"stage {sec.number}: its header {t.text()!r} needs "
                       f"{t.sizeHint().width()} px, has {t.width()}")
        if sec.is_open:
            n = min(rows, sec.model.rowCount())
            room = sec.table.viewport().height()
            if n and room < n * sec.table.verticalHeader().defaultSectionSize():
                out.append(f"stage {sec.number}: open, but shows fewer than {n} rows "
                           f"({room} px)")
    if sections and not any(sec.is_open for sec in sections):
        out.append("no stage of the pipeline is open")
    docked = any(d.isVisible() and not d.isFloating() for d in getattr(win, "dock_areas", {}))
    if panel.scroll.verticalScrollBar().maximum() > 0 and sections and not docked:
        last = sections[-1]
        if last.mapTo(view, last.rect().topLeft()).y() > view.height():
            out.append(f"the pipeline's {len(sections)} stages do not fit: stage "
                       f"{last.number}'s header is below the view")
    return out


def elided_scope_problems(win: QWidget) -> list[str]:
    """Scope verdict cells whose text is wider than their column, where the column could
    have been wider (below its cap: past it values elide in the middle)."""
    out = []
    for table in win.findChildren(QTableView):
        model = table.model()
        if not table.isVisible() or model is None or "scope" not in getattr(model, "columns",
                                                                            ()):
            continue
        col = model.columns.index("scope")
        if table.isColumnHidden(col):
            continue
        right = table.columnViewportPosition(col) + table.columnWidth(col)
        if model.rowCount() and (table.columnViewportPosition(col) < 0
                                 or right > table.viewport().width() + 1):
            out.append(f"{table.objectName()}: the scope column is scrolled out of view")
            continue
        fm = table.fontMetrics()
        # a value may elide (its tooltip has it whole) only where the column is at its cap
        cap = getattr(table.parent(), "scope_cap", None)
        if cap is not None and table.columnWidth(col) >= cap():
            continue
        for r in range(min(model.rowCount(), 60)):
            text = str(model.data(model.index(r, col), Qt.ItemDataRole.DisplayRole) or "")
            need = fm.horizontalAdvance(text) + 10
            if need > table.columnWidth(col):
                out.append(f"{table.objectName()}: scope verdict {text!r} needs {need} px, "
                           f"column is {table.columnWidth(col)}")
                break
    return out


def _cell_need(table: QTableView, text: str, dot: bool) -> int:
    """The width the table's style needs to paint this text unelided in one of its cells
    (with a 10 px decoration, the outcome dot, when asked)."""
    opt = QStyleOptionViewItem()
    opt.initFrom(table)
    opt.font, opt.fontMetrics, opt.text = table.font(), table.fontMetrics(), text
    opt.features = QStyleOptionViewItem.ViewItemFeature.HasDisplay
    if dot:
        opt.features |= QStyleOptionViewItem.ViewItemFeature.HasDecoration
        opt.decorationSize = QSize(10, 10)
        opt.icon = QIcon(QPixmap(10, 10))
    return table.style().sizeFromContents(QStyle.ContentsType.CT_ItemViewItem, opt, QSize(),
                                          table).width()


def stage_row_problems(win: Any) -> list[str]:
    """Stage tables whose rows cannot be read: a header label cut to a stub, a rank ("12=")
    wider than its column, a text column that shows fewer than TEXT_CHARS characters or is
    narrower than another column."""
    from inspector.qt.pipeline.stage_model import COLUMNS

    out = []
    for sec in win.stages.visible_sections():
        t, model = sec.table, sec.model
        if not t.isVisible():
            continue
        name = t.objectName()
        h = t.horizontalHeader()
        margin = h.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, h)
        for n in range(model.columnCount()):
            label = str(model.headerData(n, Qt.Orientation.Horizontal) or "")
            need = h.fontMetrics().horizontalAdvance(label) + 2 * margin
            if need > h.sectionSize(n):
                out.append(f"{name}: header {label!r} needs {need} px, has {h.sectionSize(n)}")
        ranks = {model.cell(r, "#") for r in range(min(model.rowCount(), 200))} | {"12="}
        widest = max(ranks, key=t.fontMetrics().horizontalAdvance)
        need = _cell_need(t, widest, dot=False)
        if need > t.columnWidth(0):
            out.append(f"{name}: rank {widest!r} needs {need} px, the column has "
                       f"{t.columnWidth(0)}")
        out += _text_column_problems(name, t, list(COLUMNS))
    return out


def _text_column_problems(name: str, t: QTableView, cols: list[str]) -> list[str]:
    """The text column shows TEXT_CHARS characters of a row (average characters of the
    table's font, inside the cell's padding) and is at least as wide as any other column."""
    text = t.columnWidth(cols.index("text"))
    widest = max(t.columnWidth(k) for k, c in enumerate(cols) if c != "text")
    fm = t.fontMetrics()
    pad = _cell_need(t, "x", dot=False) - fm.horizontalAdvance("x")
    chars = (text - pad) // max(1, fm.averageCharWidth())
    if chars < TEXT_CHARS:
        return [f"{name}: the text column ({text} px) shows {max(chars, 0)} characters of a "
                f"row, fewer than {TEXT_CHARS}"]
    if text < widest:
        return [f"{name}: the text column ({text} px) is narrower than another column "
                f"({widest} px)"]
    return []


def clipped_title_problems(win: Any) -> list[str]:
    """Stage headers whose text (the row counts at its end) is wider than the button."""
    out = []
    for sec in win.stages.visible_sections():
        t = sec.toggle
        if t.isVisible() and t.width() < t.sizeHint().width():
            out.append(f"stage {sec.number}: the header {t.text()!r} is cut at {t.width()} px")
    return out


def plot_axis_problems(win: Any) -> list[str]:
    """The plotted stage's score axes against the scores it plots."""
    out: list[str] = []
    scatter = win.scatter
    if not scatter.isVisible() or win.vm.trace is None:
        return out
    ys = [y for g in scatter.groups.values() for y in (g.getData()[1] if g.getData()[1]
                                                       is not None else [])]
    xs = [x for g in scatter.groups.values() for x in (g.getData()[0] if g.getData()[0]
                                                       is not None else [])]
    plot = scatter.getPlotItem()
    out += axis_problems("score axis", plot.getAxis("left"), (min(ys), max(ys)) if ys
                         else None)
    out += axis_problems("before axis", plot.getAxis("bottom"), (min(xs), max(xs)) if xs
                         else None)
    return out


def splitter_problems(win: Any) -> list[str]:
    """Two panes of one splitter over each other: short of room for both least sizes, a
    splitter keeps each pane's least size and lays one over the next (the stage list over
    the plots' titles, at 1024x700 with no answer yet)."""
    out = []
    for sp in win.findChildren(QSplitter):
        if not sp.isVisible() or sp.window() is not win:
            continue
        panes = [w for w in map(sp.widget, range(sp.count())) if w.isVisible()]
        for a, b in zip(panes, panes[1:], strict=False):
            both = a.geometry() & b.geometry()
            if not both.isEmpty():
                out.append(f"{sp.objectName()}: {a.objectName() or type(a).__name__} lies over "
                           f"{b.objectName() or type(b).__name__} ({both.width()}x"
                           f"{both.height()} px)")
    return out


def problems(win: Any) -> list[str]:
    """Everything the checks find, one sentence each."""
    if hasattr(win, "ensure_plots"):
        win.ensure_plots()  # the plots checked, even before their turn after the results
    return (plot_axis_problems(win) + text_overlap_problems(win) + outside_problems(win)
            + own_window_problems(win) + plot_size_problems(win) + elided_scope_problems(win)
            + dock_problems(win) + covered_stage_problems(win) + clipped_title_problems(win)
            + stage_row_problems(win) + flow_problems(win) + cut_problems(win)
            + splitter_problems(win))
