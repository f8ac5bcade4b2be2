"""The selected row of a pipeline run: its path through the stages (rank and score at each, or
the drop that ended it), read from the trace, above its text and stored values."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from inspector.core.engine.flow.answer import iso
from inspector.core.engine.flow.rows import DROP_LABELS
from inspector.core.engine.flow.runner import FlowTrace


def row_path(trace: FlowTrace, rid: str) -> list[tuple[str, str]]:
    """(stage, what happened to the row there) for every stage that saw it."""
    out: list[tuple[str, str]] = []
    for st in trace.stages:
        if st.role == "query":
            continue
        rank = next((i for i, s in enumerate(st.rows, start=1) if s.id == rid), None)
        if rank is not None:
            s = st.rows[rank - 1]
            out.append((st.name, f"#{rank} · {s.score:.4f}"))
            continue
        drop = next((d for d in st.dropped if d.id == rid), None)
        if drop is not None:
            out.append((st.name, "✗ " + DROP_LABELS.get(drop.code, drop.code)))
            if st.role != "fetch":
                break
    return out


class FlowDetail(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("flowDetail")
        self.title = QLabel("", self, objectName="sectionTitle")
        self.title.setWordWrap(True)
        # the row's text and stored values, set when another row is shown, apart from its path
        # (which changes with every answer): a long text is laid out once, not on every slider
        # tick (relaying out a 3,360-character text with the path was ~10 ms of such a tick)
        self.text = self._label()
        self.body = self._label()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 0, 4, 0)
        lay.addWidget(self.title)
        lay.addWidget(self.body)  # the path first: what a slider does to the row, in sight
        lay.addWidget(self.text, 1)
        self.shown: str | None = None

    def _label(self) -> QLabel:
        label = QLabel("", self)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    @staticmethod
    def _set(label: QLabel, text: str) -> None:
        if label.text() != text:
            label.setText(text)

    def show_row(self, trace: FlowTrace | None, rid: Any, scored: Any) -> None:
        """The row `rid` of `trace`; nothing when no stage of this trace holds it."""
        if trace is None or rid is None or scored is None:
            self.shown = None
            self._set(self.title, "Select a row to see its path through the stages.")
            self._set(self.text, "")
            self._set(self.body, "")
            return
        self.shown = str(rid)
        row = scored.row
        self._set(self.title, f"Row {rid}")
        self._set(self.text, f"<p>{escape(row.text)}</p><p>scope <b>{escape(str(row.scope))}"
                             f"</b> · importance {row.importance:g} · written "
                             f"{iso(row.timestamp) if row.timestamp else '–'}</p>")
        lines = ["<table cellspacing=0 cellpadding=1>"]
        for stage, what in row_path(trace, str(rid)):
            lines.append(f"<tr><td>{escape(stage)}&nbsp;&nbsp;</td><td>{escape(what)}</td></tr>")
        lines.append("</table>")
        self._set(self.body, "".join(lines))
