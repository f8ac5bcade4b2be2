"""The Compare tab: two questions on the window's query (the window's pipeline or another
preset, each with KEY=VALUE changes, as `inspector report --against-preset P --against K=V`
asks them), side by side.

Both lists are aligned row by row with their rank shift; rows only one side returned are
tinted; Jaccard, RBO, Kendall's tau, each side's scoped recall and the truth rows it did not
return all come from `core.analysis.compare` (run in a worker, since it queries the store)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.analysis.compare import Comparison
from inspector.core.engine.flow.question import Question
from inspector.core.engine.flow.shipped import shipped_names
from inspector.core.engine.flow.spec import load_shipped
from inspector.core.errors import InspectorError
from inspector.qt.theme import LIGHT, Tokens
from inspector.qt.tuning.stale import StaleNote
from inspector.qt.tuning.tuning_jobs import compare_job, has_query, side_question
from inspector.qt.viewmodel import Inspector, holds

CURRENT = ""  # the side combo's "the window's question" entry
COLUMNS = ("rank A", "rank B", "shift", "only in", "scope", "id", "text")


def _num(v: float | None, digits: int = 3) -> str:
    return "undefined" if v is None else f"{v:.{digits}f}"


class CompareView(QWidget):
    """Pick side A and side B, press Compare; the result is kept until the next one."""

    compared = Signal(object)  # Comparison

    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.tokens: Tokens = LIGHT
        self.result: Comparison | None = None
        self.questions: tuple[Question, Question] | None = None  # the sides of the result
        self.sides: list[tuple[QComboBox, QLineEdit]] = []
        form = QGridLayout()
        for n, (name, preset) in enumerate((("A", "docs-before-fix"),
                                            ("B", "docs-pushdown"))):
            combo = QComboBox(self, objectName=f"compareSide{name}")
            combo.addItem("the window's question", CURRENT)
            for key in shipped_names():
                combo.addItem(f"{key}: {load_shipped(key).title}", key)
            combo.setCurrentIndex(max(0, combo.findData(preset)))
            edit = QLineEdit(self, objectName=f"compareChanges{name}")
            edit.setPlaceholderText("changes, e.g. overfetch=3, fetch.cap=40")
            edit.setToolTip("KEY=VALUE changes on top of this side (as `inspector report "
                            "--against`: a STAGE.PARAM, a query option on the stage that holds "
                            "it, limit or scope); a preset keeps the window's query, scopes, "
                            "limit and clock.")
            form.addWidget(QLabel(f"Side {name}"), n, 0)
            form.addWidget(combo, n, 1)
            form.addWidget(edit, n, 2)
            self.sides.append((combo, edit))
        self.run_button = QPushButton("Compare", self, objectName="compareRun")
        form.addWidget(self.run_button, 0, 3, 2, 1)
        form.setColumnStretch(2, 1)
        self.summary = QLabel("Compare two pipelines or parameter sets on the window's query: "
                              "both result lists aligned, rank shifts, agreement, and the rows "
                              "of its truth each side did not return.",
                              objectName="compareSummary")
        self.summary.setWordWrap(True)
        self.stale_note = StaleNote(vm, self)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS), self, objectName="compareTable")
        self.table.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        for c, w in enumerate((60, 60, 56, 64, 56, 150)):
            self.table.setColumnWidth(c, w)
        self.table.currentCellChanged.connect(self._picked)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addLayout(form)
        lay.addWidget(self.stale_note)
        lay.addWidget(self.summary)
        lay.addWidget(self.table, 1)
        self.run_button.clicked.connect(self.run)

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        self.stale_note.set_tokens(tk)
        if self.result is not None:
            self.show_result(self.result)

    def side(self, n: int) -> tuple[str, Question]:
        """Label and question of side n (0 = A)."""
        combo, edit = self.sides[n]
        preset = combo.currentData() or None
        label = preset or "window"
        if edit.text().strip():
            label += f" ({edit.text().strip()})"
        return label, side_question(self.vm.question.plain(), preset, edit.text())

    def run(self) -> None:
        vm = self.vm
        if vm.store is None:
            vm.fail("Compare runs both sides against the store; open a store first.")
            return
        if not has_query(vm.question):
            vm.fail("Run a query first: Compare uses the window's query.")
            return
        try:
            (la, a), (lb, b) = self.side(0), self.side(1)
        except (InspectorError, ValueError) as exc:
            vm.fail(str(exc))
            return
        self.run_button.setEnabled(False)
        self.summary.setText("Comparing…")
        self.stale_note.asked()
        self.questions = (a, b)
        vm.jobs.start("compare", compare_job, vm.store, a, b, (la, lb),
                      on_done=self._answered, on_error=self._failed)

    @property
    def running(self) -> bool:
        return self.vm.jobs.busy("compare")

    def _failed(self, message: str) -> None:
        self.run_button.setEnabled(True)
        self.summary.setText(message)
        self.vm.fail(message)

    def _answered(self, c: Comparison) -> None:
        self.run_button.setEnabled(True)
        self.show_result(c)
        self.compared.emit(c)

    def show_result(self, c: Comparison) -> None:
        self.result = c
        self.stale_note.refresh()
        self.summary.setText(self.describe(c))
        tk = self.tokens
        tint = {"a": QColor(tk.cut), "b": QColor(tk.returned)}
        for colour in tint.values():
            colour.setAlpha(45)
        self.table.setRowCount(len(c.rows))
        for r, row in enumerate(c.rows):
            shift = row.shift
            cells = (str(row.rank_a or "–"), str(row.rank_b or "–"),
                     "·" if shift == 0 else ("–" if shift is None else
                                             (f"▲{shift}" if shift > 0 else f"▼{-shift}")),
                     {"both": "", "a": "A", "b": "B"}[row.side],
                     "–" if row.scope is None else str(row.scope),
                     str(row.id), " ".join((row.text or "").split()))
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col < 5:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if row.side in tint:
                    item.setBackground(QBrush(tint[row.side]))
                if col == 2 and shift:
                    item.setForeground(QBrush(QColor(tk.returned if shift > 0 else tk.cut)))
                self.table.setItem(r, col, item)

    @staticmethod
    def describe(c: Comparison) -> str:
        """The comparison's numbers in two lines of plain words."""
        la, lb = c.labels
        only_a = sum(1 for r in c.rows if r.side == "a")
        only_b = sum(1 for r in c.rows if r.side == "b")
        tau = "undefined (fewer than 2 shared)" if c.kendall_tau is None \
            else f"{c.kendall_tau:.3f}"
        lines = [f"A = {la}: {len(c.ids[0])} results · B = {lb}: {len(c.ids[1])} results · "
                 f"{c.shared} shared, {only_a} only in A, {only_b} only in B.",
                 f"Jaccard {c.jaccard:.3f} · RBO (p = {c.rbo_p:g}) {c.rbo:.3f} · Kendall's tau "
                 f"{tau}."]
        for n, side in enumerate(("A", "B")):
            starved = c.starved[n]
            words = ("no truth to measure against" if starved is None else
                     f"{starved} of its truth's top rows not returned")
            stages = ", ".join(f"{k} {v}" for k, v in c.counters[n].items() if k != "returned")
            lines.append(f"{side} ({c.pipelines[n]}): scoped recall {_num(c.recall[n])}, "
                         f"{words} (rows per stage: {stages}).")
        return "\n".join(lines)

    def _picked(self, row: int, *_: Any) -> None:
        if self.result is not None and 0 <= row < len(self.result.rows):
            rid = self.result.rows[row].id
            if self.vm.trace is not None and holds(self.vm.trace, str(rid)):
                self.vm.select(rid)
