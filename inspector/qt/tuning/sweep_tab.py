"""The Sweep tab: over-fetch x blend (x min score) grids for the current query or a loaded
query set, run in a worker with progress and Cancel; a heatmap whose cells apply their
parameters to the main sliders, the best region, and the minimum safe over-fetch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from superqt import QElidingLabel

from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.safe import summarize_safe
from inspector.core.analysis.sweep import Grid, QuerySweep, SweepResult, best_region, parse_axis
from inspector.core.engine.diagnosis import safe_words
from inspector.core.engine.live import MAX_OVERFETCH
from inspector.core.errors import InspectorError
from inspector.qt.theme import Tokens
from inspector.qt.tuning.heatmap import Heatmap, SafeCurve, SafeShare
from inspector.qt.tuning.stale import StaleNote
from inspector.qt.tuning.tuning_jobs import SweepRequest, sweep_job
from inspector.qt.viewmodel import Inspector

METRIC_NAMES = {"objective": "objective (nDCG if judged, else scoped recall)",
                "scoped_recall": "scoped recall@k", "recall": "recall@k",
                "precision": "precision@k", "mrr": "MRR", "ndcg": "nDCG@k"}
ALL = -1  # the query combo's "mean over the set" entry


def _fmt(v: float | None) -> str:
    return "–" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.3g}"


class SweepPanel(QWidget):
    """Controls, progress, heatmap, safe over-fetch curve and per-query table."""

    sweep_finished = Signal(object)  # SweepResult
    cell_applied = Signal(float, float, float)  # over-fetch, blend, min score

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.result: SweepResult | None = None
        self.query_set: Judgments | None = None
        self.query_set_name = ""
        self.grades: Callable[[], tuple[tuple[str, float], ...]] = tuple  # the query's marks
        self._build()
        vm.params_changed.connect(lambda _p: self._mark_current())

    # ---- construction ----
    def _build(self) -> None:
        self.source = QComboBox(self, objectName="sweepSource")
        self.source.addItem("Current query", "query")
        self.source.setToolTip("Sweep the window's query, or every query of a loaded query set "
                               "(a judgments file: Judgments tab > Load, or here).")
        self.load_set = QPushButton("Load query set…", self)
        self.overfetch = QLineEdit("1:10:1", self, objectName="gridOverfetch")
        self.blend = QLineEdit("0:1:0.1", self, objectName="gridBlend")
        self.min_score = QLineEdit("", self, objectName="gridMinScore")
        self.min_score.setPlaceholderText("the window's")
        for w, tip in ((self.overfetch, "Over-fetch values: a,b,c or start:stop:step "
                        f"(inclusive, at most {MAX_OVERFETCH:g} so every cell fits the "
                        "sliders)"), (self.blend, "Blend weights: a,b,c or start:stop:step"),
                       (self.min_score, "Min scores to sweep too (empty: the window's)")):
            w.setToolTip(tip)
        self.no_cap = QCheckBox("ignore cap", self, objectName="sweepNoCap")
        self.no_cap.setToolTip("Sweep with cap 0, to see what over-fetch beyond the configured "
                               "cap would give; applying a cell then sets the cap to 0 too.")
        self.run_button = QPushButton("Run sweep", self, objectName="sweepRun")
        self.cancel_button = QPushButton("Cancel", self, objectName="sweepCancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar(self, objectName="sweepProgress")
        self.progress.setFixedWidth(160)
        self.progress.setFormat("%v / %m queries")
        self.progress.hide()
        self.metric = QComboBox(self, objectName="sweepMetric")
        self.query_pick = QComboBox(self, objectName="sweepQuery")
        self.slice = QComboBox(self, objectName="sweepSlice")
        self.slice.setToolTip("The min score this heatmap shows (when several were swept).")
        self.metric.setMinimumContentsLength(22)
        self.query_pick.setMinimumContentsLength(36)
        for combo in (self.metric, self.query_pick):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.summary = QLabel("Run a sweep to see how recall changes with over-fetch and blend "
                              "weight for this query.", self, objectName="sweepSummary")
        self.summary.setWordWrap(True)
        self.stale_note = StaleNote(self.vm, self)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heatmap = Heatmap(self)
        self.curve = SafeCurve(self)
        self.share = SafeShare(self)
        self.curve_title = QElidingLabel("Minimum safe over-fetch", objectName="sectionTitle")
        self.share_title = QElidingLabel("Across the query set", objectName="sectionTitle")
        self.table = QTableWidget(0, 5, self, objectName="sweepQueries")
        self.table.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.table.setHorizontalHeaderLabels(["query", "scope", "best", "pick F, w", "safe F"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self._layout()
        self.load_set.clicked.connect(self._choose_set)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        for combo in (self.metric, self.query_pick, self.slice):
            combo.currentIndexChanged.connect(lambda _i: self._show())
        self.table.currentCellChanged.connect(
            lambda r, *_: r >= 0 and self.query_pick.setCurrentIndex(r + 1))
        self.heatmap.cell_clicked.connect(self.apply_cell)

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.setSpacing(6)
        for w in (QLabel("Sweep"), self.source, self.load_set, QLabel("over-fetch"),
                  self.overfetch, QLabel("blend"), self.blend, QLabel("min score"),
                  self.min_score, self.no_cap, self.run_button, self.cancel_button,
                  self.progress):
            top.addWidget(w)
        top.addStretch(1)
        show = QHBoxLayout()
        for w in (QLabel("Show"), self.metric, QLabel("for"), self.query_pick, self.slice):
            show.addWidget(w)
        show.addStretch(1)
        right = QWidget(self)
        grid = QGridLayout(right)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.curve_title, 0, 0)
        grid.addWidget(self.curve, 1, 0)
        grid.addWidget(self.share_title, 0, 1)
        grid.addWidget(self.share, 1, 1)
        grid.addWidget(self.summary, 2, 0, 1, 2)
        # word-wrapped text under two plots: when the dock is short it scrolls, never overlaps
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(right)
        self.body = QSplitter(Qt.Orientation.Horizontal, self)
        self.body.setChildrenCollapsible(False)
        for w in (self.heatmap, scroll, self.table):
            self.body.addWidget(w)
        self.body.setSizes([520, 620, 360])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addLayout(top)
        lay.addLayout(show)
        lay.addWidget(self.stale_note)  # above the results it speaks of: never scrolled away
        lay.addWidget(self.body, 1)

    def set_tokens(self, tk: Tokens) -> None:
        for plot in (self.heatmap, self.curve, self.share):
            plot.set_tokens(tk)
        self.stale_note.set_tokens(tk)

    # ---- query set ----
    def set_query_set(self, judgments: Judgments | None, name: str = "") -> None:
        self.query_set, self.query_set_name = judgments, name
        while self.source.count() > 1:
            self.source.removeItem(1)
        if judgments is not None and judgments.queries:
            self.source.addItem(f"Query set: {name} ({len(judgments.queries)} queries)", "set")
            self.source.setCurrentIndex(1)

    def _choose_set(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        from inspector.core.analysis.judgments import load_judgments

        path, _ = QFileDialog.getOpenFileName(self, "Load a query set or judgments file", "",
                                              "Judgments (*.json *.csv);;All files (*)")
        if path:
            try:
                self.set_query_set(load_judgments(path), path.rsplit("/", 1)[-1])
            except InspectorError as exc:
                self.vm.fail(str(exc))

    # ---- running ----
    def grid(self) -> Grid:
        f = parse_axis(self.overfetch.text().strip() or "1", "over-fetch")
        if max(f) > MAX_OVERFETCH:
            raise InspectorError(f"The over-fetch grid goes up to {MAX_OVERFETCH:g}, the "
                                 "sliders' top, so that every cell can be applied.")
        w = parse_axis(self.blend.text().strip() or "0", "blend")
        ms = self.min_score.text().strip()
        return Grid(f, w, parse_axis(ms, "min score") if ms else None)

    def request(self) -> SweepRequest:
        """The window's question (cap 0 when the cap is ignored) and the grid around it."""
        vm = self.vm
        asked = vm.to_question()
        if self.no_cap.isChecked():
            asked = asked.model_copy(update={"params": {**asked.params, "cap": 0}})
        req = SweepRequest(question=asked, grid=self.grid())
        req = replace(req, grid=req.grid.resolved(req.base))
        if self.source.currentData() == "set" and self.query_set is not None:
            return replace(req, query_set=self.query_set)
        if not vm.has_query():
            raise InspectorError("Run a query first: the sweep needs the window's query.")
        return replace(req, query=vm.query, name=vm.text or "current query",
                       grades=self.grades())

    def run(self) -> None:
        if self.vm.store is None:
            self.vm.fail("Sweeps fetch from the store; open a store (receipts re-rank their "
                          "bundled pool only).")
            return
        try:
            req = self.request()
        except InspectorError as exc:
            self.vm.fail(str(exc))
            return
        total = len(req.query_set.queries) if req.query_set is not None else 1
        self.progress.setRange(0, total)
        self.progress.setFormat("%v / %m " + ("query" if total == 1 else "queries"))
        self.progress.setValue(0)
        self.progress.show()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.summary.setText("Sweeping…")
        self.stale_note.asked()
        self.vm.jobs.start("sweep", sweep_job, self.vm.store, req, on_done=self._finished,
                           on_error=self._failed, on_yield=self._progressed)

    def cancel(self) -> None:
        """Stop after the query in progress; what is done is kept and shown."""
        self.vm.jobs.stop("sweep")
        self.cancel_button.setEnabled(False)
        self.summary.setText("Cancelling after the current query…")

    @property
    def running(self) -> bool:
        return self.vm.jobs.busy("sweep")

    def _progressed(self, step: tuple[int, int, str]) -> None:
        done, total, name = step
        self.progress.setValue(done)
        self.summary.setText(f"Swept {done} of {total}: {name}")

    def _stopped(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.hide()

    def _failed(self, message: str) -> None:
        self._stopped()
        self.summary.setText(message)
        self.vm.fail(message)

    def _finished(self, result: SweepResult) -> None:
        self._stopped()
        self.show_result(result)
        self.sweep_finished.emit(result)

    # ---- showing ----
    def show_result(self, result: SweepResult) -> None:
        self.result = result
        self.stale_note.refresh()
        for combo in (self.metric, self.query_pick, self.slice):
            combo.blockSignals(True)
            combo.clear()
        for key in result.aggregate:
            self.metric.addItem(METRIC_NAMES.get(key, key), key)
        self.query_pick.addItem(f"mean over {len(result.queries)} "
                                f"quer{'y' if len(result.queries) == 1 else 'ies'}", ALL)
        for n, q in enumerate(result.queries):
            self.query_pick.addItem(q.case.name[:60], n)
        if len(result.queries) == 1:
            self.query_pick.setCurrentIndex(1)
        for m in result.grid.min_score or ():
            self.slice.addItem(f"min score {m:g}", m)
        self.slice.setVisible(self.slice.count() > 1)
        for combo in (self.metric, self.query_pick, self.slice):
            combo.blockSignals(False)
        self._fill_table(result)
        self._show()

    def _fill_table(self, result: SweepResult) -> None:
        self.table.setRowCount(len(result.queries))
        for r, q in enumerate(result.queries):
            pick = q.best.pick
            cells = (q.case.name, q.case.scope or q.params.scope or "", _fmt(q.best.value),
                     "–" if pick is None else f"{pick[0]:g}, {pick[1]:g}",
                     _fmt(q.safe.overfetch) if q.safe.truth else "no truth")
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.setVisible(len(result.queries) > 1)

    def selected(self) -> tuple[str, QuerySweep | None, int]:
        """(metric key, the query shown or None for the mean, min-score slice index)."""
        metric = self.metric.currentData() or "objective"
        n = self.query_pick.currentData()
        q = None if n in (None, ALL) or self.result is None else self.result.queries[n]
        return metric, q, max(0, self.slice.currentIndex())

    def values(self) -> np.ndarray:
        """The 3-D array (over-fetch, blend, min score) the heatmap draws a slice of."""
        assert self.result is not None
        metric, q, _ = self.selected()
        if q is None:
            return self.result.aggregate[metric]
        key = q.objective if metric == "objective" else metric
        return q.values.get(key, np.full(self.result.grid.shape, np.nan))

    def _show(self) -> None:
        res = self.result
        if res is None or self.metric.count() == 0:
            return
        metric, q, m = self.selected()
        grid, values = res.grid, self.values()
        best = best_region(values, grid, metric, q.params if q else res.base)
        ms = grid.min_score[m]  # type: ignore[index]
        cells = [(grid.overfetch.index(f), grid.blend.index(w)) for f, w, x in best.cells
                 if x == ms]
        self.heatmap.set_values(values[:, :, m], grid.overfetch, grid.blend, cells)
        base = q.params if q else res.base
        cap_note = self.heatmap.mark_cap(base.cap, base.limit)
        self._mark_current()
        shown = q or res.queries[0] if res.queries else None
        if shown is not None:
            p = shown.params
            self.curve.set_curve(shown.safe.curve, shown.safe.overfetch,
                                 p.cap / p.limit if p.cap else None)
            self.curve_title.setText(f"Minimum safe over-fetch: {shown.case.name}")
            self.curve_title.setToolTip(self.curve_title.text())
        safe = summarize_safe([(x.case.scope or x.params.scope, x.safe) for x in res.queries],
                              grid.overfetch)
        for w in (self.share, self.share_title):
            w.setVisible(len(res.queries) > 1)
        self.share.set_summary(safe, [x.safe.overfetch for x in res.queries
                                      if x.safe.overfetch is not None])
        self.summary.setText(" ".join(x for x in (self._describe(res, metric, q, best, shown,
                                                                 safe), cap_note) if x))

    def _describe(self, res: SweepResult, metric: str, q: QuerySweep | None, best: Any,
                  shown: QuerySweep | None, safe: dict[str, Any]) -> str:
        who = q.case.name if q else f"the mean over {len(res.queries)} queries"
        parts = []
        if res.cancelled:
            parts.append(f"Cancelled: {len(res.queries)} queries swept.")
        if best.value is None:
            parts.append(f"{METRIC_NAMES.get(metric, metric)} is undefined for {who}.")
        else:
            j = best.to_json()
            f0, f1 = j["overfetch"]
            w0, w1 = j["blend"]
            parts.append(f"Best {METRIC_NAMES.get(metric, metric)} for {who}: "
                         f"{best.value:.3g} in {len(best.cells)} cells (F {f0:g}–{f1:g}, "
                         f"w {w0:g}–{w1:g}); cheapest: F {best.pick[0]:g}, w "
                         f"{best.pick[1]:g}. Click a cell to apply it.")
        if shown is not None:
            s = shown.safe
            if s.overfetch is not None and s.depth is not None:
                cap = "within the cap" if s.within_cap else s.reason
                parts.append(f"Minimum {safe_words(s.depth, shown.params.limit)}, {cap}.")
            else:
                parts.append(f"No safe over-fetch: {s.reason}.")
        st = safe.get("overfetch")
        if len(res.queries) > 1 and st:
            parts.append(f"Across the set: {safe['reached']} of {safe['with_truth']} queries "
                         f"reach full recall; safe F median {st['median']:g}, p90 "
                         f"{st['p90']:g}, max {st['max']:g}.")
        return " ".join(parts)

    def _mark_current(self) -> None:
        p = self.vm.params
        if p is not None:
            self.heatmap.mark_current(p.overfetch, p.blend)

    def apply_cell(self, i: int, j: int) -> None:
        """Move the window's sliders to a cell's parameters; the stages re-rank at once."""
        if self.result is None:
            return
        grid = self.result.grid
        f, w = grid.overfetch[i], grid.blend[j]
        ms = grid.min_score[max(0, self.slice.currentIndex())]  # type: ignore[index]
        vm = self.vm
        base = self.result.base
        for key, value in (("cap", base.cap), ("overfetch", f), ("blend", w),
                           ("min_score", ms)):
            if vm.params is None or getattr(vm.params, key) != value:
                vm.set_param(key, value)
        self.cell_applied.emit(f, w, ms)
