"""One stage's rows as a table model: kept rows in order, then the rows it dropped with the
drop code's words; every cell is the engine's value, formatted, never recomputed."""

from __future__ import annotations

from functools import lru_cache
from operator import is_
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from inspector.core.engine.flow.rows import DROP_LABELS, Drop, Scored, dropped_ids, same_drops
from inspector.core.engine.flow.runner import StageRun
from inspector.qt.theme import LIGHT, Tokens

COLUMNS = ("#", "id", "text", "score", "Δ", "what happened")
Index = QModelIndex | QPersistentModelIndex
_R = Qt.ItemDataRole  # the roles a stage's cells answer, as the plain ints a view passes
_DISPLAY, _FOREGROUND, _FONT = int(_R.DisplayRole), int(_R.ForegroundRole), int(_R.FontRole)
_ALIGN, _TOOLTIP = int(_R.TextAlignmentRole), int(_R.ToolTipRole)
_ROLES = frozenset((_DISPLAY, _FOREGROUND, _FONT, _ALIGN, _TOOLTIP))


# A text cell shows at most this many characters: more than the widest column of a 1920 px
# screen holds at the table's font, so Qt elides it there as before. A stored text can be a whole
# document chunk (3,359 characters in memory-lancedb-pro's fixture), and Qt lays out a cell's
# whole text to elide it on every paint: each tick repainted ~1.3 ms of text no one saw.
CELL_CHARS = 500


def _one_line(text: str) -> str:
    return " ".join(text.split())


def cell_line(text: str) -> str:
    """A text as its cell shows it: on one line, and past CELL_CHARS characters cut with an
    ellipsis (the tooltip and the detail pane show the whole text)."""
    line = _one_line(text)
    return line if len(line) <= CELL_CHARS else line[:CELL_CHARS - 1] + "…"


def same_rows(a: StageRun, b: StageRun) -> bool:
    """Whether two runs of a stage show the same rows: the very same row objects kept,
    dropped and come in, in the same order (a re-rank passes unchanged stages' rows on)."""
    return a is b or (len(a.rows) == len(b.rows) and len(a.dropped) == len(b.dropped)
                      and len(a.rows_in) == len(b.rows_in) and a.deferred == b.deferred
                      and all(map(is_, a.rows, b.rows)) and same_drops(a.dropped, b.dropped)
                      and all(map(is_, a.rows_in, b.rows_in)))


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


class RowTexts:
    """Each row's text as its cell shows it (`cell_line`), made the first time a cell shows
    it and kept for the route (a tick shows the same rows again); a row only a drop names is
    looked up in the answer on screen. `full`: the whole text on one line (the tooltip)."""

    def __init__(self) -> None:
        self._made: dict[str, str] = {}
        self._trace: Any = None
        self._raw: dict[str, str] | None = None  # id -> raw text over the answer's stages

    def show(self, trace: Any) -> None:
        self._trace, self._raw = trace, None

    def get(self, rid: str, default: str = "", raw: str | None = None) -> str:
        got = self._made.get(rid)
        if got is not None:
            return got
        if raw is None:
            raw = self._raw_text(rid)
            if raw is None:
                return default
        got = self._made[rid] = cell_line(raw)
        return got

    def full(self, rid: str, default: str = "") -> str:
        raw = self._raw_text(rid)
        return default if raw is None else _one_line(raw)

    def _raw_text(self, rid: str) -> str | None:
        if self._raw is None:
            self._raw = {} if self._trace is None else {
                s.id: s.row.text for st in self._trace.stages for s in (*st.rows_in, *st.rows)}
        return self._raw.get(rid)


class FlowStageModel(QAbstractTableModel):
    """One stage run: its kept rows (rank, id, text, score, rank change), then its drops.
    A cell's text is made when a view first asks for it (the rows on screen, not the
    thousand a deep fetch holds) and kept until the next answer. A new answer of the same
    stage (a slider tick) changes the rows in place: rows added or removed at the end and
    one dataChanged for the rest, or nothing when the stage kept the very same rows; never a
    reset (which repaints and re-lays out every table of the pipeline)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.run: StageRun | None = None
        self.kept: tuple[Scored, ...] = ()
        self.drops: tuple[Drop, ...] = ()
        self.texts: Any = RowTexts()  # .get(id, default, raw): a row's text as its cell shows it
        self.tied: frozenset[str] = frozenset()
        self.expected: frozenset[str] = frozenset()
        self.marks: dict[str, str] = {}  # row id -> a judgment's mark (the tuning dock's)
        self.tokens = LIGHT
        self._bold = QFont()
        self._bold.setBold(True)
        self._cells: dict[int, tuple[Any, ...]] = {}  # row -> its cells, kept, expected
        self._count = 0  # the rows the views know of (changed between begin and end)
        self._before: dict[str, int] | None = None  # id -> rank in the rows that came in

    def set_run(self, run: StageRun | None, tied: frozenset[str], expected: frozenset[str],
                texts: Any) -> None:
        old = self.run
        same_stage = run is not None and old is not None and \
            (run.name, run.role) == (old.name, old.role)
        n_old = self._count
        kept = run.rows if run is not None else ()
        drops = run.dropped if run is not None else ()
        if same_stage and same_rows(old, run) and (tied, expected) == (self.tied, self.expected) \
                and texts is self.texts:
            self.run, self.kept, self.drops = run, kept, drops  # the cells are the same
            return
        if not same_stage:
            self.beginResetModel()
        self.run, self.tied, self.expected, self.texts = run, tied, expected, texts
        self.kept, self.drops = kept, drops
        self._cells, self._before = {}, None
        if not same_stage:
            self._count = len(kept) + len(drops)
            self.endResetModel()
            return
        self._resize(n_old, len(kept) + len(drops))

    def _resize(self, n_old: int, n_new: int) -> None:
        """The new rows in place of the old: the tail added or removed, then one dataChanged
        for the rows both have (a view repaints only what it shows of them)."""
        if n_new < n_old:
            self.beginRemoveRows(QModelIndex(), n_new, n_old - 1)
            self._count = n_new
            self.endRemoveRows()
        elif n_new > n_old:
            self.beginInsertRows(QModelIndex(), n_old, n_new - 1)
            self._count = n_new
            self.endInsertRows()
        if min(n_old, n_new):
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(min(n_old, n_new) - 1, len(COLUMNS) - 1))

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else self._count

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
        """The first table row showing the id (-1: none). A scan, stopped at the row: the
        selected row is asked of every stage on every tick, and is mostly near the top."""
        if rid is None:
            return -1
        rid = str(rid)
        for r, s in enumerate(self.kept):
            if s.id == rid:
                return r
        try:  # a cut's ids are read without its Drops made
            return len(self.kept) + dropped_ids(self.drops).index(rid)
        except ValueError:
            return -1

    def cell(self, r: int, col: str) -> str:
        """What a cell shows (tests read the table through this, as a person reads it)."""
        return self._row(r)[_COLUMN[col]]

    def _row(self, r: int) -> tuple[Any, ...]:
        got = self._cells.get(r)
        if got is None:
            n = len(self.kept)
            if not 0 <= r < n + len(self.drops):  # a row a view asks of while it leaves
                return _BLANK
            got = self._cells[r] = self._kept_cells(r, self.kept[r]) if r < n else \
                self._drop_cells(self.drops[r - n])
        return got

    def _kept_cells(self, r: int, s: Scored) -> tuple[Any, ...]:
        """A kept row's cells in COLUMNS order, then True (kept) and whether it is expected."""
        rid = s.id
        expected = rid in self.expected
        run = self.run
        if self._before is None:
            self._before = {} if run is None or run.role in ("fetch", "fusion") else {
                x.id: i for i, x in enumerate(run.rows_in, start=1)}
        was = self._before.get(rid)
        moved = "" if was is None or was == r + 1 else \
            f"↑{was - r - 1}" if was > r + 1 else f"↓{r + 1 - was}"
        return (f"{r + 1}=" if rid in self.tied else str(r + 1),
                "★ " + rid if expected else rid,
                self.texts.get(rid, "", s.row.text), f"{s.score:.4f}", moved,
                "deferred to the end" if run is not None and rid in run.deferred else "",
                True, expected)

    def _drop_cells(self, d: Drop) -> tuple[Any, ...]:
        """A dropped row's cells: its id, text and the drop code's words."""
        expected = d.id in self.expected
        return ("×", ("★ " if expected else "") + d.id, self.texts.get(d.id, ""), "", "",
                _drop_words(d), False, expected)

    @property
    def tokens(self) -> Tokens:
        return self._tokens

    @tokens.setter
    def tokens(self, tokens: Tokens) -> None:
        """The theme's colours, made into QColors once (a view asks for a row's colour on
        every paint of every cell)."""
        self._tokens = tokens
        self._out, self._expected_color = QColor(tokens.out), QColor(tokens.expected)

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        # a view's paint asks seven roles of every cell it shows, each a call into Python:
        # the roles a stage never sets answer first, before the index is read
        if role not in _ROLES or not index.isValid():
            return None
        if role == _DISPLAY:
            r, c = index.row(), index.column()
            row = self._row(r)
            if c == _TEXT and self.marks:
                mark = self.marks.get(str(self.row_id(r)))
                return f"{mark} {row[c]}" if mark else row[c]
            return row[c]
        if role == _FOREGROUND:
            row = self._row(index.row())
            if not row[_KEPT]:
                return self._out
            return self._expected_color if row[_EXPECTED] else None
        if role == _FONT:
            return self._bold if self._row(index.row())[_EXPECTED] else None
        if role == _ALIGN:
            return _RIGHT if index.column() in _RIGHT_COLUMNS else None
        if role == _TOOLTIP:
            return self._tooltip(index.row(), COLUMNS[index.column()])
        return None

    def _tooltip(self, r: int, col: str) -> str | None:
        if col == "text":
            return self.texts.full(self.row_id(r) or "", "")
        if col == "score" and r < len(self.kept):
            ins = ", ".join(f"{k} {v:.4f}" for k, v in self.kept[r].inputs)
            return f"score {self.kept[r].score:.6f}" + (f"\nfrom: {ins}" if ins else "")
        return self.cell(r, col) or None


_COLUMN = {c: n for n, c in enumerate(COLUMNS)}
_BLANK = ("",) * len(COLUMNS) + (False, False)
_TEXT = _COLUMN["text"]
_KEPT, _EXPECTED = len(COLUMNS), len(COLUMNS) + 1
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_RIGHT_COLUMNS = frozenset(_COLUMN[c] for c in ("#", "score", "Δ"))
