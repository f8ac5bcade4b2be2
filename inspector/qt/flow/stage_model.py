"""One stage's rows as a table model: kept rows in order, then the rows it dropped with the
drop code's words; every cell is the engine's value, formatted, never recomputed."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from inspector.core.engine.flow.rows import DROP_LABELS, Drop, Scored
from inspector.core.engine.flow.runner import StageRun
from inspector.qt.theme import LIGHT, Tokens

COLUMNS = ("#", "id", "text", "score", "Δ", "what happened")
Index = QModelIndex | QPersistentModelIndex


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _drop_words(d: Drop) -> str:
    words = DROP_LABELS.get(d.code, d.code.replace("_", " "))
    detail = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                       for k, v in d.detail)
    return f"✗ {words}" + (f" ({detail})" if detail else "")


class FlowStageModel(QAbstractTableModel):
    """One stage run: its kept rows (rank, id, text, score, rank change), then its drops."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.run: StageRun | None = None
        self.kept: tuple[Scored, ...] = ()
        self.drops: tuple[Drop, ...] = ()
        self.texts: dict[str, str] = {}
        self.before: dict[str, int] = {}
        self.tied: frozenset[str] = frozenset()
        self.expected: frozenset[str] = frozenset()
        self.tokens: Tokens = LIGHT
        self._bold = QFont()
        self._bold.setBold(True)

    def set_run(self, run: StageRun | None, tied: frozenset[str], expected: frozenset[str],
                texts: dict[str, str]) -> None:
        self.beginResetModel()
        self.run, self.tied, self.expected, self.texts = run, tied, expected, texts
        self.kept = run.rows if run is not None else ()
        self.drops = run.dropped if run is not None else ()
        self.before = {} if run is None or run.role in ("fetch", "fusion") else {
            s.id: i for i, s in enumerate(run.rows_in, start=1)}
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.kept) + len(self.drops)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def row_id(self, r: int) -> str | None:
        if 0 <= r < len(self.kept):
            return self.kept[r].id
        if 0 <= r - len(self.kept) < len(self.drops):
            return self.drops[r - len(self.kept)].id
        return None

    def row_for_id(self, rid: Any) -> int:
        for r in range(self.rowCount()):
            if self.row_id(r) == rid:
                return r
        return -1

    def cell(self, r: int, col: str) -> str:
        """What a cell shows (tests read the table through this, as a person reads it)."""
        if r < len(self.kept):
            s = self.kept[r]
            run = self.run
            if col == "#":
                return f"{r + 1}{'=' if s.id in self.tied else ''}"
            if col == "id":
                return ("★ " if s.id in self.expected else "") + s.id
            if col == "text":
                return self.texts.get(s.id) or _one_line(s.row.text)
            if col == "score":
                return f"{s.score:.4f}"
            if col == "Δ":
                was = self.before.get(s.id)
                if was is None or was == r + 1:
                    return ""
                return f"↑{was - r - 1}" if was > r + 1 else f"↓{r + 1 - was}"
            if col == "what happened":
                return "deferred to the end" if run is not None and s.id in run.deferred \
                    else ""
            return ""
        d = self.drops[r - len(self.kept)]
        if col == "#":
            return "×"
        if col == "id":
            return ("★ " if d.id in self.expected else "") + d.id
        if col == "text":
            return self.texts.get(d.id, "")
        if col == "what happened":
            return _drop_words(d)
        return ""

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r, col = index.row(), COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell(r, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == "text":
                rid = self.row_id(r)
                return self.texts.get(rid or "", "")
            if col == "score" and r < len(self.kept):
                ins = ", ".join(f"{k} {v:.4f}" for k, v in self.kept[r].inputs)
                return f"score {self.kept[r].score:.6f}" + (f"\nfrom: {ins}" if ins else "")
            text = self.cell(r, col)
            return text or None
        if role == Qt.ItemDataRole.ForegroundRole:
            if r >= len(self.kept):
                return QColor(self.tokens.out)
            if self.row_id(r) in self.expected:
                return QColor(self.tokens.expected)
            return None
        if role == Qt.ItemDataRole.FontRole and self.row_id(r) in self.expected:
            return self._bold
        if role == Qt.ItemDataRole.TextAlignmentRole and col in ("#", "score", "Δ"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
