"""The selected row in full: what became of it, its score through every stage as a
waterfall (the inputs that fed it, each stage's score, the drop or the final rank), its path,
text and stored columns. Reads the trace (FlowTrace); computes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.flow.answer import iso
from inspector.core.engine.flow.insight.expect import where_dropped
from inspector.core.engine.flow.rows import DROP_LABELS, Scored, find_drop
from inspector.core.engine.flow.runner import FlowTrace
from inspector.qt.theme import LIGHT, Tokens

INPUT_WORDS = {"distance": "distance", "vector": "vector score", "bm25": "BM25",
               "fused": "fused (RRF)", "importance": "importance", "multiplier": "× multiplier",
               "vec_rank": "vector rank", "fts_rank": "full-text rank"}


@dataclass(frozen=True)
class Step:
    label: str
    value: str
    start: float | None = None  # bar from start to end; None = a text-only step
    end: float | None = None
    kind: str = "bar"  # bar | down | total | threshold | verdict


def row_path(trace: FlowTrace, rid: str) -> list[tuple[str, str]]:
    """(stage, what happened to the row there) for every stage that saw it."""
    out: list[tuple[str, str]] = []
    for st in trace.stages:
        if st.role == "query":
            continue
        rank = next((i for i, s in enumerate(st.rows, start=1) if s.id == rid), None)
        if rank is not None:
            out.append((st.name, f"#{rank} · {st.rows[rank - 1].score:.4f}"))
            continue
        drop = find_drop(st.dropped, rid)
        if drop is not None:
            out.append((st.name, "✗ " + DROP_LABELS.get(drop.code, drop.code)))
            if st.role != "fetch":
                break
    return out


def nobreak(text: str) -> str:
    """Operators such as != and <= kept whole where a label wraps (Qt breaks after "!")."""
    for op in ("!=", "<=", ">=", "=="):
        text = text.replace(op, op[0] + "\u2060" + op[1])
    return text


def _num(v: float) -> str:
    return f"{v:.4g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.3e}"


def waterfall_steps(trace: FlowTrace, rid: str) -> list[Step]:
    """The row's score through every stage, from the engine's own numbers: what fed the first
    score (its inputs), then each stage's score (a change drawn as a step down or up), then the
    stage that dropped it or its final rank."""
    steps: list[Step] = []
    last: float | None = None
    first: Scored | None = None
    for st in trace.stages:
        if st.role == "query":
            continue
        at = next((i for i, s in enumerate(st.rows, start=1) if s.id == rid), None)
        if at is None:
            drop = find_drop(st.dropped, rid)
            if drop is not None and (st.role != "fetch" or last is None):
                detail = ", ".join(f"{k} {_num(v) if isinstance(v, float) else v}"
                                   for k, v in drop.detail)
                steps.append(Step(st.name, "✗ " + DROP_LABELS.get(drop.code, drop.code)
                                  + (f" ({detail})" if detail else ""), kind="verdict"))
                return steps
            continue
        s = st.rows[at - 1]
        if first is None:
            first = s
            for k, v in s.inputs:
                if k in ("distance", "vec_rank", "fts_rank", "bm25"):
                    steps.append(Step(INPUT_WORDS.get(k, k), _num(v), kind="verdict"))
        if last is None or s.score != last:
            kind = "bar" if last is None else ("down" if s.score < last else "total")
            steps.append(Step(f"{st.name} #{at}", f"{s.score:.4f}",
                              0.0 if last is None else last, s.score, kind=kind))
            mult = s.input("multiplier")
            if mult is not None and last is not None:
                steps[-1] = Step(f"{st.name} ×{mult:.3f} #{at}", f"{s.score:.4f}", last,
                                 s.score, kind=kind)
        else:
            steps.append(Step(f"{st.name} #{at}", "kept", kind="verdict"))
        last = s.score
    if first is None:
        fall = where_dropped(trace, rid)
        return [Step("not fetched", str(fall.detail.get("why", fall.code)), kind="verdict")]
    rank = trace.final.ids.index(rid) + 1 if rid in trace.final.ids else None
    steps.append(Step("returned" if rank else "not returned",
                      f"rank {rank} of limit {trace.limit}" if rank else "–", kind="verdict"))
    return steps


def fate_line(trace: FlowTrace, rid: str) -> tuple[str, str]:
    """(kind, sentence) of what became of the row: returned, or where it fell and why."""
    fall = where_dropped(trace, rid)
    if fall.code == "returned":
        return "returned", f"Returned at rank {fall.detail['rank']} of limit {trace.limit}."
    words = DROP_LABELS.get(fall.code, fall.code.replace("_", " "))
    if fall.code == "not_fetched":
        return "out", f"Not fetched: {fall.detail.get('why', '')}."
    return "out", f"Dropped at {fall.stage}: {words}."


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


def _plain(name: str, wrap: bool = False) -> QLabel:
    label = QLabel("", objectName=name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class RowPath(QWidget):
    """The row's path: each stage that saw it, beside what happened to it there (its rank and
    score, or why it left), then the inputs that fed its score. Plain labels in a grid, not a
    rich-text table: every slider tick changes the scores, and Qt laid the table out again on
    each (~2.5 ms a tick, most of what the detail pane cost); a changed plain label is laid
    out in a fraction of that. A label is only told a text it does not show already."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("detailPath")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        self._grid = QGridLayout()
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(8)
        self._grid.setVerticalSpacing(1)
        self._grid.setColumnStretch(1, 1)
        lay.addLayout(self._grid)
        self.inputs = _plain("pathInputs", wrap=True)
        self.inputs.hide()
        lay.addWidget(self.inputs)
        self._pairs: list[tuple[QLabel, QLabel]] = []
        self._shown: tuple[tuple[tuple[str, str], ...], str] = ((), "")

    def set_path(self, rows: list[tuple[str, str]], inputs: str) -> None:
        """(stage, what) per stage that saw the row; `inputs`: what fed its score ("" none)."""
        shown = (tuple(rows), inputs)
        if shown == self._shown:
            return
        self._shown = shown
        while len(self._pairs) < len(rows):
            pair = (_plain("pathStage"), _plain("pathWhat", wrap=True))
            n = len(self._pairs)
            self._grid.addWidget(pair[0], n, 0, Qt.AlignmentFlag.AlignTop)
            self._grid.addWidget(pair[1], n, 1, Qt.AlignmentFlag.AlignTop)
            self._pairs.append(pair)
        for n, (stage_label, what_label) in enumerate(self._pairs):
            here = n < len(rows)
            if here:
                _say(stage_label, rows[n][0])
                _say(what_label, nobreak(rows[n][1]))
            stage_label.setVisible(here)
            what_label.setVisible(here)
        _say(self.inputs, nobreak(inputs))
        self.inputs.setVisible(bool(inputs))

    def lines(self) -> list[str]:
        """What the path shows, a line per stage then the inputs (as a person reads it)."""
        rows, inputs = self._shown
        return [f"{stage}  {what}" for stage, what in rows] + ([inputs] if inputs else [])


def _say(label: QLabel, text: str) -> None:
    if label.text() != text:
        label.setText(text)


class DetailPane(QWidget):
    """Everything about the selected row: what became of it, its path and score through every
    stage (a waterfall), its text and stored columns. Reads the trace; computes nothing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._shown_columns: list[tuple[str, str]] | None = None
        self.tokens = LIGHT
        self.shown: str | None = None
        self.title = QLabel("Select a row to see its path through the stages.",
                            objectName="sectionTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setWordWrap(True)
        self.fate = QLabel("", objectName="fate")
        self.fate.setWordWrap(True)
        self.path = RowPath(self)
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
        for w in (self.title, self.fate):
            lay.addWidget(w)
        lay.addWidget(QLabel("Score through the stages", objectName="sectionTitle"))
        lay.addWidget(self.waterfall)
        lay.addWidget(self.path)
        lay.addWidget(self.text)
        lay.addWidget(QLabel("Columns", objectName="sectionTitle"))
        lay.addWidget(self.columns, 1)

    def show_row(self, trace: FlowTrace | None, rid: Any, row: Any) -> None:
        """The row `rid` of `trace` (`row`: its Scored, the stored values)."""
        if trace is None or rid is None or row is None:
            self.shown = None
            self.title.setText("Select a row to see its path through the stages."
                               if rid is None or trace is None
                               else f"{rid} is in no stage of this answer")
            for w in (self.fate, self.text):
                w.setText("")
            self.path.set_path([], "")
            self.waterfall.set_steps([])
            self.columns.setRowCount(0)
            self._shown_columns = None
            return
        rid = str(rid)
        self.shown = rid
        self.title.setText(f"Row {rid}")
        kind, sentence = fate_line(trace, rid)
        self.fate.setText(nobreak(sentence))
        colour = self.tokens.returned if kind == "returned" else self.tokens.cut
        sheet = f"color: {colour}; font-weight: 600;"
        if sheet != self.fate.styleSheet():  # restyling is costly: only on change
            self.fate.setStyleSheet(sheet)
        self.waterfall.set_steps(waterfall_steps(trace, rid))
        r = row.row
        inputs = " · ".join(f"{INPUT_WORDS.get(k, k)} {_num(v)}" for k, v in row.inputs)
        self.path.set_path(row_path(trace, rid), inputs)
        facts = [f"scope {r.scope}" if r.scope is not None else "",
                 "" if r.importance_missing or r.importance != r.importance
                 else f"importance {r.importance:g}",
                 f"written {iso(r.timestamp)}" if r.timestamp else ""]
        body = r.text + ("\n\n" + " · ".join(f for f in facts if f) if any(facts) else "")
        body = nobreak(body)
        if self.text.text() != body:
            self.text.setText(body)
        self._fill_columns(r.columns)

    def _fill_columns(self, cols: dict[str, Any]) -> None:
        shown = [(k, "null" if v is None else str(v)) for k, v in cols.items()]
        if shown == self._shown_columns:
            return  # a slider tick leaves the selected row's columns as they were
        self._shown_columns = shown
        self.columns.setRowCount(len(shown))
        for r, (k, v) in enumerate(shown):
            self.columns.setItem(r, 0, QTableWidgetItem(k))
            item = QTableWidgetItem(v)
            item.setToolTip(v)
            self.columns.setItem(r, 1, item)

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        self.waterfall.tokens = tk
        self.waterfall.update()
