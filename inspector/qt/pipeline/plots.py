"""pyqtgraph views of one trace: base score against importance with the blend's iso-score
lines, and the rank shift from unblended to blended order. Items are made once and updated
with setData on every tick."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QGraphicsItem, QLabel, QVBoxLayout, QWidget

from inspector.core.engine.blend import iso_base
from inspector.core.engine.trace import OUTCOME_LABELS, Trace
from inspector.qt.theme import LIGHT, Tokens, outcome_colour

IMP_GRID = np.linspace(0.0, 1.0, 101)
N_LABELS = 10
Y_NAME = {"vector": "vector score 1/(1+d)", "fts": "full-text score", "hybrid": "fused score (RRF)"}


def _style(widget: pg.PlotWidget, tk: Tokens) -> None:
    widget.setBackground(tk.background)
    plot = widget.getPlotItem()
    for name in ("left", "bottom"):
        ax = plot.getAxis(name)
        # replaying an axis's QPicture costs ~2 ms per paint; cache it as a pixmap instead
        ax.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        ax.enableAutoSIPrefix(False)
        ax.setPen(pg.mkPen(tk.grid))
        ax.setTextPen(pg.mkPen(tk.text))
        ax.label.setDefaultTextColor(pg.mkColor(tk.text))


def key_html(tk: Tokens, title: str, items: list[tuple[str, str]]) -> str:
    """A title with a colour key, for a word-wrapping QLabel above the plot: a legend would
    cover points, and a long pyqtgraph title widens the plot past its view."""
    bullets = " ".join(f"<span style='color:{c}'>●</span>&nbsp;{html.escape(t)}"
                       for c, t in items)
    return (f"<b>{html.escape(title)}</b> &nbsp;<span style='color:{tk.muted}; "
            f"font-size:8pt'>{bullets}</span>")


class PlotBox(QWidget):
    """A plot under its title-and-key line."""

    became_visible = Signal()  # a hidden plot skips updates and catches up when shown

    def __init__(self, plot: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = plot
        self.header = QLabel("", objectName="plotKey")
        self.header.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.header)
        lay.addWidget(plot, 1)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.became_visible.emit()

    def set_tokens(self, tk: Tokens) -> None:
        self.plot.set_tokens(tk)
        self.header.setText(key_html(tk, self.plot.TITLE, self.plot.key(tk)))


class ScoreScatter(pg.PlotWidget):
    """Each raw candidate at (importance used, base score); dotted lines are equal blended
    score at the current blend weight, so turning w up visibly tilts them."""

    point_clicked = Signal(object)  # row id
    TITLE = "Score vs importance"

    @staticmethod
    def key(tk: Tokens) -> list[tuple[str, str]]:
        return [*((outcome_colour(tk, k), label) for k, label in OUTCOME_LABELS.items()
                  if k != "not_fetched"), (tk.expected, "★ expected")]

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("scoreScatter")
        self.tokens = LIGHT
        plot = self.getPlotItem()
        plot.setLabel("bottom", "importance used")
        plot.setMenuEnabled(False)
        plot.setXRange(-0.03, 1.03, padding=0)
        plot.enableAutoRange(x=False, y=True)
        self.setToolTip("Each raw candidate by importance (x) and base score (y). Dotted curves: "
                        "equal blended score at the current blend weight (flat at w = 0, "
                        "tilted as w grows).\nGreen dashed: the score of the last returned row; "
                        "red dashed: the min score. Click a point to select its row.")
        self.groups = {k: pg.ScatterPlotItem(size=8, name=label, hoverable=True,
                                             tip=self._tip)
                       for k, label in OUTCOME_LABELS.items() if k != "not_fetched"}
        self.iso = [pg.PlotCurveItem() for _ in range(4)]
        # wide antialiased strokes are the raster engine's slowest path: keep these plain
        self.cut_line = pg.PlotCurveItem(name="iso-score through last result", antialias=False)
        self.min_line = pg.PlotCurveItem(name="min score", antialias=False)
        self.expected = pg.ScatterPlotItem(size=16, symbol="star", name="expected")
        self.selected = pg.ScatterPlotItem(size=18, symbol="o")
        for item in (*self.iso, self.cut_line, self.min_line):
            plot.addItem(item, ignoreBounds=True)
        for item in (*self.groups.values(), self.expected, self.selected):
            plot.addItem(item)
        for g in self.groups.values():
            g.sigClicked.connect(self._clicked)
        self._shown: dict[str, tuple[int, bytes]] = {}
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

    def set_trace(self, trace: Trace | None, selected: Any, expected: list[str]) -> None:
        if trace is None:
            for item in (*self.groups.values(), self.expected, self.selected):
                item.setData([], [])
            self._shown.clear()
            for c in (*self.iso, self.cut_line, self.min_line):
                c.setData([], [])
            return
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
            self.expected.setData(x[rows], y[rows])
        else:
            self.expected.setData([], [])
        i = trace.row_of(selected) if selected is not None else None
        if i is not None and in_raw[i]:
            self.selected.setData([x[i]], [y[i]])
        else:
            self.selected.setData([], [])


class BumpChart(pg.PlotWidget):
    """Scoped rows' rank before blending (left) joined to their rank after (right)."""

    point_clicked = Signal(object)
    TITLE = "Rank shift from blending"

    @staticmethod
    def key(tk: Tokens) -> list[tuple[str, str]]:
        return [(tk.returned, "returned"), (tk.out, "not returned"), (tk.accent, "selected")]

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("bumpChart")
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        self.setToolTip("Each in-scope candidate's rank by base score (left) joined to its rank "
                        "after importance blending (right). Green lines end in the results; "
                        "the dashed line is the limit. Click a dot to select its row.")
        plot.invertY(True)
        plot.setLabel("left", "rank")
        plot.getAxis("bottom").setTicks([[(0, "before blending"), (1, "after blending")]])
        # hundreds of thin grey lines: antialiasing them costs ~8 ms a tick at 1,000 rows
        self.others = pg.PlotCurveItem(connect="pairs", antialias=False)
        self.kept = pg.PlotCurveItem(connect="pairs", antialias=False)  # 2 px wide + AA: ~10 ms
        self.chosen = pg.PlotCurveItem()
        self.dots = pg.ScatterPlotItem(size=6, hoverable=True)
        self.limit_line = pg.InfiniteLine(angle=0, movable=False, label="limit",
                                          labelOpts={"position": 0.05})
        self.empty = pg.TextItem("", anchor=(0.5, 0.5))
        self.labels = [pg.TextItem("", anchor=(0, 0.5)) for _ in range(N_LABELS)]
        for item in (self.others, self.kept, self.chosen, self.dots, self.limit_line,
                     self.empty, *self.labels):
            plot.addItem(item)
        self.dots.sigClicked.connect(lambda _i, pts, *_: pts and
                                     self.point_clicked.emit(pts[0].data()))
        self.set_tokens(LIGHT)

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        _style(self, tk)
        self.others.setPen(pg.mkPen(tk.out, width=1))
        self.kept.setPen(pg.mkPen(tk.returned, width=2))
        self.chosen.setPen(pg.mkPen(tk.accent, width=3.5))
        self.dots.setPen(pg.mkPen(None))
        self.dots.setBrush(pg.mkBrush(tk.scoped))
        self.limit_line.setPen(pg.mkPen(tk.cut, width=1, style=Qt.PenStyle.DashLine))
        self.limit_line.label.setColor(tk.cut)
        self.empty.setColor(tk.muted)
        for lab in self.labels:
            lab.setColor(tk.text)

    def set_trace(self, trace: Trace | None, selected: Any) -> None:
        rows = trace.stage("scoped").rows if trace is not None else np.zeros(0, np.int64)
        if trace is None or not len(rows):
            for c in (self.others, self.kept, self.chosen):
                c.setData([], [])
            self.dots.setData([], [])
            for lab in self.labels:
                lab.setText("")
            self.empty.setText("No in-scope candidates to rank" if trace is not None else "")
            self.empty.setPos(0.5, 5)
            self.getPlotItem().setRange(xRange=(-0.1, 1.1), yRange=(0.5, 10.5), padding=0)
            return
        self.empty.setText("")
        limit = trace.params.limit
        shown = min(len(rows), max(2 * limit, 12))
        # only lines that touch the visible ranks: a thousand hidden segments cost ~10 ms
        rows = rows[np.minimum(trace.rank_before[rows], trace.rank_after[rows]) <= shown]
        before, after = trace.rank_before[rows], trace.rank_after[rows]
        returned = trace.final_rank[rows] > 0
        self._pairs(self.kept, before[returned], after[returned])
        self._pairs(self.others, before[~returned], after[~returned])
        ids = trace.pool.ids[rows]
        left, right = before <= shown, after <= shown
        self.dots.setData(np.concatenate([np.zeros(left.sum()), np.ones(right.sum())]),
                          np.concatenate([before[left], after[right]]),
                          data=np.concatenate([ids[left], ids[right]]))
        i = trace.row_of(selected) if selected is not None else None
        if i is not None and trace.rank_after[i]:
            self.chosen.setData([0, 1], [trace.rank_before[i], trace.rank_after[i]])
        else:
            self.chosen.setData([], [])
        self._label(trace)
        self.limit_line.setPos(limit + 0.5)
        step = 1 if shown <= 15 else 5 if shown <= 60 else 10
        self.getPlotItem().getAxis("left").setTicks(
            [[(v, str(v)) for v in dict.fromkeys([1, *range(step, shown + 1, step)])]])
        self.getPlotItem().setRange(xRange=(-0.35, 2.0), yRange=(0.5, shown + 0.5),
                                    padding=0)

    @staticmethod
    def _pairs(curve: pg.PlotCurveItem, before: np.ndarray, after: np.ndarray) -> None:
        x = np.tile([0.0, 1.0], len(before))
        y = np.empty(2 * len(before))
        y[0::2], y[1::2] = before, after
        curve.setData(x, y)

    def _label(self, trace: Trace) -> None:
        """The text of the top blended rows, beside their final position."""
        col = trace.pool.roles.get("text")
        top = trace.stage("blended").rows[:N_LABELS]
        for n, lab in enumerate(self.labels):
            if n < len(top) and col:
                text = " ".join(str(trace.pool.columns[col][int(top[n])]).split())
                lab.setText(text if len(text) <= 46 else text[:45] + "…")
                lab.setPos(1.04, n + 1)
            else:
                lab.setText("")
