"""The pipeline laid out left to right: raw -> scoped -> blended -> final, one row of tables
per filter placement (two rows when post-filter and pushdown are compared side by side)."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from inspector.core.engine.params import pool_depth
from inspector.core.engine.trace import STAGES, Trace
from inspector.qt.pipeline.stage_view import StageView
from inspector.qt.theme import LIGHT, Tokens
from inspector.qt.viewmodel import Inspector

# how the room left beside the fixed columns is shared between the stages' text columns: the
# raw candidates (the most rows, read against their scope) and the final results (the answer)
# get more than the two stages in between
TEXT_SHARE = {"raw": 10, "scoped": 4, "blended": 5, "final": 7}
# where the lane is too narrow to read every stage (a 1024 px screen) stages fold in this order
# (the one the user opened last stays open); one stays open at least
FOLD_ORDER = ("scoped", "blended", "final", "raw")
LANE_TITLES = {"post": "Post-filter: scope applied after the global cut",
               "pushdown": "Pushdown: scope applied inside the search"}


def stage_notes(t: Trace) -> dict[str, str]:
    """One line per stage saying what happened there, from the trace's own numbers."""
    p, d, c = t.params, t.depths, t.counters
    capped = p.cap and pool_depth(p.limit, p.overfetch, 0) > p.cap
    raw = f"depth {d.pool} = limit {p.limit} × over-fetch {p.overfetch:g}"
    raw += f", capped at {p.cap}" if capped else ""
    if p.mode == "hybrid":
        raw += f"; legs vec k {d.vec_k}, fts k {d.fts_k}"
    if p.filter == "pushdown":
        raw += (f"; pushed down: {t.pool.pushdown_sql}" if t.pool.pushdown_sql
                else f"; {t.pool.pushdown_note}")
    spec = t.pool.scope
    if spec.active:
        scoped = f"{c['filteredByScope']} removed by scope {spec.scope!r} ({spec.strategy})"
    else:
        scoped = "no scope: every candidate kept"
    rows = t.stage("scoped").rows
    moved = int(np.count_nonzero(t.rank_before[rows] != t.rank_after[rows]))
    blended = (f"w = {p.blend:.2f}: order unchanged" if moved == 0 else
               f"w = {p.blend:.2f}: {moved} rows change rank")
    past = len(t.stage("blended")) - c["belowMinScore"] - c["returned"]
    final = f"{c['belowMinScore']} below min score {p.min_score:g} · {past} past limit {p.limit}"
    return {"raw": raw, "scoped": scoped, "blended": blended, "final": final}


def depth_tip(t: Trace) -> str:
    """The raw stage's depths in plain words, from the trace's own numbers."""
    p, d = t.params, t.depths
    tip = (f"The search fetched up to {d.pool} rows: the limit ({p.limit}) times the "
           f"over-fetch ({p.overfetch:g}), rounded up")
    tip += f", and never more than the cap ({p.cap})." if p.cap else " (no cap)."
    if p.mode == "hybrid":
        tip += (f"\nHybrid search runs two searches first, the legs: the vector leg fetches "
                f"{d.vec_k} rows and the full-text leg {d.fts_k}. Their lists are fused by "
                f"reciprocal rank and the fused list is cut to {d.pool}.")
    return tip


class LaneView(QWidget):
    """Four stage tables for one filter placement."""

    def __init__(self, lane: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lane = lane
        self.header = QLabel("", objectName="sectionTitle")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName(f"lane_{lane}")
        self.splitter.setChildrenCollapsible(False)
        self.views = {s: StageView(s, self) for s in STAGES}
        for s in STAGES:
            self.splitter.addWidget(self.views[s])
        self.splitter.setSizes([430, 210, 300, 190])
        self.user_sized = False  # once the user drags a handle the lane keeps their sizes
        self.opened: str | None = None  # the stage the user unfolded last
        self.splitter.splitterMoved.connect(self._dragged)
        for view in self.views.values():
            view.columns_fitted.connect(self.balance)
            view.unfold_asked.connect(lambda s=view.stage: self.open_stage(s))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.header)
        lay.addWidget(self.splitter, 1)

    def _dragged(self, *_: Any) -> None:
        self.user_sized = True

    def open_stage(self, stage: str) -> None:
        """Unfold a stage (folding another if the lane has not the room for both)."""
        self.opened = stage
        self.user_sized = False
        self.balance()

    def _fold(self, room: int) -> None:
        """Fold stages (FOLD_ORDER, the one opened last kept) until the open ones can each
        show a text column a row can be read by (StageView.text_need); unfold when there is
        room."""
        views = self.views
        folded: set[str] = set()
        order = [s for s in FOLD_ORDER if s != self.opened]

        def need() -> int:
            return sum(views[s].folded_width() if s in folded else views[s].open_width()
                       for s in STAGES)
        while need() > room and len(folded) < len(STAGES) - 1:
            folded.add(order[len(folded)])
        for s, view in views.items():
            view.set_folded(s in folded)

    def balance(self) -> None:
        """Each open stage as wide as its fixed columns plus its share (TEXT_SHARE) of what is
        left: the room goes to the text columns, which is what a row is read by."""
        sp = self.splitter
        views = [self.views[s] for s in STAGES]
        room = sp.width() - sp.handleWidth() * (len(views) - 1)
        if room <= 0:
            return
        self._fold(room)
        if self.user_sized:
            return
        least = [v.folded_width() if v.folded else v.open_width() for v in views]
        left = max(0, room - sum(least))
        total = sum(TEXT_SHARE[v.stage] for v in views if not v.folded)
        sizes = [n if v.folded else max(v.minimumWidth(), n + left * TEXT_SHARE[v.stage] // total)
                 for v, n in zip(views, least, strict=True)]
        if sizes != sp.sizes():
            sp.setSizes(sizes)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.balance()


class StagesPanel(QWidget):
    """Every lane's stages; keeps the selected row highlighted in all of them."""

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.tokens: Tokens = LIGHT
        self.lanes: list[LaneView] = []
        self.header_states: dict[str, bytes] = {}  # saved column widths, per stage
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(8)
        vm.trace_changed.connect(self.refresh)
        vm.selection_changed.connect(self._show_selected)

    def view(self, stage: str, lane: int = 0) -> StageView:
        return self.lanes[lane].views[stage]

    def _ensure_lanes(self, n: int) -> None:
        while len(self.lanes) < n:
            lane = LaneView(len(self.lanes), self)
            for stage, view in lane.views.items():
                if stage in self.header_states:
                    view.table.horizontalHeader().restoreState(self.header_states[stage])
                    view.fit_columns()  # widths saved narrower (another font) grow back
                view.set_tokens(self.tokens)
                view.row_picked.connect(lambda rid, k=lane.lane: self.vm.select(rid, k))
                view.row_action.connect(self._row_action)
            self.lanes.append(lane)
            self._layout.addWidget(lane, 1)
        for k, lane in enumerate(self.lanes):
            lane.setVisible(k < n)

    def refresh(self) -> None:
        vm = self.vm
        n = max(1, len(vm.traces))
        self._ensure_lanes(n)
        expected = frozenset(vm.expected)
        for k in range(n):
            lane = self.lanes[k]
            trace = vm.traces[k] if k < len(vm.traces) else None
            placement = vm.placements[k] if k < len(vm.placements) else "post"
            lane.header.setVisible(len(vm.traces) > 1)
            focus = " (plots follow this lane)" if k == vm.focus_lane else ""
            lane.header.setText(LANE_TITLES[placement] + focus)
            notes = stage_notes(trace) if trace is not None else {}
            for s, view in lane.views.items():
                view.set_trace(trace, expected, vm.selected, notes.get(s, ""))
            tip = depth_tip(trace) if trace is not None else ""
            if lane.views["raw"].note.toolTip() != tip:
                lane.views["raw"].note.setToolTip(tip)

    def _show_selected(self, row_id: Any) -> None:
        for lane in self.lanes:
            for view in lane.views.values():
                view.show_selected(row_id)

    def _row_action(self, action: str, row_id: Any) -> None:
        vm = self.vm
        if action == "use_as_query":
            vm.use_as_query(row_id)
        elif action == "expect":
            vm.toggle_expected(row_id)
        elif action == "copy_id":
            QGuiApplication.clipboard().setText(str(row_id))
        elif action == "copy_text" and vm.trace is not None:
            i = vm.trace.row_of(row_id)
            col = vm.trace.pool.roles.get("text")
            if i is not None and col:
                QGuiApplication.clipboard().setText(str(vm.trace.pool.columns[col][i]))

    def set_tokens(self, tokens: Tokens) -> None:
        self.tokens = tokens
        for lane in self.lanes:
            for view in lane.views.values():
                view.set_tokens(tokens)
