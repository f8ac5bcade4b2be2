"""Receipts in the window: File > Export receipt… writes the receipt of the window's question
(and of the Compare tab's side B, when it compared) as RECEIPT.json + RECEIPT.html through
core.evidence.receipt, as `inspector report` writes it (by the guarded writer: never into the
open store); File > Open receipt… reads one back and re-runs its question on the open store
as of the recorded version (`receipt.reopen`): when the re-run returns the recorded rows, the
window asks that question, on that version of the table. A receipt of another table, or a
version the table no longer has, or a re-run that differs from the record, is one sentence
and the window keeps its question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog

from inspector.qt.tuning.tuning_jobs import has_query, open_receipt_job, receipt_job


class Receipts(QObject):
    """Export and reopen receipts for one window."""

    exported = Signal(list)  # paths written
    reopened = Signal(object)  # the receipt whose question the window now asks

    def __init__(self, window: Any, tuning: Any) -> None:
        super().__init__(window)
        self.window, self.vm = window, window.vm
        self.tuning = tuning  # the dock's panels: judgments (grades), compare (side B)
        self.loaded: Any = None  # the last receipt reopened
        self.path: str | None = None

    @property
    def offline(self) -> bool:
        """Receipts no longer open without the store: a reopened receipt is its question
        asked again on the table as of its version."""
        return False

    # ---- export ----
    def export(self, path: str) -> None:
        vm = self.vm
        if vm.store is None or not has_query(vm.question):
            vm.fail("A receipt is built from the store: run a query on an open store first.")
            return
        against = None
        labels: tuple[str | None, str | None] = (None, None)
        compare = self.tuning.built("compare")
        if compare is not None and compare.result is not None and compare.questions:
            against = compare.questions[1]
            labels = (None, compare.result.labels[1])
        grades = self.tuning.judgments.grades()
        self.window.status_label.setText("Building the receipt…")
        vm.jobs.start("receipt", receipt_job, vm.store, vm.question.plain(), against, labels,
                      grades, path, on_done=self._written, on_error=vm.fail)

    def _written(self, paths: list[str]) -> None:
        self.window.status_label.setText("Receipt written: " + ", ".join(paths))
        self.exported.emit(paths)

    def choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Export receipt (JSON + HTML)",
                                              "receipt.json", "Receipt (*.json)")
        if path:
            self.export(path)

    # ---- open ----
    def open(self, path: str) -> None:
        self.vm.jobs.start("receipt", open_receipt_job, path, self.vm.store,
                           on_done=lambda got, p=path: self._opened(got, p),
                           on_error=self.vm.fail)

    def _opened(self, got: tuple[Any, Any, str], path: str) -> None:
        receipt, q, why = got
        name = Path(path).name
        if q is None:
            self.vm.fail(f"Receipt {name} was read, but its question cannot be asked again "
                         f"here: {why.rstrip('.')}.")
            return
        vm, st = self.vm, self.vm.store
        fields = q.model_dump(by_alias=False)
        fields.pop("schema_", None)
        fields.update(store=st.uri, table=st.table_name)
        version = receipt.reopen.version
        if version is not None and version != st.version:
            # the question on the recorded version: the table opened as of it, the question
            # kept (asked once it is open)
            if not vm.put(**fields):
                return
            self.window.store_features.open(st.uri, st.table_name,
                                            _options_at(vm, version), then="keep")
        elif not vm.put(**fields):  # a field that changed asks the question again
            return
        self.loaded, self.path = receipt, path
        self.window.status_label.setText(
            f"Opened receipt {name}: its question asked again on {st.table_name} version "
            f"{version}, created {receipt.created}.")
        self.reopened.emit(receipt)

    def choose_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a receipt", "",
                                              "Receipt (*.json *.html)")
        if path:
            self.open(path)


def _options_at(vm: Any, version: int) -> Any:
    from inspector.qt.stores.store_features import options_of

    return options_of(vm.opened).at(version)
