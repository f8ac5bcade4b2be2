"""One pipeline stage as a table model. The model reads the trace's numpy arrays directly for the
visible cells only, so a slider tick costs one model reset, not a thousand dicts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPixmap

from inspector.core.engine.live import MAX_OVERFETCH
from inspector.core.engine.params import depths
from inspector.core.engine.trace import OUTCOMES, Trace
from inspector.qt.pipeline.stage_words import (
    BASE_NAME,
    COLUMNS,
    FATE_TEXT,
    HEADER_TIPS,
    verdict,
)
from inspector.qt.theme import LIGHT, outcome_colour

Index = QModelIndex | QPersistentModelIndex


_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_SORTED_OUTCOMES = np.array(sorted(OUTCOMES))  # a row's outcome as a number: its place here
_OUT_OF_SCOPE = sorted(OUTCOMES).index("out_of_scope")
_TIE_CODES = {"": 0, "=": 1, "!": 2}
_DOTS: dict[str, QPixmap] = {}


def _dot(colour: str) -> QPixmap:
    """A small filled circle, made once per colour."""
    if colour not in _DOTS:
        pm = QPixmap(10, 10)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(colour))
        p.drawEllipse(1, 1, 8, 8)
        p.end()
        _DOTS[colour] = pm
    return _DOTS[colour]


_COLOURS: dict[str, QColor] = {}


def _colour(name: str) -> QColor:
    """A QColor per colour name, made once: data() runs for every visible cell each paint."""
    if name not in _COLOURS:
        _COLOURS[name] = QColor(name)
    return _COLOURS[name]


def _num(x: float, digits: int = 4) -> str:
    return "–" if not np.isfinite(x) else f"{x:.{digits}f}"


class StageModel(QAbstractTableModel):
    """Rows of one stage, in the stage's order; every cell is read from the trace on demand."""

    def __init__(self, stage: str, parent: Any = None) -> None:
        super().__init__(parent)
        self.stage = stage
        self.columns = COLUMNS[stage]
        self._numbers = [c for c in self.columns if c in ("base", "imp", "×imp", "score", "Δ")]
        self._texts: dict[int, str] = {}  # pool row -> its text on one line, per pool
        self.trace: Trace | None = None
        self.rows = np.zeros(0, np.int64)
        self.expected: frozenset[Any] = frozenset()
        self.marks: dict[str, str] = {}  # id -> judgment mark (set by judgments_panel)
        self.tokens = LIGHT
        self._fates: list[str] = []
        self._key: Any = None
        self.capacity = 0  # table rows: the stage's rows, then rows past them
        self._cells = np.zeros((0, 0))
        self._ties: dict[int, str] = {}
        self._italic = QFont()
        self._italic.setItalic(True)

    def set_trace(self, trace: Trace | None, expected: frozenset[Any]) -> None:
        """Show a new trace. While only the sliders move over the same pool the table keeps
        its row count (`capacity`: the most rows this stage can hold at any over-fetch) and
        rows past the stage's current rows show as such, so a tick never inserts or removes
        rows (which repaints the whole view) and only rows whose cells changed repaint.
        Anything else (a new pool, mode, limit, cap or expected set) resets the model."""
        rows = trace.stage(self.stage).rows if trace is not None else np.zeros(0, np.int64)
        fates = trace.outcomes()[rows].tolist() if trace is not None else []
        self._ties = {} if trace is None else {
            i: ("!" if g.at_cut else "=") for i, g in trace.tie_marks(self.stage).items()}
        key = self._layout_key(trace, expected)
        same = key is not None and key == self._key and len(rows) <= self.capacity
        if not same:
            self._texts = {}
            self.beginResetModel()
            self.trace, self.expected, self.rows, self._fates = trace, expected, rows, fates
            self._key = key
            self.capacity = self._capacity(trace, len(rows))
            self._cells = self._content(trace, rows, fates)
            self.endResetModel()
            return
        old = self._cells
        self.trace, self.expected, self.rows, self._fates = trace, expected, rows, fates
        self._cells = self._content(trace, rows, fates)
        self._emit_changed(old, self._cells)

    def _layout_key(self, trace: Trace | None, expected: frozenset[Any]) -> Any:
        if trace is None:
            return None
        p = trace.params
        return (id(trace.pool), p.mode, p.limit, p.cap, expected)  # self.trace keeps the pool

    def _capacity(self, trace: Trace | None, n: int) -> int:
        """The most rows this stage shows at any over-fetch for this pool and parameters."""
        if trace is None:
            return n
        p = trace.params
        if self.stage == "final":
            return max(n, p.limit)
        # the depth alone: the index knobs checked against it (ef >= depth) are not asked
        deepest = depths(p.with_(overfetch=MAX_OVERFETCH, ef=None, refine_factor=None)).pool
        return max(n, min(trace.pool.size, deepest))

    def _emit_changed(self, old: np.ndarray, new: np.ndarray) -> None:
        """Repaint only what changed: whole rows whose row changed, the "#" cell alone where
        only the outcome or tie mark did (its dot and mark; the rest of the row reads the
        outcome only in the blended stage and for out-of-scope rows), else just the number
        cells that did (a blend tick leaves most rows' text alone). One dataChanged per run
        of rows; Qt repaints only the part of a range that is on screen."""
        same = (old == new) | (np.isnan(old) & np.isnan(new))
        moved = ~same[0] | (old[0] < 0) & ~same[1]  # a new row, or the end note's depth
        marked = ~same[1] & ~moved
        if self.stage != "blended":
            out = _OUT_OF_SCOPE
            marked_only = marked & (old[1] % 10 != out) & (new[1] % 10 != out)
        else:
            marked_only = np.zeros_like(marked)
        whole = moved | (marked & ~marked_only)
        last = len(self.columns) - 1
        self._emit_runs(whole, 0, last)
        rank = self.columns.index("#")
        self._emit_runs(marked_only, rank, rank)
        for k, name in enumerate(self._numbers):
            col = self.columns.index(name)
            self._emit_runs(~same[2 + k] & ~whole, col, col)

    def _emit_runs(self, mask: np.ndarray, first: int, last: int) -> None:
        changed = np.flatnonzero(mask)
        if not len(changed):
            return
        breaks = np.flatnonzero(np.diff(changed) > 1)
        starts = np.concatenate([[changed[0]], changed[breaks + 1]])
        ends = np.concatenate([changed[breaks], [changed[-1]]])
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            self.dataChanged.emit(self.index(a, first), self.index(b, last))

    def _content(self, trace: Trace | None, rows: np.ndarray, fates: list[str]) -> np.ndarray:
        """Everything a cell shows that can change between ticks, one column per table row
        (rows past the stage's rows hold -1, and the first of them its note's numbers)."""
        arrays = {} if trace is None else {
            "base": trace.base, "imp": trace.importance_used, "×imp": trace.multiplier,
            "score": trace.score, "Δ": trace.rank_before - trace.rank_after}
        wanted = self._numbers
        out = np.full((2 + len(wanted), self.capacity), -1.0)
        n = len(rows)
        if n:
            out[0, :n] = rows
            out[1, :n] = np.searchsorted(_SORTED_OUTCOMES, trace.outcomes()[rows])
            if self._ties:  # a tie mark changes the row too
                tied = np.fromiter(self._ties, np.int64, len(self._ties))
                add = np.array([10 * _TIE_CODES[m] for m in self._ties.values()], float)
                order = np.argsort(tied)
                tied, add = tied[order], add[order]
                at = np.minimum(np.searchsorted(tied, rows), len(tied) - 1)
                out[1, :n] += np.where(tied[at] == rows, add[at], 0.0)
            for k, c in enumerate(wanted):
                out[2 + k, :n] = arrays[c][rows]
        if n < self.capacity:
            out[0, n] = -2.0  # the note row
            out[1, n] = self._depth() if self.stage != "final" else -2.0
        return out

    def _depth(self) -> int:
        return self.trace.depths.pool if self.trace is not None else 0

    def live_count(self) -> int:
        """The stage's rows; table rows past them are the "past the depth" rows."""
        return len(self.rows)

    def row_id(self, r: int) -> Any:
        """The id shown in table row r (None past the stage's rows)."""
        if self.trace is None or not 0 <= r < len(self.rows):
            return None
        return self.trace.pool.ids[int(self.rows[r])]

    def row_for_id(self, row_id: Any) -> int:
        """Table row showing this id, or -1."""
        if self.trace is None or row_id is None or not len(self.rows):
            return -1
        hits = np.flatnonzero(self.trace.pool.ids[self.rows] == row_id)
        return int(hits[0]) if len(hits) else -1

    # ---- Qt model API ----------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.capacity

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        name = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            if name == "base" and self.trace is not None:
                return BASE_NAME[self.trace.params.mode]
            return name
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS.get(name)
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        handler = _ROLE_HANDLERS.get(role)  # most roles a view asks for are not ours: cheap no
        if handler is None or self.trace is None or not index.isValid():
            return None
        r = index.row()
        if r >= len(self.rows):
            return self._past(r, role, self.columns[index.column()])
        return handler(self, r, int(self.rows[r]), self.columns[index.column()])

    def past_note(self) -> str:
        """What the first row past the stage's rows says."""
        n = len(self.rows)
        if self.stage == "final" and self.trace is not None:
            return f"— end: {n} of limit {self.trace.params.limit} —"
        return f"— end: {n} of depth {self._depth()} —"

    def _past(self, r: int, role: int, name: str) -> Any:
        """Rows past the stage's rows: blank and unstriped, the first one saying where the
        stage ends, so a shorter stage never looks like rows are missing."""
        if role == Qt.ItemDataRole.BackgroundRole:
            return QColor(self.tokens.background)
        # the note is in the first column: the view spans that cell over the whole row
        first = r == len(self.rows) and name == self.columns[0]
        if not first:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.past_note()
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(self.tokens.muted)
        if role == Qt.ItemDataRole.FontRole:
            return self._italic
        if role == Qt.ItemDataRole.ToolTipRole:
            n = len(self.rows)
            where = (f"{n} rows of the limit {self.trace.params.limit}" if self.stage == "final"
                     else f"{n} rows of the {self._depth()} the raw search fetched (its depth)")
            return (f"The stage ends here: {where}. The table keeps its length while the "
                    "over-fetch slider moves, so rows below this line are empty.")
        return None

    # ---- cell contents ----
    def fate(self, r: int, i: int) -> str:
        return self._fates[r]

    def _display(self, r: int, i: int, name: str) -> Any:
        t = self.trace
        if name == "#":  # = a tie with other rows; ! a tie across a cut (see the banner)
            return f"{r + 1}{self._ties.get(i, '')}"
        if name == "id":
            mark = "★ " if str(t.pool.ids[i]) in self.expected else ""
            return mark + str(t.pool.ids[i])
        if name == "text":
            col = t.pool.roles.get("text")
            mark = "★ " if str(t.pool.ids[i]) in self.expected else ""
            mark += self.marks.get(str(t.pool.ids[i]), "")
            text = self._texts.get(i)
            if text is None:
                text = self._texts[i] = (" ".join(str(t.pool.columns[col][i]).split()) if col
                                         else str(t.pool.ids[i]))
            return mark + text
        if name == "base":
            return _num(t.base[i])
        if name == "imp":
            return _num(t.importance_used[i], 2)
        if name == "×imp":
            return _num(t.multiplier[i], 3)
        if name == "score":
            return _num(t.score[i])
        if name == "scope":
            return self._scope_cell(i)
        if name == "Δ":
            delta = int(t.rank_before[i]) - int(t.rank_after[i])
            return f"▲{delta}" if delta > 0 else f"▼{-delta}" if delta < 0 else "·"
        return None

    def _scope_cell(self, i: int) -> str:
        return self.scope_text(i)

    def disagrees(self, i: int) -> bool:
        """Whether the pushed-down predicate and the post-filter disagree on pool row i."""
        p = self.trace.pool
        return bool(p.pushdown_sql) and bool(p.pushdown_match[i]) != bool(p.in_scope[i])

    def scope_text(self, i: int) -> str:
        """The scope cell of pool row i (the view sizes its column from these)."""
        p = self.trace.pool
        mark = "⚠ " if self.disagrees(i) else ""
        return mark + verdict(bool(p.in_scope[i]),
                              p.scope_value[i] if i < len(p.scope_value) else "")

    def _tooltip(self, r: int, i: int, name: str) -> Any:
        t, p = self.trace, self.trace.pool
        if name == "scope":
            tip = f"Scope rule: {p.scope_rule[i]}"
            if p.pushdown_sql and bool(p.pushdown_match[i]) != bool(p.in_scope[i]):
                tip += ("\nThe pushed-down predicate (exact, case-sensitive) disagrees: "
                        f"{p.pushdown_sql} is {'true' if p.pushdown_match[i] else 'false'}.")
            return tip
        if name in ("text", "id"):
            return f"id {t.pool.ids[i]}\n{self._display(r, i, 'text')}"
        if name == "#":
            tie = {"=": "\nTied: other rows share this score; the system's tie rule orders "
                        "them.", "!": "\nTied across a cut: which of the tied rows are kept is "
                        "decided by the tie order, not the score (see the banner)."}
            return FATE_TEXT[self.fate(r, i)].format(rank=int(t.final_rank[i]),
                                                      limit=t.params.limit,
                                                      min=t.params.min_score) \
                + tie.get(self._ties.get(i, ""), "")
        if name == "Δ":
            return (f"Rank before blending {int(t.rank_before[i])}, after "
                    f"{int(t.rank_after[i])}.")
        return None

    def _foreground(self, r: int, i: int, name: str) -> Any:
        tk = self.tokens
        fate = self.fate(r, i)
        if name == "scope" and fate == "out_of_scope":
            return _colour(tk.cut)
        if name == "Δ":
            d = int(self.trace.rank_before[i]) - int(self.trace.rank_after[i])
            return _colour(tk.returned if d > 0 else tk.cut if d < 0 else tk.muted)
        if fate == "out_of_scope" or (self.stage == "blended"
                                      and fate in ("below_min_score", "past_limit")):
            return _colour(tk.muted)
        return None

    def _background(self, r: int, i: int, name: str) -> Any:
        if self.expected and str(self.trace.pool.ids[i]) in self.expected:
            c = QColor(self.tokens.expected)
            c.setAlpha(60)
            return c
        return None

    def _decoration(self, r: int, i: int, name: str) -> Any:
        if name != "#":
            return None
        tk = self.tokens
        return _dot(outcome_colour(tk, self.fate(r, i)))

    def _font(self, r: int, i: int, name: str) -> Any:
        fate = self.fate(r, i)
        if fate == "out_of_scope" or (self.stage == "blended" and fate == "below_min_score"):
            return self._italic
        return None

    def _align(self, r: int, i: int, name: str) -> Any:
        return _LEFT if name in ("text", "id", "scope") else _RIGHT


_ROLE_HANDLERS: dict[int, Callable[..., Any]] = {
    Qt.ItemDataRole.DisplayRole: StageModel._display,
    Qt.ItemDataRole.ToolTipRole: StageModel._tooltip,
    Qt.ItemDataRole.ForegroundRole: StageModel._foreground,
    Qt.ItemDataRole.BackgroundRole: StageModel._background,
    Qt.ItemDataRole.DecorationRole: StageModel._decoration,
    Qt.ItemDataRole.FontRole: StageModel._font,
    Qt.ItemDataRole.TextAlignmentRole: StageModel._align,
}
