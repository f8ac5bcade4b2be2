"""pyqtgraph views of one run: the plotted stage's scores before against after (the rank
shift is in rank_chart) and the plots' shared style (their title-and-key box, which the window
builds before pyqtgraph is imported, is plot_box). Items are made once and updated with setData
on every tick."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QFontMetricsF, QTextOption
from PySide6.QtWidgets import QGraphicsItem

from inspector.core.engine.flow.runner import FlowTrace, StageRun
from inspector.qt.pipeline.plot_box import GROUPS, MIN_PLOT, SCATTER
from inspector.qt.theme import LIGHT, Tokens

EMPTY_RANGE = (-0.03, 1.03)  # the score plot with no answer: scores 0..1

# every plot of the window imports this module first (the tuning dock's too): smooth lines
pg.setConfigOptions(antialias=True)


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


def stage_points(t: FlowTrace, st: StageRun) -> dict[str, tuple[list[float], list[float],
                                                                  list[str]]]:
    """(x, y, ids) per group for the stage: score before against score after (a dropped row
    on y = x), or, for a fetch, rank against score; grouped by what became of each row."""
    final = set(t.final.ids)
    out: dict[str, tuple[list[float], list[float], list[str]]] = {
        k: ([], [], []) for k in GROUPS}

    def put(group: str, x: float, y: float, rid: str) -> None:
        xs, ys, ids = out[group]
        xs.append(x)
        ys.append(y)
        ids.append(rid)

    if st.role == "fetch":
        for i, s in enumerate(st.rows, start=1):
            put("returned" if s.id in final else "kept", float(i), s.score, s.id)
        return out
    after = {s.id: s.score for s in st.rows}
    for s in st.rows_in:
        if s.id in after:
            put("returned" if s.id in final else "kept", s.score, after[s.id], s.id)
        else:
            put("dropped", s.score, s.score, s.id)
    return out


def thresholds(st: StageRun) -> list[float]:
    """The stage's threshold parameters' values (a min score), as declared."""
    from inspector.core.engine.flow.registry import kind_of

    decls = {d.name: d for d in kind_of(st.kind).params}
    return [float(v) for k, v in st.params.items() if k in decls
            and decls[k].effect == "threshold" and isinstance(v, (int, float))
            and not isinstance(v, bool) and np.isfinite(v)]


class ScoreScatter(pg.PlotWidget):
    """The plotted stage's rows: score before it (x) against score after it (y), so a
    re-scoring moves points off the diagonal and a cut leaves them red on it; for a fetch,
    each row's rank against its score. Coloured by what became of each row."""

    point_clicked = Signal(object)  # row id
    TITLE, key = SCATTER.title, staticmethod(SCATTER.key)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, axisItems=plain_axes())
        self.setObjectName("scoreScatter")
        self.setMinimumSize(*MIN_PLOT)
        self.tokens: Tokens = LIGHT
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        self.setToolTip("The rows of the stage a slider drives: each row's score before the "
                        "stage (x) against its score after it (y). A re-scoring moves points "
                        "off the dotted diagonal; rows the stage dropped sit on it, red. For a "
                        "fetch: each row's rank (x) against its score. Click a point to select "
                        "its row.")
        self.groups = {k: pg.ScatterPlotItem(size=8, name=lb, hoverable=True, tip=self._tip)
                       for k, lb in GROUPS.items()}
        self.diagonal = pg.PlotCurveItem(antialias=False)
        self.min_line = pg.InfiniteLine(angle=0, movable=False)
        self.expected = pg.ScatterPlotItem(size=16, symbol="star", name="expected")
        self.selected = pg.ScatterPlotItem(size=18, symbol="o")
        plot.addItem(self.diagonal, ignoreBounds=True)
        plot.addItem(self.min_line, ignoreBounds=True)
        for item in (*self.groups.values(), self.expected, self.selected):
            plot.addItem(item)
            item.sigClicked.connect(self._clicked)
        self.stage: str | None = None
        self._shown: dict[str, Any] = {}
        self.empty = empty_note(self, SCATTER.empty, EMPTY_RANGE, EMPTY_RANGE)
        self.set_tokens(LIGHT)

    @staticmethod
    def _tip(x: float, y: float, data: Any) -> str:
        return f"{data}\n{x:.4g} → {y:.4f}"

    def _clicked(self, _item: Any, points: Any, *_: Any) -> None:
        if len(points):
            self.point_clicked.emit(points[0].data())

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        _style(self, tk)
        colours = {"returned": tk.returned, "kept": tk.scoped, "dropped": tk.cut}
        for k, g in self.groups.items():
            g.setBrush(pg.mkBrush(colours[k]))
            g.setPen(pg.mkPen(None))
        self.diagonal.setPen(pg.mkPen(tk.muted, width=1, style=Qt.PenStyle.DotLine))
        self.min_line.setPen(pg.mkPen(tk.cut, width=1.5, style=Qt.PenStyle.DashLine))
        self.expected.setBrush(pg.mkBrush(tk.expected))
        self.expected.setPen(pg.mkPen(tk.text, width=0.5))
        self.selected.setBrush(pg.mkBrush(None))
        self.selected.setPen(pg.mkPen(tk.accent, width=2.5))
        self.empty.setColor(tk.muted)

    def set_trace(self, trace: FlowTrace | None, stage: StageRun | None, selected: Any,
                  expected: list[str]) -> None:
        if trace is None or stage is None:
            self.stage = None
            for item in (*self.groups.values(), self.expected, self.selected):
                item.setData([], [])
            self._shown.clear()
            self.diagonal.setData([], [])
            self.min_line.hide()
            # nothing of an earlier answer (another store's stage names and score range, in
            # which the note sat out of view): the empty range and no stage's axis names
            plot = self.getPlotItem()
            plot.disableAutoRange()
            plot.setRange(xRange=EMPTY_RANGE, yRange=EMPTY_RANGE, padding=0)
            plot.setLabel("bottom", "")
            plot.setLabel("left", "")
            self.empty.show()
            return
        if self.empty.isVisible():  # the first trace: axes follow the data again
            self.empty.hide()
            self.getPlotItem().enableAutoRange()
        self.stage = stage.name
        points = stage_points(trace, stage)
        for k, (x, y, ids) in points.items():
            key = (tuple(x), tuple(y), tuple(ids))
            if self._shown.get(k) != key:  # a tick moves few points between groups
                self._shown[k] = key
                self.groups[k].setData(x, y, data=ids)
        fetch = stage.role == "fetch"
        plot = self.getPlotItem()
        plot.setLabel("bottom", f"rank in {stage.name}" if fetch else
                      f"score before {stage.name}")
        plot.setLabel("left", f"score in {stage.name}" if fetch else
                      f"score after {stage.name}")
        xs = [v for x, _, _ in points.values() for v in x]
        if xs and not fetch:
            lo, hi = min(xs), max(xs)
            self.diagonal.setData([lo, hi], [lo, hi])
        else:
            self.diagonal.setData([], [])
        cuts = thresholds(stage)
        self.min_line.setVisible(bool(cuts))
        if cuts:
            self.min_line.setPos(cuts[0])
        where = {rid: (x[i], y[i]) for x, y, ids in points.values()
                 for i, rid in enumerate(ids)}
        stars = [where[r] for r in expected if r in where]
        self.expected.setData([p[0] for p in stars], [p[1] for p in stars],
                              data=[r for r in expected if r in where])
        if selected is not None and str(selected) in where:
            x, y = where[str(selected)]
            self.selected.setData([x], [y], data=[str(selected)])
        else:
            self.selected.setData([], [])
