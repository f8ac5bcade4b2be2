"""The selected row in full: its text, every column, and its score as a waterfall from
distance to the threshold and limit decisions. Reads Trace.candidate(i); computes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.trace import Trace
from inspector.qt.theme import LIGHT, Tokens

FATE_WORDS = {
    "returned": ("returned", "Returned at rank {final}."),
    "below_min_score": ("cut", "Cut: blended score {score} is below the min score {min}."),
    "past_limit": ("past", "Cut: blended rank {after} is past the limit of {limit}."),
    "out_of_scope": ("out", "Removed by the scope filter: {rule}."),
    "not_fetched": ("out", "Not among the raw candidates at this depth ({depth}); a larger "
                      "over-fetch may bring it in."),
}


@dataclass(frozen=True)
class Step:
    label: str
    value: str
    start: float | None = None  # bar from start to end; None = a text-only step
    end: float | None = None
    kind: str = "bar"  # bar | down | total | threshold | verdict


def waterfall_steps(c: dict[str, Any], trace: Trace, fate: str) -> list[Step]:
    """The candidate's score, step by step, from the engine's own numbers and verdicts."""
    p = trace.params
    steps: list[Step] = []
    if c["base_score"] is None:
        return [Step("not scored", "outside the raw candidates", kind="verdict")]
    if p.mode == "vector":
        steps.append(Step("distance (L2²)" if p.distance == "l2" else "distance (cosine)",
                          f"{c['distance']:.4f}", kind="verdict"))
        steps.append(Step("vector 1/(1+d)", f"{c['base_score']:.4f}", 0.0, c["base_score"]))
    elif p.mode == "hybrid":
        ranks = f"vec #{c['vec_rank'] or '–'} · fts #{c['fts_rank'] or '–'}"
        steps.append(Step("leg ranks", ranks, kind="verdict"))
        steps.append(Step(f"fused (RRF k {p.rrf_k})", f"{c['base_score']:.5f}", 0.0,
                          c["base_score"]))
    else:
        steps.append(Step("full-text score", f"{c['base_score']:.4f}", 0.0, c["base_score"]))
    imp = "default" if c["importance"] is None else f"{c['importance_used']:.2f}"
    steps.append(Step(f"× imp {imp} · w {p.blend:.2f}", f"× {c['multiplier']:.3f}",
                      c["base_score"], c["score"], kind="down"))
    steps.append(Step("blended score", f"{c['score']:.4f}", 0.0, c["score"], kind="total"))
    if c["in_scope"]:
        ok = fate != "below_min_score"
        steps.append(Step(f"min score {p.min_score:g}", "passes" if ok else "below: cut",
                          p.min_score, p.min_score, kind="threshold"))
        if c["final_rank"]:
            verdict = f"rank {c['final_rank']} ≤ {p.limit}: returned"
        elif ok:
            verdict = f"rank {c['rank_after']} > {p.limit}: cut"
        else:
            verdict = "cut before the limit"
        steps.append(Step(f"limit {p.limit}", verdict, kind="verdict"))
    else:
        steps.append(Step("scope", "out of scope: removed", kind="verdict"))
    return steps


class Waterfall(QWidget):
    """Horizontal bars on one score axis: base, the multiplier's drop, blended, threshold."""

    ROW = 22

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("waterfall")
        self.steps: list[Step] = []
        self.tokens = LIGHT
        self.setMinimumHeight(self.ROW * 2)

    def set_steps(self, steps: list[Step]) -> None:
        if steps == self.steps:
            return  # an over-fetch tick often leaves the selected row's score as it was
        self.steps = steps
        self.setMinimumHeight(self.ROW * max(2, len(steps)) + 6)
        self.setToolTip("\n".join(f"{s.label}: {s.value}" for s in steps))
        self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:
        """Labels left (as wide as the widest, at most half the width), bars in the middle,
        values right; a verdict starts after its own label when the bars' column is too
        narrow for it. A text that still does not fit ends in "…" (the tooltip has all)."""
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        tk = self.tokens
        values = [v for s in self.steps for v in (s.start, s.end) if v is not None]
        top = max(values) * 1.1 if values and max(values) > 0 else 1.0
        bold = QFont(self.font())
        bold.setBold(True)
        fm, fm_bold = QFontMetricsF(self.font()), QFontMetricsF(bold)
        widest = max((fm.horizontalAdvance(s.label) for s in self.steps), default=0.0)
        label_w = min(widest + 6, 170.0, self.width() * 0.5)
        value_w = max((QFontMetricsF(bold if s.kind == "total" else self.font())
                       .horizontalAdvance(s.value) for s in self.steps
                       if s.start is not None and s.kind != "threshold"), default=0.0) + 4
        bar_x = label_w + 4
        bar_w = max(0.0, self.width() - bar_x - value_w - 4)

        def text(x: float, y: float, width: float, words: str, font: QFont) -> None:
            p.setFont(font)
            shown = QFontMetricsF(font).elidedText(words, Qt.TextElideMode.ElideRight,
                                                   max(0.0, width - 1))
            p.drawText(QRectF(x, y, width, self.ROW), Qt.AlignmentFlag.AlignVCenter, shown)

        for n, s in enumerate(self.steps):
            y = 3 + n * self.ROW
            p.setPen(QColor(tk.text))
            text(0, y, label_w, s.label, self.font())
            colour = {"bar": tk.scoped, "down": tk.cut, "total": tk.returned,
                      "threshold": tk.cut}.get(s.kind, tk.muted)
            if s.kind == "threshold" and s.start is not None:
                x = bar_x + bar_w * s.start / top
                p.setPen(QColor(colour))
                p.drawLine(int(x), int(y + 2), int(x), int(y + self.ROW - 2))
            elif s.start is not None and s.end is not None:
                a, b = sorted((s.start, s.end))
                rect = QRectF(bar_x + bar_w * a / top, y + 4, max(1.5, bar_w * (b - a) / top),
                              self.ROW - 8)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(colour))
                p.drawRect(rect)
            font = bold if s.kind in ("total", "verdict") else self.font()
            p.setPen(QColor(tk.text))
            if s.kind == "verdict":
                need = fm_bold.horizontalAdvance(s.value)
                x0 = bar_x if bar_x + need <= self.width() else \
                    min(bar_x, fm.horizontalAdvance(s.label) + 10)
            elif s.start is None or s.kind == "threshold":
                x0 = bar_x + bar_w * (s.start or 0) / top + 4
            else:
                x0 = bar_x + bar_w + 4
            text(x0, y, self.width() - x0, s.value, font)
        p.end()


class DetailPane(QWidget):
    """Everything about the selected row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._shown_columns: list[tuple[str, str]] | None = None
        self.tokens = LIGHT
        self.title = QLabel("Select a row to see it in full", objectName="sectionTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setWordWrap(True)
        self.fate = QLabel("", objectName="fate")
        self.fate.setWordWrap(True)
        self.text = QLabel("", objectName="detailText")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.waterfall = Waterfall(self)
        self.columns = QTableWidget(0, 2, self)
        self.columns.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.columns.setObjectName("detailColumns")
        self.columns.setHorizontalHeaderLabels(["column", "value"])
        self.columns.verticalHeader().hide()
        self.columns.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.columns.horizontalHeader().setSectionResizeMode(
            1, QHeaderView.ResizeMode.Stretch)
        self.columns.verticalHeader().setDefaultSectionSize(20)
        self.columns.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # ids keep both ends
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        for w in (self.title, self.fate, self.text):
            lay.addWidget(w)
        lay.addWidget(QLabel("Score waterfall", objectName="sectionTitle"))
        lay.addWidget(self.waterfall)
        lay.addWidget(QLabel("Columns", objectName="sectionTitle"))
        lay.addWidget(self.columns, 1)

    def show_row(self, trace: Trace | None, row_id: Any) -> None:
        i = trace.row_of(row_id) if trace is not None and row_id is not None else None
        if i is None:
            self.title.setText("Select a row to see it in full" if row_id is None
                               or trace is None
                               else f"{row_id} is not in this lane's candidates")
            for w in (self.fate, self.text):
                w.setText("")
            self.waterfall.set_steps([])
            self.columns.setRowCount(0)
            self._shown_columns = None
            return
        c = trace.candidate(i)
        self.title.setText(f"Row {c['id']}")
        fate = trace.outcome(i)
        kind, sentence = FATE_WORDS[fate]
        self.fate.setText(sentence.format(
            final=c["final_rank"], score=f"{c['score']:.4f}" if c["score"] is not None else "–",
            min=trace.params.min_score, after=c["rank_after"], limit=trace.params.limit,
            rule=c["scope_rule"], depth=trace.depths.pool))
        colour = {"returned": self.tokens.returned, "past": self.tokens.scoped}.get(
            kind, self.tokens.cut)
        sheet = f"color: {colour}; font-weight: 600;"
        if sheet != self.fate.styleSheet():  # restyling is costly: only on change
            self.fate.setStyleSheet(sheet)
        col = trace.pool.roles.get("text")
        self.text.setText(str(c["columns"].get(col, "")) if col else "")
        self.waterfall.set_steps(waterfall_steps(c, trace, fate))
        self._fill_columns(c["columns"])

    def _fill_columns(self, cols: dict[str, Any]) -> None:
        shown = [(k, "null" if v is None else str(v)) for k, v in cols.items()]
        if shown == self._shown_columns:
            return  # a slider tick leaves the selected row's columns as they were
        self._shown_columns = shown
        self.columns.setRowCount(len(cols))
        for r, (k, v) in enumerate(cols.items()):
            self.columns.setItem(r, 0, QTableWidgetItem(k))
            item = QTableWidgetItem("null" if v is None else str(v))
            item.setToolTip(str(v))
            self.columns.setItem(r, 1, item)

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        self.waterfall.tokens = tk
        self.waterfall.update()
