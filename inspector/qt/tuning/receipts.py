"""Receipts in the window: File > Export receipt… writes the bundle (JSON + HTML) through
core.evidence.receipt and core.evidence.bundle; File > Open receipt… reopens one offline.

Offline, the window shows the receipt's stages from its bundled pool and the sliders keep
re-ranking that pool (`pipeline.derive`, as always); anything that needs LanceDB (a new query,
a sweep, a comparison, a fresh map) is disabled and says so. Opening a store ends it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog

from inspector.core.errors import InspectorError
from inspector.core.evidence.bundle import Loaded
from inspector.qt.tuning.tuning_jobs import open_receipt_job, receipt_job
from inspector.qt.viewmodel import Inspector

OFFLINE_NOTE = ("Receipt mode: the stages come from the receipt's bundled pool and the sliders "
                "re-rank it without the store. New queries, sweeps, comparisons and maps need "
                "LanceDB: open a store (File > Open) to leave this mode.")


def enter_offline(vm: Inspector, loaded: Loaded) -> None:
    """Put the view-model on a bundled pool: no store, one lane, the bundle's parameters.

    The lane's probe is the pool itself, as `receipt.build_receipt` derives its trace."""
    vm.show_pool(loaded.pool, loaded.params)


def question_receipt_job(store: Any, asked: Any, *rest: Any) -> list[str]:
    """The receipt of the question on screen (its fixed-engine query read in this worker)."""
    from inspector.qt.tuning.bridge import legacy_job

    return receipt_job(store, legacy_job(store, asked)[1], asked, *rest)


class Receipts(QObject):
    """Export and reopen receipts for one window; `offline_changed` tells the panels."""

    offline_changed = Signal(bool)
    exported = Signal(list)  # paths written

    def __init__(self, window: Any, tuning: Any) -> None:
        super().__init__(window)
        self.window, self.vm = window, window.tuning_bridge
        self.tuning = tuning  # the dock's panels: judgments (grades), compare (side B)
        self.loaded: Loaded | None = None
        self.path: str | None = None
        self.vm.store_opened.connect(lambda _o: self.leave_offline())

    @property
    def offline(self) -> bool:
        return self.loaded is not None

    # ---- export ----
    def export(self, path: str) -> None:
        vm = self.vm
        if vm.store is None or self.window.vm.trace is None:
            vm.fail("A receipt is built from the store: run a query on an open store first.")
            return
        against = None
        compare = self.tuning.built("compare")
        cmp = compare.result if compare is not None else None
        if cmp is not None:
            against = (cmp.labels[1], cmp.params[1])
        grades = self.tuning.judgments.grades()
        try:
            asked = vm.to_question()
        except InspectorError as exc:
            vm.fail(str(exc))
            return
        self.window.status_label.setText("Building the receipt…")
        vm.jobs.start("receipt", question_receipt_job, vm.store, asked, path, grades,
                      against, vm.preset or "the window's settings", on_done=self._written,
                      on_error=vm.fail)

    def _written(self, paths: list[str]) -> None:
        self.window.status_label.setText("Receipt written: " + ", ".join(paths))
        self.exported.emit(paths)

    def choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Export receipt (JSON + HTML)",
                                              "receipt.json", "Receipt bundle (*.json)")
        if path:
            self.export(path)

    # ---- open ----
    def open(self, path: str) -> None:
        self.vm.jobs.start("receipt", open_receipt_job, path,
                           on_done=lambda loaded, p=path: self._opened(loaded, p),
                           on_error=self.vm.fail)

    def _opened(self, loaded: Loaded, path: str) -> None:
        try:
            enter_offline(self.vm, loaded)
        except InspectorError as exc:
            self.vm.fail(str(exc))
            return
        self.loaded, self.path = loaded, path
        self._show_offline(True)

    def choose_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a receipt", "",
                                              "Receipt bundle (*.json *.html)")
        if path:
            self.open(path)

    def leave_offline(self) -> None:
        if self.loaded is not None:
            self.loaded = self.path = None
            self._show_offline(False)

    def _show_offline(self, on: bool) -> None:
        w = self.window
        w.query_bar.setEnabled(not on)
        w.query_bar.setToolTip(OFFLINE_NOTE if on else "")
        if on and self.loaded is not None:
            data = self.loaded.data
            name = Path(self.path or "receipt").name
            w.setWindowTitle(f"receipt {name} (offline)")  # Qt adds the app name
            st = data.get("store") or {}
            w.query_bar.show_offline(name, f"A receipt of {st.get('uri')} ({st.get('table')}, "
                                           f"version {st.get('version')}), opened offline")
            w.store_features.show_offline()
            w.status_label.setText(f"Opened receipt {name}: {st.get('uri')} "
                                   f"({st.get('table')}, version {st.get('version')}), "
                                   f"created {data.get('created')}. Offline: the sliders "
                                   "re-rank the bundled pool.")
        self.offline_changed.emit(on)
