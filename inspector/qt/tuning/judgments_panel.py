"""The Judgments tab: mark rows relevant (with a grade) for the current query and scope, see
the marks in every stage table, save and load a judgments file through the core, and read
recall@k, precision@k, MRR and nDCG@k of the results on screen (core metrics)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.analysis.judgments import Judgments, load_judgments, save_judgments
from inspector.core.analysis.metrics import all_metrics
from inspector.core.errors import InspectorError
from inspector.qt.viewmodel import Inspector, scored

GRADES = (1, 2, 3)


def mark_label(grade: float) -> str:
    """What a stage table shows before a judged row's text."""
    return "⊘ " if grade <= 0 else f"✓{grade:g} "


class JudgmentsPanel(QWidget):
    """Holds the immutable Judgments value; every mark replaces it with a new one."""

    judgments_changed = Signal()
    judgments_loaded = Signal(str)  # file name: the sweep offers the file as a query set

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.judgments = Judgments()
        self.path: str | None = None
        self.title = QLabel("", objectName="sectionTitle")
        self.title.setWordWrap(True)
        self.grade = QSpinBox(self, objectName="judgeGrade", minimum=1, maximum=3, value=1)
        self.grade.setToolTip("Grade used by 'Mark relevant' (1 relevant … 3 perfect; nDCG "
                              "uses it as the gain).")
        self.mark_button = QPushButton("Mark selected relevant", self)
        self.not_button = QPushButton("Mark not relevant", self)
        self.clear_button = QPushButton("Clear mark", self)
        self.load_button = QPushButton("Load…", self)
        self.save_button = QPushButton("Save…", self)
        self.metrics = QLabel("", objectName="judgeMetrics")
        self.metrics.setWordWrap(True)
        self.table = QTableWidget(0, 4, self, objectName="judgeTable")
        self.table.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.table.setHorizontalHeaderLabels(["grade", "rank now", "id", "text"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.currentCellChanged.connect(self._picked)
        row = QHBoxLayout()
        for w in (QLabel("grade"), self.grade, self.mark_button, self.not_button,
                  self.clear_button):
            row.addWidget(w)
        row.addStretch(1)
        row.addWidget(self.load_button)
        row.addWidget(self.save_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addWidget(self.title)
        lay.addLayout(row)
        lay.addWidget(self.metrics)
        lay.addWidget(self.table, 1)
        self.mark_button.clicked.connect(lambda: self.mark_selected(self.grade.value()))
        self.not_button.clicked.connect(lambda: self.mark_selected(0))
        self.clear_button.clicked.connect(lambda: self.mark_selected(None))
        self.load_button.clicked.connect(self._choose_load)
        self.save_button.clicked.connect(self._choose_save)
        vm.trace_changed.connect(self.refresh)
        self.refresh()

    # ---- the current query's key ----
    def key(self) -> tuple[str, str | None]:
        q = self.vm.question
        text = (q.text or "").strip() or (f"example:{q.vector_of}" if q.vector_of else "")
        return text, q.scopes[0] if q.scopes else None

    def grades(self) -> dict[str, float]:
        text, scope = self.key()
        return self.judgments.grades_for(text, scope) if text else {}

    def grade_pairs(self) -> tuple[tuple[str, float], ...]:
        return tuple(sorted(self.grades().items()))

    # ---- marking ----
    def mark(self, row_id: Any, grade: float | None) -> None:
        """Grade a row for the current query (None forgets its judgment)."""
        text, scope = self.key()
        if not text:
            self.vm.fail("Run a query first: judgments belong to a query.")
            return
        try:
            if grade is None:
                self.judgments = self.judgments.remove(text, scope, row_id)
            else:
                self.judgments = self.judgments.add(text, scope, row_id, grade)
        except InspectorError as exc:
            self.vm.fail(str(exc))
            return
        self.judgments_changed.emit()
        self.refresh()

    def mark_selected(self, grade: float | None) -> None:
        if self.vm.selected is None:
            self.vm.fail("Select a row first (click it in any stage), then mark it.")
            return
        self.mark(self.vm.selected, grade)

    def add_menu_actions(self, menu: QMenu, row_id: Any) -> None:
        """Extra entries for a stage table's context menu."""
        menu.addSeparator()
        now = self.grades().get(str(row_id))
        for g in GRADES:
            act = QAction(f"Mark relevant, grade {g}" + ("  (current)" if now == g else ""),
                          menu)
            act.triggered.connect(lambda _=False, g=g: self.mark(row_id, g))
            menu.addAction(act)
        act = QAction("Mark not relevant (grade 0)", menu)
        act.triggered.connect(lambda: self.mark(row_id, 0))
        menu.addAction(act)
        if now is not None:
            act = QAction("Clear judgment", menu)
            act.triggered.connect(lambda: self.mark(row_id, None))
            menu.addAction(act)

    # ---- files ----
    def load(self, path: str) -> bool:
        try:
            self.judgments = load_judgments(path)
        except InspectorError as exc:
            self.vm.fail(str(exc))
            return False
        self.path = path
        self.unknown: list[str] = []
        self.judgments_changed.emit()
        self.judgments_loaded.emit(Path(path).name)
        self.refresh()
        store = self.vm.store
        if store is not None:  # ids that match no row would make every metric 0 silently
            ids = [rid for q in self.judgments.queries for rid, _ in q.grades]
            self.vm.jobs.start("judgments.unknown", store.missing_ids, ids,
                               on_done=self._unknown_found, on_error=self.vm.fail)
        return True

    def _unknown_found(self, missing: list[str]) -> None:
        self.unknown = missing
        if missing:
            shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
            self.vm.fail(f"{len(missing)} judged id(s) in {Path(self.path or '').name} match "
                         f"no row of this table: {shown}.")

    def save(self, path: str) -> bool:
        text, scope = self.key()
        j = self.judgments.with_query(text, scope) if text else self.judgments
        try:
            save_judgments(j, path)
        except InspectorError as exc:
            self.vm.fail(str(exc))
            return False
        self.judgments, self.path = j, path
        return True

    def _choose_load(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load judgments", self.path or "",
                                              "Judgments (*.json *.csv);;All files (*)")
        if path:
            self.load(path)

    def _choose_save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save judgments",
                                              self.path or "judgments.json",
                                              "JSON (*.json);;CSV (*.csv)")
        if path:
            self.save(path)

    # ---- showing ----
    def marks(self) -> dict[str, str]:
        return {i: mark_label(g) for i, g in self.grades().items()}

    def metric_values(self) -> dict[str, float | None]:
        """Core metrics of the final results on screen against this query's judgments."""
        t, grades = self.vm.trace, self.grades()
        if t is None or not grades:
            return {}
        return all_metrics(t.final.ids, t.limit, grades, None)

    def refresh(self) -> None:
        text, scope = self.key()
        grades, t = self.grades(), self.vm.trace
        where = f" in scope {scope}" if scope else ""
        file = f" · file {Path(self.path).name}" if self.path else ""
        n = len(self.judgments.queries)
        self.title.setText(f"Judgments for “{text[:70]}”{where}: {len(grades)} marked"
                           f"{file} ({n} quer{'y' if n == 1 else 'ies'} in the set)"
                           if text else "Run a query, then mark rows relevant.")
        values = self.metric_values()
        if values:
            self.metrics.setText("Results on screen: " + " · ".join(
                f"{k} {'–' if v is None else f'{v:.3f}'}" for k, v in values.items()))
        else:
            self.metrics.setText("No judgments for this query yet: right-click a row in any "
                                 "stage (or Tuning > Judge) to mark it.")
        ranks = {x: r for r, x in enumerate(t.final.ids, 1)} if t is not None else {}
        self.table.setRowCount(len(grades))
        for r, (rid, g) in enumerate(sorted(grades.items(), key=lambda x: (-x[1], x[0]))):
            row = scored(t, rid)
            body = row.row.text if row is not None else ""
            cells = (f"{g:g}", str(ranks.get(rid, "not returned")), rid, " ".join(body.split()))
            for c, value in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(value))

    def _picked(self, row: int, *_: Any) -> None:
        item = self.table.item(row, 2) if row >= 0 else None
        if item is not None and scored(self.vm.trace, item.text()) is not None:
            self.vm.select(item.text())
