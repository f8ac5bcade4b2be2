"""The Sweep tab: a grid of the pipeline's declared stage parameters (STAGE.PARAM axes, by
default a depth-like by a weight-like one, from the stages' declarations, as `inspector
sweep`) for the current query or a loaded query set, run in a worker with progress and
Cancel; a heatmap whose cells set their parameters on the window's question, the best
region, and the safe depth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
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
from superqt.utils import signals_blocked

from inspector.core.analysis.grid import Axis, companions
from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.safe import change_words, safe_words, summarize_safe
from inspector.core.analysis.sweep import QuerySweep, SweepResult, best_of
from inspector.core.errors import InspectorError
from inspector.qt.theme import Tokens
from inspector.qt.tuning.heatmap import Heatmap, SafeCurve, SafeShare
from inspector.qt.tuning.stale import StaleNote
from inspector.qt.tuning.tuning_jobs import SweepRequest, axes_for, grid_text, sweep_job
from inspector.qt.viewmodel import Inspector
from inspector.qt.wording import show_value

METRIC_NAMES = {"objective": "objective (nDCG if judged, else scoped recall)",
                "scoped_recall": "scoped recall@k", "recall": "recall@k",
                "precision": "precision@k", "mrr": "MRR", "ndcg": "nDCG@k",
                "index_recall": "index recall@k (against the exact search)"}
ALL = -1  # the query combo's "mean over the set" entry


def _fmt(v: float | None) -> str:
    return "–" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.3g}"


def grid_shape(axes: tuple[Axis, ...]) -> tuple[int, int, int]:
    """(first axis, second axis, slices) of a grid of one to three axes."""
    n = [len(a.values) for a in axes] + [1, 1]
    return n[0], n[1], n[2]


class SweepPanel(QWidget):
    """Controls, progress, heatmap, safe depth curve and per-query table."""

    sweep_finished = Signal(object)  # SweepResult
    cell_applied = Signal(object)  # {STAGE.PARAM: value} set on the question

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.result: SweepResult | None = None
        self.query_set: Judgments | None = None
        self.query_set_name = ""
        self.grades: Callable[[], tuple[tuple[str, float], ...]] = tuple  # the query's marks
        self._build()
        vm.trace_changed.connect(self._mark_current)
        vm.question.events.preset.connect(lambda _v: self._placeholder())
        vm.question.events.pipeline_file.connect(lambda _v: self._placeholder())
        self._placeholder()

    # ---- construction ----
    def _build(self) -> None:
        self.source = QComboBox(self, objectName="sweepSource")
        self.source.addItem("Current query", "query")
        self.source.setToolTip("Sweep the window's query, or every query of a loaded query set "
                               "(a judgments file: Judgments tab > Load, or here).")
        self.load_set = QPushButton("Load query set…", self)
        self.grid_edit = QLineEdit("", self, objectName="sweepGrid")
        self.grid_edit.setToolTip(
            "The grid: up to three STAGE.PARAM=SPEC items (SPEC 'a,b,c' or 'start:stop:step', "
            "true,false for a flag), separated by ';', as `inspector sweep --grid`.\nEmpty: "
            "the pipeline's own default, a depth-like by a weight-like parameter.")
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
        self.slice.setToolTip("The value of the third axis this heatmap shows.")
        self.metric.setMinimumContentsLength(22)
        self.query_pick.setMinimumContentsLength(36)
        for combo in (self.metric, self.query_pick):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.summary = QLabel("Run a sweep to see how recall changes with the pipeline's "
                              "parameters for this query.", self, objectName="sweepSummary")
        self.summary.setWordWrap(True)
        self.stale_note = StaleNote(self.vm, self)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heatmap = Heatmap(self)
        self.curve = SafeCurve(self)
        self.share = SafeShare(self)
        self.curve_title = QElidingLabel("Safe depth", objectName="sectionTitle")
        self.share_title = QElidingLabel("Across the query set", objectName="sectionTitle")
        self.table = QTableWidget(0, 5, self, objectName="sweepQueries")
        self.table.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.table.setHorizontalHeaderLabels(["query", "scope", "best", "pick", "safe"])
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
        for w in (QLabel("Sweep"), self.source, self.load_set, QLabel("grid")):
            top.addWidget(w)
        top.addWidget(self.grid_edit, 1)
        for w in (self.run_button, self.cancel_button, self.progress):
            top.addWidget(w)
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

    def _placeholder(self) -> None:
        """The empty grid field shows the pipeline's default axes."""
        try:
            text = grid_text(axes_for(self.vm.question.plain(), ""))
        except (InspectorError, ValueError):
            text = "STAGE.PARAM=a,b,c; STAGE.PARAM=start:stop:step"
        self.grid_edit.setPlaceholderText(text)

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
    def axes(self) -> list[Axis]:
        """The grid field's axes (the pipeline's default when empty), checked against the
        pipeline's declarations as `inspector sweep --grid` checks them."""
        return axes_for(self.vm.question.plain(), self.grid_edit.text())

    def request(self) -> SweepRequest:
        """The window's question and the grid around it."""
        vm = self.vm
        asked = vm.question.plain()
        req = SweepRequest(question=asked, axes=tuple(self.axes()))
        if self.source.currentData() == "set" and self.query_set is not None:
            return SweepRequest(asked, req.axes, query_set=self.query_set)
        if not (asked.text or "").strip() and asked.vector is None and not asked.vector_of:
            raise InspectorError("Run a query first: the sweep needs the window's query.")
        return SweepRequest(asked, req.axes, name=asked.text or asked.vector_of or "query",
                            grades=tuple(self.grades()))

    def run(self) -> None:
        if self.vm.store is None:
            self.vm.fail("Sweeps run the pipeline on the store; open a store first.")
            return
        try:
            req = self.request()
        except (InspectorError, ValueError) as exc:
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
        with signals_blocked(self.metric), signals_blocked(self.query_pick), \
                signals_blocked(self.slice):
            for combo in (self.metric, self.query_pick, self.slice):
                combo.clear()
            for key in result.aggregate:
                self.metric.addItem(METRIC_NAMES.get(key, key), key)
            self.query_pick.addItem(f"mean over {len(result.queries)} "
                                    f"quer{'y' if len(result.queries) == 1 else 'ies'}", ALL)
            for n, q in enumerate(result.queries):
                self.query_pick.addItem(q.case.name[:60], n)
            if len(result.queries) == 1:
                self.query_pick.setCurrentIndex(1)
            if len(result.axes) == 3:
                ax = result.axes[2]
                for v in ax.values:
                    self.slice.addItem(f"{ax.key} {show_value(v)}", v)
            self.slice.setVisible(self.slice.count() > 1)
        self._fill_table(result)
        self._show()

    def _fill_table(self, result: SweepResult) -> None:
        self.table.setRowCount(len(result.queries))
        for r, q in enumerate(result.queries):
            best = best_of(q.values[q.objective], result.axes, q.objective)
            pick = "–" if best.pick is None else ", ".join(
                f"{k} {show_value(v)}" for k, v in best.pick.items())
            safe = q.safe
            cells = (q.case.name, q.case.scope or "", _fmt(best.value), pick,
                     "no truth" if not safe.truth else
                     ("never" if safe.value is None else change_words(safe.sets, safe.key)))
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.setVisible(len(result.queries) > 1)

    def selected(self) -> tuple[str, QuerySweep | None, int]:
        """(metric key, the query shown or None for the mean, third-axis slice index)."""
        metric = self.metric.currentData() or "objective"
        n = self.query_pick.currentData()
        q = None if n in (None, ALL) or self.result is None else self.result.queries[n]
        return metric, q, max(0, self.slice.currentIndex())

    def values(self) -> np.ndarray:
        """The metric per cell, shaped (first axis, second axis, third axis) (a missing
        axis is one long): what the heatmap draws a slice of."""
        assert self.result is not None
        metric, q, _ = self.selected()
        n = len(self.result.cells)
        if q is None:
            flat = self.result.aggregate.get(metric, np.full(n, np.nan))
        else:
            key = q.objective if metric == "objective" else metric
            flat = q.values.get(key, np.full(n, np.nan))
        return np.asarray(flat, np.float64).reshape(grid_shape(self.result.axes))

    def best_cells(self, values: np.ndarray) -> list[tuple[int, int, int]]:
        """Every cell at the best value (the best region), as (i, j, slice)."""
        if values.size == 0 or np.all(np.isnan(values)):
            return []
        top = float(np.nanmax(values))
        at = np.nan_to_num(values, nan=-np.inf) >= top - 1e-9
        return [tuple(int(x) for x in ix) for ix in np.argwhere(at)]  # type: ignore[misc]

    def _show(self) -> None:
        res = self.result
        if res is None or self.metric.count() == 0:
            return
        metric, q, m = self.selected()
        values = self.values()
        axes = res.axes
        best = [(i, j) for i, j, s in self.best_cells(values) if s == m]
        ys = axes[1].values if len(axes) > 1 else ("",)
        self.heatmap.set_values(values[:, :, m], axes[0].values, ys, best,
                                axes[0].key, axes[1].key if len(axes) > 1 else "")
        self._mark_current()
        shown = q or (res.queries[0] if res.queries else None)
        if shown is not None:
            s = shown.safe
            self.curve.set_curve(s.curve, s.value if _numeric(s.value) else None,
                                 s.key or "depth")
            self.curve_title.setText(f"Safe depth: {shown.case.name}")
            self.curve_title.setToolTip(self.curve_title.text())
        safe = summarize_safe([(x.case.scope, x.safe) for x in res.queries])
        for w in (self.share, self.share_title):
            w.setVisible(len(res.queries) > 1)
        self.share.set_summary(safe, [float(x.safe.value) for x in res.queries
                                      if _numeric(x.safe.value)])
        self.summary.setText(self._describe(res, metric, q, values, shown, safe))

    def _describe(self, res: SweepResult, metric: str, q: QuerySweep | None,
                  values: np.ndarray, shown: QuerySweep | None, safe: dict[str, Any]) -> str:
        who = q.case.name if q else f"the mean over {len(res.queries)} queries"
        parts = []
        if res.cancelled:
            parts.append(f"Cancelled: {len(res.queries)} queries swept.")
        best = best_of(values.reshape(-1), res.axes, metric)
        if best.value is None:
            parts.append(f"{METRIC_NAMES.get(metric, metric)} is undefined for {who}.")
        else:
            pick = ", ".join(f"{k} {show_value(v)}" for k, v in (best.pick or {}).items())
            parts.append(f"Best {METRIC_NAMES.get(metric, metric)} for {who}: "
                         f"{best.value:.3g} in {best.cells} cells; cheapest: {pick}. Click a "
                         f"cell to set it on the question.")
        if shown is not None:
            parts.append(f"Safe depth: {safe_words(shown.safe.to_json())}.")
        vals = safe.get("values")
        if len(res.queries) > 1 and vals:
            parts.append(f"Across the set: {safe['reached']} of {safe['with_truth']} queries "
                         f"are served by some value; median {vals['median']:g}, p90 "
                         f"{vals['p90']:g}, max {vals['max']:g}.")
        return " ".join(parts)

    def _mark_current(self) -> None:
        res = self.result
        if res is None:
            return
        axes = res.axes
        x = self.vm.current(axes[0].key)
        y = self.vm.current(axes[1].key) if len(axes) > 1 else ""
        self.heatmap.mark_current(x, y)

    def cell(self, i: int, j: int) -> dict[str, Any]:
        """The parameters of a heatmap cell (the shown slice's value of a third axis), and
        what setting them also sets (`grid.companions`), as the sweep ran the cell."""
        assert self.result is not None
        axes = self.result.axes
        at = {axes[0].key: axes[0].values[i]}
        if len(axes) > 1:
            at[axes[1].key] = axes[1].values[j]
        if len(axes) > 2:
            at[axes[2].key] = axes[2].values[max(0, self.slice.currentIndex())]
        spec = self.vm.spec()
        also = companions(spec, list(axes)) if spec is not None else {}
        return {**at, **also}

    def apply_cell(self, i: int, j: int) -> None:
        """Set a cell's parameters on the window's question (`set` STAGE.PARAM entries, a
        value equal to the pipeline's own leaving the set); the stages answer at once."""
        if self.result is None:
            return
        vm = self.vm
        cell = self.cell(i, j)
        sets = dict(vm.question.set)
        for key, value in cell.items():
            if value == vm.own(key):
                sets.pop(key, None)
            else:
                sets[key] = value
        if vm.put(set=sets):
            self.cell_applied.emit(cell)


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
