"""The Index tab: scoped recall against nprobes x over-fetch on a vector-indexed table, measured
against the exact search (core.analysis.index_sweep, as `inspector sweep --grid-nprobes`)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.analysis.index_sweep import NprobesSweep, nprobes_sweep, parse_nprobes
from inspector.core.analysis.sweep import Case, Grid, parse_axis
from inspector.core.errors import InspectorError
from inspector.qt.viewmodel import Inspector


def index_sweep_job(store: object, case: Case, params: object, grid: Grid,
                    nprobes: tuple[int, ...]) -> NprobesSweep:
    return nprobes_sweep(store, [case], params, grid, nprobes)  # type: ignore[arg-type]


class IndexSweepView(QWidget):
    """nprobes and over-fetch values in, a recall table out (rows nprobes, columns F)."""

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.result: NprobesSweep | None = None
        self.nprobes = QLineEdit("5,10,20,40,80", self, objectName="indexGridNprobes")
        self.nprobes.setToolTip("nprobes values: a,b,c (whole numbers)")
        self.overfetch = QLineEdit("1,2,4", self, objectName="indexGridOverfetch")
        self.overfetch.setToolTip("Over-fetch values: a,b,c or start:stop:step")
        self.run_button = QPushButton("Sweep nprobes", self, objectName="indexSweepRun")
        self.run_button.clicked.connect(self.run)
        self.summary = QLabel("On a table with a vector index: scoped recall of the window's "
                              "query against nprobes x over-fetch, measured against the exact "
                              "search.", objectName="indexSweepSummary")
        self.summary.setWordWrap(True)
        self.table = QTableWidget(self, objectName="indexSweepTable")
        self.table.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        row = QHBoxLayout()
        for label, w in (("nprobes", self.nprobes), ("over-fetch", self.overfetch)):
            row.addWidget(QLabel(label))
            row.addWidget(w, 1)
        row.addWidget(self.run_button)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.summary)
        lay.addWidget(self.table, 1)

    def run(self) -> None:
        vm = self.vm
        if vm.store is None or vm.query is None:
            vm.fail("Run a query on an open store first: the index sweep uses the window's "
                    "query.")
            return
        if getattr(vm.store, "vector_index", None) is None:
            vm.fail("This table has no vector index: nprobes changes nothing on a flat search.")
            return
        try:
            nprobes = parse_nprobes(self.nprobes.text())
            grid = Grid(parse_axis(self.overfetch.text(), "over-fetch"), (vm.params.blend,))
        except InspectorError as exc:
            vm.fail(str(exc))
            return
        case = Case(name=vm.text or vm.query.source, query=vm.query)
        self.run_button.setEnabled(False)
        self.summary.setText("Sweeping nprobes…")
        vm.jobs.start("index_sweep", index_sweep_job, vm.store, case, vm.params, grid, nprobes,
                      on_done=self.show_result, on_error=self._failed)

    def _failed(self, message: str) -> None:
        self.run_button.setEnabled(True)
        self.summary.setText(message)
        self.vm.fail(message)

    def show_result(self, r: NprobesSweep) -> None:
        self.run_button.setEnabled(True)
        self.result = r
        self.table.setRowCount(len(r.nprobes))
        self.table.setColumnCount(len(r.overfetch))
        self.table.setVerticalHeaderLabels([f"nprobes {n}" for n in r.nprobes])
        self.table.setHorizontalHeaderLabels([f"F {f:g}" for f in r.overfetch])
        for i in range(len(r.nprobes)):
            for j in range(len(r.overfetch)):
                v = r.recall[i, j]
                self.table.setItem(i, j, QTableWidgetItem("–" if np.isnan(v) else f"{v:.3f}"))
        self.summary.setText(f"Scoped recall@{r.k} against the exact search, {r.queries} "
                             "query; rows: nprobes, columns: over-fetch.")
