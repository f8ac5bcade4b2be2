"""The Map tab: the rows the window's question fetches and its query in 2-D (core.poolmap's
PCA over the question's probe, the truth's deep run, as `inspector report` maps it): rows a
filter of the probe passes against the ones it drops, filled inside the run's cut (its fetch)
and hollow beyond it. The cut is by rank in the full vector space, so it is drawn as what it
is, a mark on each point, never as a 2-D circle.

Vectors are read from the store in a worker, after the answer settles (a slider drag makes one
request, not fifty), and only while the tab is visible; stale answers are dropped."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.core.analysis.poolmap import PoolMap
from inspector.qt.pipeline.plots import MIN_PLOT, _style, plain_axes
from inspector.qt.theme import LIGHT, Tokens
from inspector.qt.tuning.stale import asked_key
from inspector.qt.tuning.tuning_jobs import map_job
from inspector.qt.viewmodel import Inspector, holds

GROUPS = ("beyond_out", "beyond_in", "cut_out", "cut_in", "returned")


def groups_of(m: PoolMap) -> dict[str, np.ndarray]:
    """Point indices per drawing group, read from the map's own flags."""
    inside = m.raw_rank > 0
    return {"beyond_out": np.flatnonzero(~inside & ~m.in_scope),
            "beyond_in": np.flatnonzero(~inside & m.in_scope),
            "cut_out": np.flatnonzero(inside & ~m.in_scope),
            "cut_in": np.flatnonzero(inside & m.in_scope & ~m.final),
            "returned": np.flatnonzero(m.final)}


class PoolMapPlot(pg.PlotWidget):
    point_clicked = Signal(object)  # row id

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, axisItems=plain_axes())
        self.setMinimumSize(*MIN_PLOT)
        self.setObjectName("poolMap")
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        self.texts: dict[Any, str] = {}
        self.groups = {g: pg.ScatterPlotItem(size=9, hoverable=True, tip=self._tip)
                       for g in GROUPS}
        self.query = pg.ScatterPlotItem(symbol="star", size=22)
        for item in (*self.groups.values(), self.query):
            plot.addItem(item)
            if item is not self.query:
                item.sigClicked.connect(self._clicked)
        self.setToolTip("The candidate pool projected on its first two principal components, "
                        "with the query (star).\nFilled: inside the top-N cut (raw "
                        "candidates); hollow: fetched deeper, beyond the cut. Blue in scope, "
                        "grey out of scope, green returned.\nThe cut is by rank in the full "
                        "vector space; in this 2-D projection rows inside and beyond it can "
                        "sit side by side, so no boundary is drawn.")
        self.set_tokens(LIGHT)

    def set_tokens(self, tk: Tokens) -> None:
        _style(self, tk)
        out, scoped = pg.mkColor(tk.out), pg.mkColor(tk.scoped)
        styles = {"beyond_out": (pg.mkPen(out, width=1.2), None, 7),
                  "beyond_in": (pg.mkPen(scoped, width=1.6), None, 9),
                  "cut_out": (pg.mkPen(out), pg.mkBrush(out), 8),
                  "cut_in": (pg.mkPen(scoped), pg.mkBrush(scoped), 10),
                  "returned": (pg.mkPen(tk.text, width=1), pg.mkBrush(tk.returned), 12)}
        for g, (pen, brush, size) in styles.items():
            self.groups[g].setPen(pen)
            self.groups[g].setBrush(brush if brush is not None else pg.mkBrush(0, 0, 0, 0))
            self.groups[g].setSize(size)
        self.query.setPen(pg.mkPen(tk.text))
        self.query.setBrush(pg.mkBrush(tk.accent))

    def _tip(self, x: float, y: float, data: Any) -> str:
        return f"{data}\n{self.texts.get(data, '')[:160]}"

    def _clicked(self, _item: Any, points: Any, *_: Any) -> None:
        if len(points):
            self.point_clicked.emit(points[0].data())

    def set_map(self, m: PoolMap | None, texts: dict[Any, str]) -> None:
        self.texts = texts
        if m is None:
            for item in (*self.groups.values(), self.query):
                item.setData([], [])
            return
        ids = np.empty(len(m.ids), dtype=object)
        ids[:] = m.ids
        for g, idx in groups_of(m).items():
            self.groups[g].setData(m.xy[idx, 0], m.xy[idx, 1], data=ids[idx])
        if m.query_xy is not None:
            self.query.setData([m.query_xy[0]], [m.query_xy[1]])
        plot = self.getPlotItem()
        plot.setLabel("bottom", f"PC1 ({m.explained[0]:.0%} of variance)")
        plot.setLabel("left", f"PC2 ({m.explained[1]:.0%})")
        plot.autoRange()


class PoolMapView(QWidget):
    """The map under a title and colour key; refreshed from the worker as traces change."""

    map_ready = Signal(object)  # PoolMap

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.tokens: Tokens = LIGHT
        self.map: PoolMap | None = None
        self.offline: dict[str, Any] | None = None  # a reopened receipt's stored map
        self._wanted: Any = None
        self.header = QLabel("", objectName="plotKey")
        self.header.setWordWrap(True)
        self.header.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.note = QLabel("", objectName="mapNote")
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.plot = PoolMapPlot(self)
        side = QVBoxLayout()
        side.addWidget(self.header)
        side.addWidget(self.note)
        side.addStretch(1)
        holder = QWidget(self)
        holder.setLayout(side)
        column = QScrollArea(self, objectName="mapSide", widgetResizable=True)
        column.setFrameShape(QFrame.Shape.NoFrame)
        column.setWidget(holder)  # a compact dock scrolls the key and note: none is cut
        column.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        column.setFixedWidth(300 + column.verticalScrollBar().sizeHint().width())
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addWidget(self.plot, 1)
        lay.addWidget(column)
        self._timer = QTimer(self, singleShot=True, interval=200)
        self._timer.timeout.connect(self.refresh)
        vm.trace_changed.connect(lambda: self._timer.start())
        self.plot.point_clicked.connect(self._clicked)
        self.set_tokens(LIGHT)

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        self.plot.set_tokens(tk)
        items = [(tk.returned, "●", "returned"),
                 (tk.scoped, "●", "passes the filters, inside the cut"),
                 (tk.out, "●", "dropped by a filter, inside the cut"),
                 (tk.scoped, "○", "fetched deeper, beyond the cut (by rank, not by "
                                  "distance on this map)"),
                 (tk.accent, "★", "the query")]
        self.header.setText("<b>Fetched rows and query (PCA)</b><br>" + "<br>".join(
            f"<span style='color:{c}'>{g}</span>&nbsp;{t}" for c, g, t in items))

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._timer.start(0)

    def refresh(self) -> None:
        """Ask for a map of the current trace (when visible and not already shown)."""
        vm, t = self.vm, self.vm.trace
        if self.offline is not None:
            return
        if t is None or vm.store is None:
            self.note.setText("Run a query to map the rows it fetches.")
            self.plot.set_map(None, {})
            return
        if t.vector is None:
            self.note.setText("A full-text query has no vector, so there is nothing to map.")
            self.plot.set_map(None, {})
            return
        want = asked_key(vm)
        if not self.isVisible() or want == self._wanted:
            return
        self._wanted = want
        self.note.setText("Reading vectors…")
        vm.jobs.start("poolmap", map_job, vm.store, vm.question.plain(),
                      on_done=self.show_map, on_error=self._failed)

    def _texts(self) -> dict[Any, str]:
        t = self.vm.trace
        if t is None:
            return {}
        out: dict[Any, str] = {}
        for st in t.stages:
            for s in (*st.rows, *st.rows_in):
                if s.id not in out and s.row.text:
                    out[s.id] = str(s.row.text)
        return out

    def _failed(self, message: str) -> None:
        self._wanted = None
        self.note.setText(message)
        self.plot.set_map(None, {})

    def show_map(self, m: PoolMap, note: str = "") -> None:
        self.map = m
        self.plot.set_map(m, self._texts())
        inside = int((m.raw_rank > 0).sum())
        starved = int(((m.raw_rank == 0) & m.in_scope).sum())
        self.note.setText(note or (
            f"{len(m.ids)} fetched rows mapped: {inside} inside the cut ({m.stage}, "
            f"{m.cut_depth} rows), {int(m.final.sum())} returned.\n"
            + (f"{starved} rows the filters pass lie beyond the cut: fetch deeper (or filter "
               "inside the search) to reach them." if starved else
               "No row the filters pass lies beyond the cut.")
            + f"\nAxes hold {m.explained[0] + m.explained[1]:.0%} of the variance; "
            "click a point to select its row."))
        self.map_ready.emit(m)

    def show_offline(self, data: dict[str, Any] | None) -> None:
        """A receipt's stored map (its parameters at export), or none; None data re-enables
        live maps."""
        self.offline = data
        self._wanted = None
        if data is None:
            self.refresh()
            return
        if not data:
            self.note.setText("This receipt holds no map, and maps read vectors from the store.")
            self.plot.set_map(None, {})
            return
        m = PoolMap(ids=tuple(data["ids"]), xy=np.column_stack([data["x"], data["y"]]),
                    query_xy=None if data["query"] is None else tuple(data["query"]),
                    in_scope=np.asarray(data["in_scope"], bool),
                    raw_rank=np.asarray(data["raw_rank"], np.int64),
                    final=np.asarray(data["final"], bool), cut_depth=int(data["cut_depth"]),
                    cut_radius=data["cut_radius"], explained=tuple(data["explained"]),
                    stage=data.get("stage", ""))
        self.show_map(m, "The map stored in the receipt, for its parameters at export (maps "
                         "read vectors from the store, so the sliders do not move it).")

    def _clicked(self, row_id: Any) -> None:
        if self.vm.trace is not None and holds(self.vm.trace, str(row_id)):
            self.vm.select(row_id)
