"""The rank-shift chart: the plotted stage's rows, rank before it joined to rank after it, with
the text of the top rows beside them; and its arithmetic on ranks and pixels (how many ranks
it shows, which rows get a label when rows are closer than a line of text: the rows that
matter most first, then every other row a line of room from those kept), re-run on every
resize."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetricsF, QTextOption

from inspector.core.engine.flow.runner import FlowTrace, StageRun
from inspector.qt.pipeline.plot_box import BUMP, MIN_PLOT
from inspector.qt.pipeline.plots import _style, plain_axes
from inspector.qt.theme import LIGHT, Tokens

X_RANGE = (-0.35, 2.0)  # before at 0, after at 1, labels from LABEL_X
LABEL_X, N_LABELS = 1.04, 10


STEPS = (1, 2, 5)  # round rank steps: 1, 2, 5, 10, 20, 50, ...


def label_places(ranks: Iterable[int], pitch: float, need: float,
                 height: float | None = None, loose: int | None = None) -> dict[int, float]:
    """Where each rank's label goes, in pixels from the top of the view, taking the ranks in
    the order given and keeping those whose label stays `need` pixels from every label kept
    before it (rows `pitch` pixels apart). A label sits on its row, moved in where the row
    is nearer an edge of a view `height` pixels high than half a line; the `loose` rank's
    (the selected row, drawn in its colour) may move up to half a line to find room."""
    kept: dict[int, float] = {}
    for r in ranks:
        if r in kept:
            continue
        y = (r - 0.5) * pitch
        lo, hi = (y - need / 2, y + need / 2) if r == loose else (y, y)
        if height is not None:
            top, bottom = need / 2, max(height - need / 2, need / 2)
            lo, hi = min(max(lo, top), bottom), max(min(hi, bottom), top)
        tries = [min(max(y, lo), hi), *(k + d for k in kept.values() for d in (need, -need))]
        fits = [c for c in tries if lo - 1e-9 <= c <= hi + 1e-9
                and all(abs(c - k) >= need - 1e-9 for k in kept.values())]
        if fits:
            kept[r] = min(fits, key=lambda c: abs(c - y))
    return dict(sorted(kept.items()))


def spaced(ranks: Iterable[int], pitch: float, need: float,
           height: float | None = None) -> list[int]:
    """The ranks `label_places` keeps, sorted."""
    return list(label_places(ranks, pitch, need, height))


def labelled_ranks(top: int, pitch: float, need: float, selected: int | None = None,
                   height: float | None = None) -> dict[int, float]:
    """The ranks to label and where: rank 1, the selected rank (if any), then ranks
    2..top in order, each only where its line of text clears the ones kept."""
    first = [1, selected] if selected is not None else [1]
    return label_places([*first, *range(2, top + 1)], pitch, need, height,
                        selected) if top > 0 else {}


def round_step(pitch: float, need: float, most: int) -> int:
    """The smallest round step (1, 2, 5, 10, ...) whose rows are `need` pixels apart;
    `most` when even that is too close."""
    scale = 1
    while scale <= most:
        for s in STEPS:
            if s * scale * pitch >= need:
                return min(s * scale, most)
        scale *= 10
    return most


def rank_ticks(shown: int, pitch: float, need: float) -> list[int]:
    """Rank-axis ticks from 1 to `shown` whose labels do not touch: 1 always, then a round
    step (odd ranks at step 2; multiples of the step from 5 up)."""
    step = round_step(pitch, need, max(shown, 1))
    if step <= 2:
        return list(range(1, shown + 1, step))
    return spaced([1, *range(step, shown + 1, step)], pitch, need)


def shown_ranks(n: int, limit: int) -> int:
    """How many ranks the rank-shift chart shows: all of them when there are few, else
    twice the limit (at least 12)."""
    return n if n <= 20 else min(n, max(2 * limit, 12))


def ranks(t: FlowTrace, st: StageRun) -> tuple[list[str], list[str]]:
    """(ids in their order before, ids in their order after) the stage; a fetch's rows are
    joined to the final list (where the rows it fetched end up)."""
    if st.role == "fetch":
        return st.ids, t.final.ids
    return [s.id for s in st.rows_in], st.ids


class BumpChart(pg.PlotWidget):
    """The plotted stage's rows: rank before (left) joined to rank after (right)."""

    point_clicked = Signal(object)
    TITLE, key = BUMP.title, staticmethod(BUMP.key)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, axisItems=plain_axes())
        self.setObjectName("bumpChart")
        self.setMinimumSize(*MIN_PLOT)
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        self.setToolTip("Each row's rank before the plotted stage (left) joined to its rank "
                        "after it (right; for a fetch, its rank in the final list). Green lines "
                        "end in the results; a row the stage dropped ends at the bottom edge; "
                        "the dashed line is the limit. Click a dot to select its row.")
        plot.invertY(True)
        plot.setLabel("left", "rank")
        # hundreds of thin grey lines: antialiasing them costs ~8 ms a tick at 1,000 rows
        self.others = pg.PlotCurveItem(connect="pairs", antialias=False)
        self.kept = pg.PlotCurveItem(connect="pairs", antialias=False)  # 2 px wide + AA: ~10 ms
        self.chosen = pg.PlotCurveItem()
        self.dots = pg.ScatterPlotItem(size=6, hoverable=True)
        # "limit" starts at the view's left edge, above the line (centred it was cut there)
        self.limit_line = pg.InfiniteLine(angle=0, movable=False, label="limit",
                                          labelOpts={"position": 0.01,
                                                     "anchors": [(0, 1), (0, 1)]})
        # the dashed limit stops at the "after" dots instead of striking through a label
        self.limit_line.setSpan(0, (LABEL_X - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0]))
        self.empty = pg.TextItem("", anchor=(0.5, 0.5))  # labels: the top ranks and the selected
        self.empty.textItem.document().setDefaultTextOption(
            QTextOption(Qt.AlignmentFlag.AlignCenter))
        self.labels = [pg.TextItem("", anchor=(0, 0.5)) for _ in range(N_LABELS + 1)]
        self._last: tuple[Any, Any, int] | None = None  # what the text was fitted to
        self._words = ("before", "after")
        self.labelled: list[int] = []  # the ranks the labels show, in order
        for item in (self.others, self.kept, self.chosen, self.dots, self.limit_line,
                     self.empty, *self.labels):
            plot.addItem(item)
        self.dots.sigClicked.connect(lambda _i, pts, *_: pts and
                                     self.point_clicked.emit(pts[0].data()))
        self._ticks: tuple[str, str] | None = None
        plot.getViewBox().sigResized.connect(self._fit_text)  # room per row changed
        plot.getViewBox().sigResized.connect(self._fit_ticks)
        self.set_tokens(LIGHT)
        self._fit_ticks()
        self.set_trace(None, None, None)

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        _style(self, tk)
        self.others.setPen(pg.mkPen(tk.out, width=1))
        self.kept.setPen(pg.mkPen(tk.returned, width=2))
        self.chosen.setPen(pg.mkPen(tk.accent, width=3.5))
        self.dots.setPen(pg.mkPen(None))
        self.limit_line.setPen(pg.mkPen(tk.cut, width=1, style=Qt.PenStyle.DashLine))
        self.limit_line.label.setColor(tk.cut)
        self.empty.setColor(tk.muted)
        self._fit_text()

    def set_trace(self, trace: FlowTrace | None, stage: StageRun | None,
                  selected: Any) -> None:
        before_ids, after_ids = ranks(trace, stage) if trace is not None and stage is not None \
            else ([], [])
        if trace is None or not before_ids:
            self._last = None
            for c in (self.others, self.kept, self.chosen):
                c.setData([], [])
            self.dots.setData([], [])
            for lab in self.labels:
                lab.setText("")
            self.limit_line.hide()  # no ranks: no limit to draw among them
            self.getPlotItem().getAxis("left").setTicks(None)  # not an earlier trace's ticks
            self._words = ("before", "after")  # nor its stage's name (another store's)
            self._fit_ticks()
            self.empty.setText("No rows came into this stage" if trace is not None else
                               BUMP.empty)
            self._fit_text()  # wrapped to the width the chart has
            self.empty.setPos(sum(X_RANGE) / 2, 5.5)
            self.getPlotItem().setRange(xRange=X_RANGE, yRange=(0.5, 10.5), padding=0)
            return
        fetch = stage.role == "fetch"
        self._words = (f"in {stage.name}", "final") if fetch else \
            (f"before {stage.name}", f"after {stage.name}")
        self._ticks = None
        self._fit_ticks()
        self.empty.setText("")
        self.limit_line.show()
        limit = trace.limit
        after_rank = {rid: i for i, rid in enumerate(after_ids, start=1)}
        final = set(trace.final.ids)
        n = len(before_ids)
        shown = shown_ranks(max(n, len(after_ids)), limit)
        edge = shown + 0.45  # a line to a rank below the view (or dropped) ends at its edge
        before = np.arange(1, n + 1, dtype=float)
        after = np.array([after_rank.get(r, edge) for r in before_ids], dtype=float)
        keep = np.minimum(before, after) <= shown
        ids = np.array(before_ids, dtype=object)[keep]
        before, after = before[keep], after[keep]
        returned = np.array([r in final for r in ids], dtype=bool)
        self._pairs(self.kept, before[returned], after[returned], edge)
        self._pairs(self.others, before[~returned], after[~returned], edge)
        left, right = before <= shown, after < edge
        tk = self.tokens
        kept, other = pg.mkBrush(tk.returned), pg.mkBrush(tk.out)
        self.dots.setData(np.concatenate([np.zeros(left.sum()), np.ones(right.sum())]),
                          np.concatenate([before[left], after[right]]),
                          data=np.concatenate([ids[left], ids[right]]),
                          brush=[kept if r else other for r in
                                 np.concatenate([returned[left], returned[right]])])
        sel = str(selected) if selected is not None else None
        if sel is not None and sel in before_ids:
            self.chosen.setData([0, 1], [min(before_ids.index(sel) + 1, edge),
                                         min(after_rank.get(sel, edge), edge)])
        else:
            self.chosen.setData([], [])
        self.limit_line.setPos(limit + 0.5)
        self.getPlotItem().setRange(xRange=X_RANGE, yRange=(0.5, shown + 0.5), padding=0)
        texts = {s.id: s.row.text for st in trace.stages for s in (*st.rows_in, *st.rows)}
        self._last = ((after_ids, texts, after_rank.get(sel) if sel else None), selected,
                      shown)
        self._fit_text()

    @staticmethod
    def _pairs(curve: pg.PlotCurveItem, before: np.ndarray, after: np.ndarray,
               edge: float) -> None:
        x = np.tile([0.0, 1.0], len(before))
        y = np.empty(2 * len(before))
        y[0::2], y[1::2] = np.minimum(before, edge), np.minimum(after, edge)
        curve.setData(x, y)

    def _fit_text(self, *_: Any) -> None:
        """Rank ticks and row labels for the room the chart has now: rows closer than a line
        of text are thinned out, so no two texts overlap at any height (re-run on resize)."""
        # the empty chart's sentence wraps to the plot's width (a narrow chart cut it)
        self.empty.textItem.setTextWidth(max(60.0, self.getPlotItem().getViewBox().width() - 16))
        if self._last is None:
            return
        trace, selected, shown = self._last
        vb = self.getPlotItem().getViewBox()
        pitch = vb.height() / max(shown, 1)  # pixels from one rank to the next
        axis = self.getPlotItem().getAxis("left")
        ticks = rank_ticks(shown, pitch, QFontMetricsF(axis.font()).height())
        axis.setTicks([[(v, str(v)) for v in ticks]])
        self._label(trace, selected, shown, pitch)

    def _fit_ticks(self) -> None:
        """"before blending" and "after blending" where the chart has room for them centred
        on their column, "before" and "after" where it has not (pyqtgraph drops a tick label
        that would reach past the axis, without a word)."""
        vb, axis = self.getPlotItem().getViewBox(), self.getPlotItem().getAxis("bottom")
        room = 2 * vb.width() * (0 - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0])
        long = max(QFontMetricsF(axis.font()).horizontalAdvance(w) for w in self._words) \
            + 8 <= room
        words = self._words if long else ("before", "after")
        if self._ticks != words:
            self._ticks = words
            axis.setTicks([[(0, words[0]), (1, words[1])]])

    def _label(self, trace: Any, selected: Any, shown: int, pitch: float) -> None:
        """The text of the top rows after the stage (and the selected one) beside their
        position, elided to the room right of the chart; only rows a line of text apart."""
        after_ids, texts, mine = trace
        vb = self.getPlotItem().getViewBox()
        fm = QFontMetricsF(self.labels[0].textItem.font())
        room = vb.width() * (X_RANGE[1] - LABEL_X) / (X_RANGE[1] - X_RANGE[0]) - 6
        need = fm.height() + 1
        places = labelled_ranks(min(N_LABELS, shown, len(after_ids)), pitch, need,
                                mine if mine is not None and 0 < mine <= shown else None,
                                vb.height()) if room > 30 else {}
        ranks_shown = list(places)
        tk = self.tokens
        self.labelled = ranks_shown
        for n, lab in enumerate(self.labels):
            if n >= len(ranks_shown):
                lab.setText("")
                continue
            r = ranks_shown[n]
            text = " ".join(str(texts.get(after_ids[r - 1], "")).split())
            lab.setText(fm.elidedText(text, Qt.TextElideMode.ElideRight, room),
                        tk.accent if r == mine else tk.text)
            lab.setPos(LABEL_X, 0.5 + places[r] / pitch if pitch > 0 else r)
