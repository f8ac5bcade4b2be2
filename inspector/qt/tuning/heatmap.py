"""Sweep plots: a metric heatmap over the sweep's first two axes (STAGE.PARAM, any declared
parameter of the pipeline), the recall curve along its depth axis with the safe depth marked,
and that value's spread over a query set.

Every item is created once and updated in place (setImage / setData); the values drawn are
the core sweep's own arrays, never recomputed here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QFontMetricsF

from inspector.qt.pipeline.plots import MIN_PLOT, _style, empty_note, plain_axes
from inspector.qt.theme import LIGHT, Tokens
from inspector.qt.wording import show_value

MAX_LABELS = 240  # cell value labels above this many cells would be unreadable


def _position(v: Any, values: Sequence[Any]) -> float | None:
    """Where a value sits along an axis (by index; between cells when off the grid)."""
    if v in values and not (isinstance(v, bool) != isinstance(values[0], bool)):
        return float(list(values).index(v))
    nums = [x for x in values if isinstance(x, (int, float)) and not isinstance(x, bool)]
    if isinstance(v, (int, float)) and not isinstance(v, bool) and len(nums) == len(values):
        return float(np.interp(float(v), [float(x) for x in values], np.arange(len(values))))
    return None


def _ignore(ev: Any) -> None:
    ev.ignore()


class CellImage(pg.ImageItem):
    """The heatmap image; a left click reports the cell under the pointer."""

    def __init__(self, on_click: Any) -> None:
        super().__init__(axisOrder="col-major")
        self._on_click = on_click

    def mouseClickEvent(self, ev: Any) -> None:
        if ev.button() == Qt.MouseButton.LeftButton and self.image is not None:
            i, j = int(np.floor(ev.pos().x())), int(np.floor(ev.pos().y()))
            if 0 <= i < self.image.shape[0] and 0 <= j < self.image.shape[1]:
                ev.accept()
                self._on_click(i, j)


class Heatmap(pg.PlotWidget):
    """values[i, j] at the first axis's value i (x) and the second's j (y); the best region
    outlined, the window's current parameters marked with a cross. Click a cell to set it on
    the question."""

    cell_clicked = Signal(int, int)  # first axis index, second axis index

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, axisItems=plain_axes())
        self.setMinimumSize(*MIN_PLOT)
        self.setObjectName("sweepHeatmap")
        self.tokens = LIGHT
        self.values = np.zeros((0, 0))
        self.axes: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())
        self.titles = ("", "")
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        self.cmap = pg.colormap.get("viridis")
        self.image = CellImage(self.cell_clicked.emit)
        self.image.setColorMap(self.cmap)
        plot.addItem(self.image)
        self.bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=self.cmap, interactive=False,
                                   width=14)
        self.bar.setImageItem(self.image, insert_in=plot)
        plot.layout.setContentsMargins(2, 8, 2, 2)  # room for the colour bar's top label
        self.best = pg.ScatterPlotItem(symbol="s", brush=None, pxMode=False, size=0.92)
        self.current = pg.ScatterPlotItem(symbol="+", size=18)
        for item in (self.best, self.current):
            item.mouseClickEvent = _ignore  # clicks pass through the overlays to the cells
            plot.addItem(item)
        self.labels: list[pg.TextItem] = []
        self.empty = empty_note(self, "Run a sweep to fill this grid", (1, 10), (0, 1))
        self.setToolTip("Each cell is the sweep's metric at those parameter values (the colour "
                        "bar gives the scale; blank = undefined).\nOutlined: the best region. "
                        "Cross: the window's current parameters.\nClick a cell to set its "
                        "parameters on the question; the stages answer at once.")
        self.set_tokens(self.tokens)

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        _style(self, tk)
        self.empty.setColor(tk.muted)
        self.best.setPen(pg.mkPen(tk.accent, width=1.5))
        self.current.setPen(pg.mkPen("#ffffff", width=2))
        self.current.setBrush(pg.mkBrush("#ffffff"))

    def set_values(self, values: np.ndarray, xs: Sequence[Any], ys: Sequence[Any],
                   best: Sequence[tuple[int, int]], x_title: str = "", y_title: str = "",
                   levels: tuple[float, float] = (0.0, 1.0)) -> None:
        """Show a (len(xs), len(ys)) array; NaN cells stay blank."""
        self.values = np.asarray(values, np.float64)
        self.empty.hide()
        self.axes = (tuple(xs), tuple(ys))
        self.titles = (x_title, y_title)
        self.getPlotItem().setLabel("bottom", x_title)
        nf, nw = self.values.shape
        self.image.setImage(self.values, autoLevels=False)  # NaN cells are drawn transparent
        self.image.setRect(0, 0, nf, nw)
        self.bar.setLevels(levels)
        plot = self.getPlotItem()
        plot.setRange(xRange=(0, nf), yRange=(0, nw), padding=0.02)
        self._ticks()
        self.best.setData([i + 0.5 for i, _ in best], [j + 0.5 for _, j in best])
        self._label_cells(nf, nw)

    def resizeEvent(self, ev: Any) -> None:
        super().resizeEvent(ev)
        values = getattr(self, "values", None)  # resized once before __init__ ends
        if values is not None and values.size:
            self._ticks()
            self._label_cells(*values.shape)

    def _ticks(self) -> None:
        """Tick labels a line of text apart at the plot's current height (a compact dock has
        less than a line per row), and the second axis's title as long as fits."""
        (xs, ys), plot = self.axes, self.getPlotItem()
        left = plot.getAxis("left")
        room = max(plot.getViewBox().height(), 1.0)
        line = QFontMetricsF(left.font()).height()
        step_f = max(1, int(np.ceil(len(xs) / 14)))
        plot.getAxis("bottom").setTicks([[(i + 0.5, show_value(f)) for i, f in enumerate(xs)
                                          if i % step_f == 0], []])
        step_w = max(1, int(np.ceil(len(ys) / 12)), int(np.ceil(line * len(ys) / room)))
        left.setTicks([[(j + 0.5, show_value(w)) for j, w in enumerate(ys)
                        if j % step_w == 0], []])
        title = self.titles[1]
        if QFontMetricsF(left.label.font()).horizontalAdvance(title) + 8 > room:
            title = title.rpartition(".")[2]
        if left.labelText != title:
            plot.setLabel("left", title)

    def _label_cells(self, nf: int, nw: int) -> None:
        """Value labels when cells are big enough to hold them (hover-free reading)."""
        rect = self.getPlotItem().getViewBox().sceneBoundingRect()
        roomy = rect.height() / max(nw, 1) >= 15 and rect.width() / max(nf, 1) >= 30
        n = nf * nw if nf * nw <= MAX_LABELS and roomy else 0
        plot = self.getPlotItem()
        while len(self.labels) < n:
            item = pg.TextItem("", anchor=(0.5, 0.5))
            plot.addItem(item)
            self.labels.append(item)
        for k, item in enumerate(self.labels):
            item.setVisible(k < n)
            if k < n:
                i, j = divmod(k, nw)
                v = self.values[i, j]
                item.setText("" if np.isnan(v) else f"{v:.2f}".rstrip("0").rstrip(".")
                             if v not in (0.0, 1.0) else f"{v:g}")
                item.setColor("#111111" if not np.isnan(v) and v > 0.6 else "#f4f4f4")
                item.setPos(i + 0.5, j + 0.5)

    def mark_current(self, x_value: Any, y_value: Any) -> None:
        """A cross at the window's parameters (between cells when they are off the grid;
        none when a value has no place on its axis)."""
        xs, ys = self.axes
        x = _position(x_value, xs) if xs else None
        y = _position(y_value, ys) if ys else None
        if x is None or y is None:
            self.current.setData([], [])
            return
        self.current.setData([x + 0.5], [y + 0.5])

    def cell_center(self, i: int, j: int) -> QPointF:
        """Widget coordinates of a cell's centre (for tests and keyboard users)."""
        vb = self.getPlotItem().getViewBox()
        return self.mapFromScene(vb.mapViewToScene(QPointF(i + 0.5, j + 0.5)))


class SafeCurve(pg.PlotWidget):
    """Scoped recall along the sweep's depth axis for one query (the core's curve), with the
    safe depth drawn as a vertical line."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, axisItems=plain_axes())
        self.setMinimumSize(*MIN_PLOT)
        self.setObjectName("safeCurve")
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setLabel("bottom", "depth")
        plot.setLabel("left", "scoped recall")
        plot.setYRange(-0.03, 1.05, padding=0)
        self.curve = pg.PlotDataItem(symbol="o", symbolSize=6)
        self.safe = pg.InfiniteLine(angle=90, movable=False,
                                    label="safe {value:g}",
                                    labelOpts={"position": 0.12, "anchors": [(0, 1), (0, 1)]})
        for item in (self.curve, self.safe):
            plot.addItem(item)
        self.safe.hide()  # no sweep yet: no safe value to claim
        self.empty = empty_note(self, "Run a sweep to see recall by depth", (1, 10),
                                (-0.03, 1.05))
        self.setToolTip("Scoped recall of this query at each value of the sweep's depth "
                        "parameter, every other parameter as asked.\nThe solid line is the "
                        "smallest value reaching full recall (the safe depth).")
        self.set_tokens(LIGHT)

    def set_tokens(self, tk: Tokens) -> None:
        _style(self, tk)
        self.curve.setPen(pg.mkPen(tk.scoped, width=2))
        self.curve.setSymbolBrush(pg.mkBrush(tk.scoped))
        self.curve.setSymbolPen(pg.mkPen(tk.scoped))
        self.safe.setPen(pg.mkPen(tk.returned, width=2))
        self.safe.label.setColor(tk.returned)
        self.empty.setColor(tk.muted)

    def set_curve(self, curve: Sequence[tuple[Any, float | None]], safe: float | None,
                  key: str = "depth") -> None:
        pts = [(float(v), r) for v, r in curve
               if isinstance(v, (int, float)) and not isinstance(v, bool)]
        xs = np.array([f for f, _ in pts], np.float64)
        ys = np.array([np.nan if r is None else r for _, r in pts], np.float64)
        self.curve.setData(xs, ys, connect="finite")
        self.getPlotItem().setLabel("bottom", key)
        self.empty.setVisible(not len(xs))
        self.safe.setVisible(safe is not None)
        if safe is not None:
            self.safe.setValue(safe)
        lo = min([*xs.tolist(), *(v for v in (safe,) if v is not None)], default=1)
        hi = max([*xs.tolist(), *(v for v in (safe,) if v is not None)], default=2)
        self.getPlotItem().setXRange(lo - 0.3, hi + 0.3, padding=0)


class SafeShare(pg.PlotWidget):
    """Over a query set: the share of queries at full scoped recall for each value of the
    depth axis (summarize_safe's share_full_at) and each query's own safe value as a tick."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, axisItems=plain_axes())
        self.setMinimumSize(*MIN_PLOT)
        self.setObjectName("safeShare")
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setLabel("bottom", "depth")
        plot.setLabel("left", "share at full recall")
        plot.setYRange(-0.03, 1.05, padding=0)
        self.share = pg.PlotDataItem(stepMode=None, symbol="s", symbolSize=5)
        self.ticks = pg.ScatterPlotItem(symbol="|", size=14)
        plot.addItem(self.share)
        plot.addItem(self.ticks)
        self.empty = empty_note(self, "Sweep a query set to see this", (1, 10), (-0.03, 1.05))
        self.setToolTip("Share of the set's queries whose scoped recall is 1 at each value of "
                        "the depth axis; ticks along the bottom are each query's safe value.")
        self.set_tokens(LIGHT)

    def set_tokens(self, tk: Tokens) -> None:
        _style(self, tk)
        self.empty.setColor(tk.muted)
        self.share.setPen(pg.mkPen(tk.returned, width=2))
        self.share.setSymbolBrush(pg.mkBrush(tk.returned))
        self.ticks.setPen(pg.mkPen(tk.accent, width=2))

    def set_summary(self, summary: dict[str, Any], factors: Sequence[float]) -> None:
        pts = [(float(s["value"]), s["share"]) for s in summary.get("share_full_at", [])
               if s["share"] is not None and isinstance(s["value"], (int, float))
               and not isinstance(s["value"], bool)]
        self.share.setData([x for x, _ in pts], [y for _, y in pts])
        self.empty.setVisible(not pts)
        self.ticks.setData(list(factors), [0.0] * len(factors))
