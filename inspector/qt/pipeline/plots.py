"""pyqtgraph views of one trace: base score against importance with the blend's iso-score
lines (the rank shift is in rank_chart), the plots' shared style and their title-and-key box.
Items are made once and updated with setData on every tick."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QMargins, QRectF, Qt, Signal
from PySide6.QtGui import QFontMetricsF, QResizeEvent, QShowEvent, QTextOption
from PySide6.QtWidgets import QGraphicsItem, QLabel, QVBoxLayout, QWidget

from inspector.core.engine.blend import iso_base
from inspector.core.engine.trace import OUTCOME_LABELS, Trace
from inspector.qt.theme import LIGHT, Tokens, outcome_colour

IMP_GRID = np.linspace(0.0, 1.0, 101)
Y_NAME = {"vector": "vector score", "fts": "bm25 score", "hybrid": "fused score"}
MIN_PLOT = (220, 120)  # below this tick labels crowd; Y_NAME fits its height (formulas: tips)


class PlainAxis(pg.AxisItem):
    """An axis that labels values as they are (pyqtgraph's `enableAutoSIPrefix(False)` still
    rescales once and never resets: fused 0.03 read 30, with the "(x0.001)" hidden)."""

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self.autoSIPrefix = False

    def updateAutoSIPrefix(self) -> None:  # noqa: N802 - Qt/pyqtgraph naming
        self.autoSIPrefixScale, self.labelUnitPrefix = 1.0, ""
        self._updateLabel()

    def _updateLabel(self) -> None:  # noqa: N802 - pyqtgraph's name
        super()._updateLabel()
        self._fit_title()

    def resizeEvent(self, ev: Any = None) -> None:  # noqa: N802 - Qt's name
        self._fit_title(place=False)
        super().resizeEvent(ev)

    def _fit_title(self, place: bool = True) -> None:
        """The title within its plot: centred on the axis, a title longer than the plot has
        room for there ends in "…" (a short plot's vertical title reached past its ends);
        the plot's tooltip says what the axes are."""
        if self.label is None or not self.labelText or self.labelUnits:
            return
        fm = QFontMetricsF(self.label.font())
        shown = fm.elidedText(self.labelText, Qt.TextElideMode.ElideRight,
                              max(self._title_room() - 6, 0))
        if self.label.toPlainText() != shown:
            self.label.setPlainText(shown)
            if place:
                super().resizeEvent()  # centred on the axis again

    def _title_room(self) -> float:
        """How long the title may be: twice the distance from the axis's middle to the
        nearer end of the plot's visible area (the axis's own length without a view)."""
        vertical = self.orientation in ("left", "right")
        views = self.scene().views() if self.scene() is not None else []
        if not views:
            return self.size().height() if vertical else self.size().width()
        view = views[0]
        box = view.mapToScene(view.viewport().rect()).boundingRect()
        mid = self.mapRectToScene(QRectF(0, 0, self.size().width(),
                                         self.size().height())).center()
        if vertical:
            return 2 * min(mid.y() - box.top(), box.bottom() - mid.y())
        return 2 * min(mid.x() - box.left(), box.right() - mid.x())


def plain_axes() -> dict[str, PlainAxis]:
    """Axis items for a PlotWidget's `axisItems`: numbers shown at their own scale."""
    return {"left": PlainAxis("left"), "bottom": PlainAxis("bottom")}


def empty_note(widget: pg.PlotWidget, text: str, x: tuple[float, float],
               y: tuple[float, float]) -> pg.TextItem:
    """An honest empty state: real axes over a sensible range and one line saying what will
    appear there (hide it once there is data)."""
    plot = widget.getPlotItem()
    note = pg.TextItem(text, anchor=(0.5, 0.5))
    note.textItem.document().setDefaultTextOption(QTextOption(Qt.AlignmentFlag.AlignHCenter))
    note.setPos((x[0] + x[1]) / 2, (y[0] + y[1]) / 2)
    plot.addItem(note, ignoreBounds=True)
    plot.setRange(xRange=x, yRange=y, padding=0)
    vb = plot.getViewBox()

    def wrap(*_: Any) -> None:  # lines as wide as the view, centred: never cut at its edges
        natural = QFontMetricsF(note.textItem.font()).horizontalAdvance(text) + 12
        room = vb.width() - 8
        note.setTextWidth(room if 0 < room < natural else -1)
    vb.sigResized.connect(wrap)
    wrap()
    return note


def _style(widget: pg.PlotWidget, tk: Tokens) -> None:
    widget.setBackground(tk.background)
    plot = widget.getPlotItem()
    half = widget.fontMetrics().height() // 2 + 1  # room for an end tick label, centred on it
    plot.layout.setContentsMargins(1, half, half, 1)
    for name in ("left", "bottom"):
        ax = plot.getAxis(name)
        # replaying an axis's QPicture costs ~2 ms per paint; cache it as a pixmap instead
        ax.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        ax.setPen(pg.mkPen(tk.grid))
        ax.setTextPen(pg.mkPen(tk.text))
        ax.label.setDefaultTextColor(pg.mkColor(tk.text))


def key_html(tk: Tokens, title: str, items: list[tuple[str, ...]], more: int = 0) -> str:
    """A title and a colour key of (colour, text[, glyph]) items (lines break between items;
    `more`: items left out, "+N more") for a wrapping label: a legend would cover points."""
    def one(item: tuple[str, ...]) -> str:
        glyph = item[2] if len(item) > 2 else "●"
        label = html.escape(item[1]).replace(" ", "&nbsp;")
        return f"<span style='color:{item[0]}'>{glyph}</span>&nbsp;{label}"

    bullets = " &nbsp;".join([one(i) for i in items] + [f"+{more}&nbsp;more"] * (more > 0))
    return (f"<b>{html.escape(title)}</b><br><span style='color:{tk.muted}; "
            f"font-size:8pt'>{bullets}</span>")


class PlotBox(QWidget):
    """A plot under its title-and-key line, which keeps its height (title plus two lines of
    key): where the key needs more at this width its last items give way to "+N more" and
    the whole key is the tooltip, so the plot never jumps and the window never grows."""

    became_visible = Signal()  # a hidden plot skips updates and catches up when shown

    def __init__(self, plot: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot, self.tokens = plot, LIGHT
        self.header = QLabel("", objectName="plotKey", wordWrap=True,
                             alignment=Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.header.setFixedHeight(3 * self.header.fontMetrics().lineSpacing() + 4)
        lay = QVBoxLayout(self, spacing=0, contentsMargins=QMargins(0, 0, 0, 0))
        lay.addWidget(self.header)
        lay.addWidget(plot, 1)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.became_visible.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_key()

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        self.plot.set_tokens(tk)
        self._fit_key()

    def _fit_key(self) -> None:
        items, lab = self.plot.key(self.tokens), self.header
        for n in range(len(items), 0, -1):
            lab.setText(key_html(self.tokens, self.plot.TITLE, items[:n], len(items) - n))
            if self.width() <= 0 or lab.heightForWidth(self.width()) <= lab.height():
                break
        lab.setToolTip("" if n == len(items) else " · ".join(i[1] for i in items))


class ScoreScatter(pg.PlotWidget):
    """Each raw candidate at (importance used, base score); dotted lines are equal blended
    score at the current blend weight, so turning w up visibly tilts them."""

    point_clicked = Signal(object)  # row id
    TITLE = "Score vs importance"

    @staticmethod
    def key(tk: Tokens) -> list[tuple[str, ...]]:
        return [*((outcome_colour(tk, k), label) for k, label in OUTCOME_LABELS.items()
                  if k != "not_fetched"), (tk.expected, "expected", "★"),
                (tk.muted, "equal blended score", "┈┈"), (tk.returned, "last result", "╌╌"),
                (tk.cut, "min score", "╌╌")]

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, axisItems=plain_axes())
        self.setObjectName("scoreScatter")
        self.setMinimumSize(*MIN_PLOT)
        self.tokens: Tokens = LIGHT
        plot = self.getPlotItem()
        plot.setLabel("bottom", "importance used")
        plot.setMenuEnabled(False)
        plot.setXRange(-0.03, 1.03, padding=0)
        plot.enableAutoRange(x=False, y=True)
        self.setToolTip("Each raw candidate by importance (x) and base score (y: 1/(1+distance) "
                        "for vector search, reciprocal-rank fusion for hybrid). Dotted curves: "
                        "equal blended score at the current blend weight (flat at w = 0, tilted "
                        "as w grows).\nGreen dashed: the score of the last returned row; red "
                        "dashed: the min score. Click a point to select its row.")
        self.groups = {k: pg.ScatterPlotItem(size=8, name=lb, hoverable=True, tip=self._tip)
                       for k, lb in OUTCOME_LABELS.items() if k != "not_fetched"}
        self.iso = [pg.PlotCurveItem() for _ in range(4)]
        # wide antialiased strokes are the raster engine's slowest path: keep these plain
        self.cut_line = pg.PlotCurveItem(name="iso-score through last result", antialias=False)
        self.min_line = pg.PlotCurveItem(name="min score", antialias=False)
        self.expected = pg.ScatterPlotItem(size=16, symbol="star", name="expected")
        self.selected = pg.ScatterPlotItem(size=18, symbol="o")
        for item in (*self.iso, self.cut_line, self.min_line):
            plot.addItem(item, ignoreBounds=True)
        # the star and the ring sit over a row's point and take its clicks: they select it too
        for item in (*self.groups.values(), self.expected, self.selected):
            plot.addItem(item)
            item.sigClicked.connect(self._clicked)
        self._shown: dict[str, tuple[int, bytes]] = {}
        self.empty = empty_note(self, "Run a query to see scores against importance",
                                (-0.03, 1.03), (-0.03, 1.03))
        self.set_tokens(LIGHT)

    @staticmethod
    def _tip(x: float, y: float, data: Any) -> str:
        return f"{data}\nimportance {x:.2f}, base {y:.4f}"

    def _clicked(self, _item: Any, points: Any, *_: Any) -> None:
        if len(points):
            self.point_clicked.emit(points[0].data())

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        _style(self, tk)
        for k, g in self.groups.items():
            g.setBrush(pg.mkBrush(outcome_colour(tk, k)))
            g.setPen(pg.mkPen(None) if k != "below_min_score" else pg.mkPen(tk.cut))
        for c in self.iso:
            c.setPen(pg.mkPen(tk.muted, width=1, style=Qt.PenStyle.DotLine))
        self.cut_line.setPen(pg.mkPen(tk.returned, width=1.5, style=Qt.PenStyle.DashLine))
        self.min_line.setPen(pg.mkPen(tk.cut, width=1.5, style=Qt.PenStyle.DashLine))
        self.expected.setBrush(pg.mkBrush(tk.expected))
        self.expected.setPen(pg.mkPen(tk.text, width=0.5))
        self.selected.setBrush(pg.mkBrush(None))
        self.selected.setPen(pg.mkPen(tk.accent, width=2.5))
        self.empty.setColor(tk.muted)

    def set_trace(self, trace: Trace | None, selected: Any, expected: list[str]) -> None:
        if trace is None:
            for item in (*self.groups.values(), self.expected, self.selected):
                item.setData([], [])
            self._shown.clear()
            for c in (*self.iso, self.cut_line, self.min_line):
                c.setData([], [])
            self.empty.show()
            return
        if self.empty.isVisible():  # the first trace: axes follow the data again
            self.empty.hide()
            self.getPlotItem().enableAutoRange(y=True)
        x, y, ids = trace.importance_used, trace.base, trace.pool.ids
        for k, rows in trace.outcome_groups().items():
            key = (id(trace.pool), rows.tobytes())
            if self._shown.get(k) != key:  # a blend tick moves few points between groups
                self._shown[k] = key
                self.groups[k].setData(x[rows], y[rows], data=ids[rows])
        self._lines(trace)
        self._marks(trace, selected, expected)
        self.getPlotItem().setLabel("left", Y_NAME[trace.params.mode])

    def _lines(self, trace: Trace) -> None:
        p = trace.params
        raw = trace.stage("raw").rows
        scores = trace.score[raw]
        if len(scores):
            lo, hi = float(np.nanmin(scores)), float(np.nanmax(scores))
            for c, level in zip(self.iso, np.linspace(lo, hi, len(self.iso) + 2)[1:-1],
                                strict=True):
                c.setData(IMP_GRID, iso_base(level, p.blend, IMP_GRID))
        final = trace.stage("final").rows
        if len(final):
            last = float(trace.score[final[-1]])
            self.cut_line.setData(IMP_GRID, iso_base(last, p.blend, IMP_GRID))
        else:
            self.cut_line.setData([], [])
        if p.min_score > 0:
            self.min_line.setData(IMP_GRID, iso_base(p.min_score, p.blend, IMP_GRID))
        else:
            self.min_line.setData([], [])

    def _marks(self, trace: Trace, selected: Any, expected: list[str]) -> None:
        x, y = trace.importance_used, trace.base
        in_raw = trace.raw_rank > 0
        keys = np.array([str(v) for v in trace.pool.ids], dtype=object) if expected else None
        if expected:
            rows = np.flatnonzero(np.isin(keys, expected) & in_raw)
            self.expected.setData(x[rows], y[rows], data=trace.pool.ids[rows])
        else:
            self.expected.setData([], [])
        i = trace.row_of(selected) if selected is not None else None
        if i is not None and in_raw[i]:
            self.selected.setData([x[i]], [y[i]], data=trace.pool.ids[[i]])
        else:
            self.selected.setData([], [])
