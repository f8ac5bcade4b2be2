"""One stage's rows as a table model: kept rows in order, then the rows it dropped with the
drop code's words; every cell is the engine's value, formatted, never recomputed."""

from __future__ import annotations

from functools import lru_cache
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
    try:  # a re-rank passes the same drops on (kept scope verdicts): words made once
        return _cached_words(d)
    except TypeError:  # a detail value that cannot be hashed
        return _words(d)


@lru_cache(maxsize=16384)
def _cached_words(d: Drop) -> str:
    return _words(d)


def _words(d: Drop) -> str:
    words = DROP_LABELS.get(d.code, d.code.replace("_", " "))
    detail = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                       for k, v in d.detail)
    return f"✗ {words}" + (f" ({detail})" if detail else "")


class FlowStageModel(QAbstractTableModel):
    """One stage run: its kept rows (rank, id, text, score, rank change), then its drops.
    Every cell's text is made once per answer (set_run); data() looks it up. A new answer of
    the same stage (a slider tick) changes the rows in place: rows added or removed at the
    end, dataChanged for the rows that show something else, never a reset (which repaints
    and re-lays out every table of the pipeline)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.run: StageRun | None = None
        self.kept: tuple[Scored, ...] = ()
        self.drops: tuple[Drop, ...] = ()
        self.texts: dict[str, str] = {}
        self.before: dict[str, int] = {}
        self.tied: frozenset[str] = frozenset()
        self.expected: frozenset[str] = frozenset()
        self.marks: dict[str, str] = {}  # row id -> a judgment's mark (the tuning dock's)
        self.tokens: Tokens = LIGHT
        self._bold = QFont()
        self._bold.setBold(True)
        self._cells: list[tuple[Any, ...]] = []  # per row: its cells, then kept, expected
        self._rows: dict[str, int] = {}  # id -> first table row showing it

    def set_run(self, run: StageRun | None, tied: frozenset[str], expected: frozenset[str],
                texts: dict[str, str]) -> None:
        same_stage = run is not None and self.run is not None and \
            (run.name, run.role) == (self.run.name, self.run.role)
        old = self._cells
        if not same_stage:
            self.beginResetModel()
        self.run, self.tied, self.expected, self.texts = run, tied, expected, texts
        self.kept = run.rows if run is not None else ()
        self.drops = run.dropped if run is not None else ()
        self.before = {} if run is None or run.role in ("fetch", "fusion") else {
            s.id: i for i, s in enumerate(run.rows_in, start=1)}
        cells = [*map(self._kept_cells, range(len(self.kept)), self.kept),
                 *map(self._drop_cells, self.drops)]
        rows: dict[str, int] = {}
        for r, rid in enumerate([*(s.id for s in self.kept), *(d.id for d in self.drops)]):
            rows.setdefault(str(rid), r)
        if not same_stage:
            self._cells, self._rows = cells, rows
            self.endResetModel()
            return
        self._resize(old, cells, rows)

    def _resize(self, old: list[tuple[Any, ...]], cells: list[tuple[Any, ...]],
                rows: dict[str, int]) -> None:
        """The new rows in place of the old: the tail added or removed, then dataChanged
        for each run of rows both have that shows something else."""
        n_old, n_new = len(old), len(cells)
        if n_new < n_old:
            self.beginRemoveRows(QModelIndex(), n_new, n_old - 1)
        elif n_new > n_old:
            self.beginInsertRows(QModelIndex(), n_old, n_new - 1)
        self._cells, self._rows = cells, rows
        if n_new < n_old:
            self.endRemoveRows()
        elif n_new > n_old:
            self.endInsertRows()
        last, start = len(COLUMNS) - 1, None
        for r in range(min(n_old, n_new) + 1):
            differs = r < min(n_old, n_new) and old[r] != cells[r]
            if differs and start is None:
                start = r
            elif not differs and start is not None:
                self.dataChanged.emit(self.index(start, 0), self.index(r - 1, last))
                start = None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._cells)

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
        return self._rows.get(str(rid), -1) if rid is not None else -1

    def cell(self, r: int, col: str) -> str:
        """What a cell shows (tests read the table through this, as a person reads it)."""
        return self._cells[r][_COLUMN[col]]

    def _kept_cells(self, r: int, s: Scored) -> tuple[Any, ...]:
        """A kept row's cells in COLUMNS order, then True (kept) and whether it is expected."""
        rid = s.id
        expected = rid in self.expected
        was = self.before.get(rid)
        moved = "" if was is None or was == r + 1 else \
            f"↑{was - r - 1}" if was > r + 1 else f"↓{r + 1 - was}"
        run = self.run
        return (f"{r + 1}=" if rid in self.tied else str(r + 1),
                "★ " + rid if expected else rid,
                self.texts.get(rid) or _one_line(s.row.text), f"{s.score:.4f}", moved,
                "deferred to the end" if run is not None and rid in run.deferred else "",
                True, expected)

    def _drop_cells(self, d: Drop) -> tuple[Any, ...]:
        """A dropped row's cells: its id, text and the drop code's words."""
        expected = d.id in self.expected
        return ("×", ("★ " if expected else "") + d.id, self.texts.get(d.id, ""), "", "",
                _drop_words(d), False, expected)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        row = self._cells[r]
        if role == Qt.ItemDataRole.DisplayRole:
            if c == _TEXT and self.marks:
                mark = self.marks.get(str(self.row_id(r)))
                return f"{mark} {row[c]}" if mark else row[c]
            return row[c]
        if role == Qt.ItemDataRole.ForegroundRole:
            if not row[_KEPT]:
                return QColor(self.tokens.out)
            return QColor(self.tokens.expected) if row[_EXPECTED] else None
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if row[_EXPECTED] else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if c in _RIGHT_COLUMNS else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(r, COLUMNS[c])
        return None

    def _tooltip(self, r: int, col: str) -> str | None:
        if col == "text":
            return self.texts.get(self.row_id(r) or "", "")
        if col == "score" and r < len(self.kept):
            ins = ", ".join(f"{k} {v:.4f}" for k, v in self.kept[r].inputs)
            return f"score {self.kept[r].score:.6f}" + (f"\nfrom: {ins}" if ins else "")
        return self.cell(r, col) or None


_COLUMN = {c: n for n, c in enumerate(COLUMNS)}
_TEXT = _COLUMN["text"]
_KEPT, _EXPECTED = len(COLUMNS), len(COLUMNS) + 1
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_RIGHT_COLUMNS = frozenset(_COLUMN[c] for c in ("#", "score", "Δ"))
