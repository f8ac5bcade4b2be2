"""The Index tab: on a table with an ANN index, the window's question swept over the index
knobs its vector legs pass to LanceDB (IVF: nprobes x refine_factor; HNSW: ef x
refine_factor), each cell's recall measured against the same cell searched exactly
(core.analysis.index_sweep, as `inspector sweep --grid-index`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.analysis.sweep import SweepResult
from inspector.core.errors import InspectorError
from inspector.qt.tuning.tuning_jobs import axes_for, grid_text, has_query, index_sweep_job
from inspector.qt.viewmodel import Inspector
from inspector.qt.wording import show_value

METRICS = {"index_recall": "index recall@k (against the exact search)",
           "scoped_recall": "scoped recall@k (against the truth)"}


def index_axes_of(vm: Any, text: str) -> list[Any]:
    """The grid field's axes, else every index knob the table's index reads."""
    from inspector.core.analysis.index_sweep import index_axes
    from inspector.core.engine.flow.question import resolve

    q = vm.question.plain()
    if text.strip():
        return axes_for(q, text)
    spec, _, _ = resolve(q)
    return index_axes(spec, getattr(vm.store, "vector_index", None))


class IndexSweepView(QWidget):
    """Index knob values in, a recall table out (rows: the first knob, columns: the second)."""

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.result: SweepResult | None = None
        self.grid_edit = QLineEdit("", self, objectName="indexGrid")
        self.grid_edit.setPlaceholderText("the index knobs the table's index reads")
        self.grid_edit.setToolTip("STAGE.PARAM=SPEC items separated by ';' (as `inspector "
                                  "sweep --grid`); empty: the index knobs of the pipeline's "
                                  "vector legs on their default ladder.")
        self.metric = QComboBox(self, objectName="indexMetric")
        for key, name in METRICS.items():
            self.metric.addItem(name, key)
        self.metric.currentIndexChanged.connect(lambda _i: self._fill())
        self.run_button = QPushButton("Sweep index knobs", self, objectName="indexSweepRun")
        self.run_button.clicked.connect(self.run)
        self.summary = QLabel("On a table with a vector index: recall of the window's query "
                              "against the index knobs its vector legs pass, measured against "
                              "the exact search.", objectName="indexSweepSummary")
        self.summary.setWordWrap(True)
        self.table = QTableWidget(self, objectName="indexSweepTable")
        self.table.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        row = QHBoxLayout()
        row.addWidget(QLabel("grid"))
        row.addWidget(self.grid_edit, 1)
        row.addWidget(self.metric)
        row.addWidget(self.run_button)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.summary)
        lay.addWidget(self.table, 1)

    def run(self) -> None:
        vm = self.vm
        if vm.store is None or not has_query(vm.question):
            vm.fail("Run a query on an open store first: the index sweep uses the window's "
                    "question.")
            return
        try:
            axes = index_axes_of(vm, self.grid_edit.text())
        except (InspectorError, ValueError) as exc:
            vm.fail(str(exc))
            return
        self.grid_edit.setPlaceholderText(grid_text(axes))
        q = vm.question.plain()
        self.run_button.setEnabled(False)
        self.summary.setText("Sweeping the index knobs…")
        vm.jobs.start("index_sweep", index_sweep_job, vm.store, q, axes,
                      q.text or q.vector_of or "query", on_done=self.show_result,
                      on_error=self._failed)

    def _failed(self, message: str) -> None:
        self.run_button.setEnabled(True)
        self.summary.setText(message)
        self.vm.fail(message)

    def values(self) -> np.ndarray:
        """The metric shown, shaped (first axis, second axis)."""
        assert self.result is not None
        axes = self.result.axes
        key = self.metric.currentData() or "index_recall"
        n = len(self.result.cells)
        flat = self.result.aggregate.get(key, np.full(n, np.nan))
        shape = [len(a.values) for a in axes] + [1]
        return np.asarray(flat, np.float64).reshape(shape[0], -1)

    def show_result(self, r: SweepResult) -> None:
        self.run_button.setEnabled(True)
        self.result = r
        self._fill()

    def _fill(self) -> None:
        r = self.result
        if r is None:
            return
        axes = r.axes
        values = self.values()
        cols = [", ".join(f"{a.key} {show_value(c[a.key])}" for a in axes[1:])
                for c in r.cells[: values.shape[1]]] if len(axes) > 1 else ["recall"]
        self.table.setRowCount(values.shape[0])
        self.table.setColumnCount(values.shape[1])
        self.table.setVerticalHeaderLabels([f"{axes[0].key} {show_value(v)}"
                                            for v in axes[0].values])
        self.table.setHorizontalHeaderLabels(cols)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                v = values[i, j]
                self.table.setItem(i, j, QTableWidgetItem("–" if np.isnan(v) else f"{v:.3f}"))
        k = r.queries[0].k if r.queries else None
        self.summary.setText(f"{METRICS.get(self.metric.currentData(), '')} (k = {k}) of the "
                             f"window's question; rows: {axes[0].key}"
                             + (f", columns: {', '.join(a.key for a in axes[1:])}."
                                if len(axes) > 1 else "."))
