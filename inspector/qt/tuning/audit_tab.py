"""The Audit tab: the store-wide audits of `inspector audit` (core.analysis.audit, one prober
for every pipeline) under the window's pipeline (its preset or file, --set and limit), in the
background with progress and cancel; a memory from the audit opens in the stage view (queried
by its own vector and text, in its own scope)."""

from __future__ import annotations

import json
import time
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.errors import InspectorError
from inspector.qt.viewmodel import Inspector

KINDS = ("recall", "scopes")
COLUMNS = ("id", "scope", "class", "stage", "detail")


class Progress(QObject):
    """Carries the audit's progress from the worker thread to the GUI thread (queued)."""

    advanced = Signal(int, int)


def audit_question(asked: Any, limit: int) -> Any:
    """The question an audit probes with: the window's pipeline (preset or file, system
    configuration, --set, column roles) and limit, as `inspector audit KIND STORE --preset P
    [--set ...] --limit L` builds it; the memories are the queries."""
    from inspector.core.engine.flow.question import make_question

    return make_question(store=asked.store, table=asked.table, preset=asked.preset,
                         pipeline_file=asked.pipeline_file, system_config=asked.system_config,
                         set=dict(asked.set), limit=limit, columns=dict(asked.columns))


def audit_job(store: Any, q: Any, kind: str, sample: int | None, progress: Progress,
              cancelled: Any) -> dict[str, Any]:
    """The audit, as `inspector audit KIND STORE --preset P --limit L --json` runs it."""
    from inspector.core.analysis import audit

    now = time.time() * 1000
    if kind == "scopes":
        return audit.scope_audit(store, q, now, per_scope=sample or 10)

    def step(done: int, total: int) -> bool:
        if done % 25 == 0 or done == total:
            progress.advanced.emit(done, total)
        return not cancelled()

    res = audit.recall_audit(store, q, now, sample=sample, progress=step)
    return {**res, "texts": _texts(store, [r["id"] for r in res["never_recallable"][:500]])}


def _texts(store: Any, ids: list[str]) -> dict[str, str | None]:
    """The stored text of each id (read in the worker: the GUI thread never waits on LanceDB)."""
    from inspector.core.stores.roles import eq_predicate

    roles = store.roles
    if not roles.text:
        return {}
    dtype = store.schema.field(roles.id).type
    out = {}
    for rid in ids:
        got = store.table.search().where(eq_predicate(roles.id, rid, dtype)) \
            .select([roles.text]).limit(1).to_arrow()
        out[rid] = got.column(0)[0].as_py() if got.num_rows else None
    return out


class AuditPanel(QWidget):
    """Kind, sample size and Run/Cancel in; the never-recalled memories (or the scopes) out."""

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.result: dict[str, Any] | None = None
        self.progress = Progress(self)
        self.kind = QComboBox(self, objectName="auditKind")
        self.kind.addItems(KINDS)
        self.sample = QSpinBox(self, objectName="auditSample")
        self.sample.setRange(0, 10_000_000)
        self.sample.setSpecialValueText("all")
        self.sample.setToolTip("recall: probe a random sample of N memories (all: every one); "
                               "scopes: probes per scope (all: 10)")
        self.run_button = QPushButton("Run audit", self, objectName="auditRun")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel", self, objectName="auditCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.bar = QProgressBar(self, objectName="auditProgress")
        self.summary = QLabel("Audit the open store under the window's preset and limit: "
                              "which memories their own vector and text never recall, and "
                              "which scopes leak or starve. Double-click a memory to open it "
                              "in the stage view.", objectName="auditSummary")
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS), self, objectName="auditTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setTabKeyNavigation(False)
        self.table.cellDoubleClicked.connect(lambda r, _c: self.open_row(r))
        self.progress.advanced.connect(self._advanced)
        row = QHBoxLayout()
        for label, w in (("audit", self.kind), ("sample", self.sample)):
            row.addWidget(QLabel(label))
            row.addWidget(w)
        row.addStretch(1)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        lay = QVBoxLayout(self)
        for part in (row, self.bar, self.summary):
            (lay.addLayout if isinstance(part, QHBoxLayout) else lay.addWidget)(part)
        lay.addWidget(self.table, 1)  # the never-recalled memories (or the scopes)

    def run(self) -> None:
        vm = self.vm
        if vm.store is None or vm.spec() is None:
            vm.fail("Open a store and pick a pipeline first: the audit runs the window's "
                    "pipeline.")
            return
        kind = self.kind.currentText()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.bar.setRange(0, 0)  # busy until the first progress report
        spec = vm.spec()
        asked = vm.question.plain()
        limit = asked.limit or (spec.limit.default if spec is not None else 10)
        try:
            q = audit_question(asked, limit)
        except (InspectorError, ValueError) as exc:
            self._failed(str(exc))
            return
        self.summary.setText(f"Auditing ({kind}) under {spec.name if spec else ''}, limit "
                             f"{limit}…")
        vm.jobs.start("audit", audit_job, vm.store, q, kind, self.sample.value() or None,
                      self.progress, on_done=self.show_result, on_error=self._failed)

    def cancel(self) -> None:
        """Stop early: a recall audit keeps the memories probed so far."""
        self.vm.jobs.stop("audit")
        self.cancel_button.setEnabled(False)

    def _advanced(self, done: int, total: int) -> None:
        self.bar.setRange(0, total)
        self.bar.setValue(done)

    def _settled(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.bar.setRange(0, 1)
        self.bar.setValue(1)

    def _failed(self, message: str) -> None:
        self._settled()
        self.summary.setText(message)
        self.vm.fail(message)

    def show_result(self, res: dict[str, Any]) -> None:
        self._settled()
        self.result = res
        if res["kind"] == "scope-audit":
            rows = [(s["scope"], s["scope"], f"{s['short']} of {s['probes']} short",
                     f"pushdown fills {s['ended_by_pushdown']}",
                     json.dumps(s["leaked_in"]) if s["leaked_in"] else "no leaks")
                    for s in res["scopes"]]
            self.summary.setText(f"Scope isolation under {res['pipeline']}: "
                                 f"{res['leak_total']} rows of another scope returned. "
                                 f"{res['method']}.")
        else:
            rows = [(r["id"], str(r["scope"]), r["class"], f"{r['stage']} ({r['code']})",
                     json.dumps(r["detail"], ensure_ascii=False)[:200])
                    for r in res["never_recallable"]]
            counts = ", ".join(f"{c} {n}" for c, n in res["counts"].items() if n)
            self.summary.setText(f"{res['probes']} of {res['of']} memories probed under "
                                 f"{res['pipeline']} (limit {res['limit']})"
                                 f"{' — cancelled' if res['cancelled'] else ''}: {counts}. "
                                 f"{res['method']}.")
        self.table.setRowCount(len(rows))
        for i, values in enumerate(rows):
            for j, v in enumerate(values):
                self.table.setItem(i, j, QTableWidgetItem(str(v)))

    def open_row(self, row: int) -> None:
        """Open a never-recalled memory in the stage view: the window's query becomes the
        memory's own vector and text, in its own scope; the memory is the expected row (the
        stage view says where it fell) and stays selected wherever a stage table holds it."""
        res = self.result
        if res is None or res["kind"] != "recall-audit":
            return
        r = res["never_recallable"][row]
        vm = self.vm
        rid = r["id"]
        vm.select(rid)
        vm.put(scopes=None if r["scope"] is None else [str(r["scope"])],
               text=res.get("texts", {}).get(rid) or None, vector=None, vector_of=rid,
               expect=[rid])
