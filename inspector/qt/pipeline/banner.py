"""The engine's diagnosis as a banner with its fixes as buttons, each stage's count as
counters, and the error bar. Every word and number here is the answer's: the banner shows the
diagnosis the core returns (flow/insight/diagnosis.py) and only the fixes it ran."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.flow.answer import Answer
from inspector.core.engine.flow.insight.diagnosis import TITLES, Diagnosis, Fix, diagnose, main_line
from inspector.core.engine.flow.insight.expect import Fall, where_dropped
from inspector.core.engine.flow.rows import DROP_LABELS, Tie
from inspector.core.engine.flow.runner import FlowTrace
from inspector.qt.pipeline.one_line import OneLine
from inspector.qt.theme import LIGHT, Tokens

BAD = ("query_or_index", "empty_table", "scope_denies_all")
COUNTER_FACTS = ("rawCandidates", "scopedCandidates", "filteredByScope", "belowMinScore")


def what_if_words(t: FlowTrace) -> str:
    parts = [f"{k} keeps at least {v} rows" for k, v in t.widen]
    if t.exact:
        parts.append("the index bypassed (exact search)")
    return ", ".join(parts)


def tie_sentence(x: Tie) -> str:
    """A tie straddling a cut, said plainly: which rows, and who decides among them."""
    ids = ", ".join(x.ids[:4]) + (", …" if len(x.ids) > 4 else "")
    return (f"= Tie at the {x.stage} cut: {ids} share {x.measure} {x.value:.6g} with "
            f"{x.beyond} more past it; the real system may return any of them (rows marked = "
            f"in the tables).")


def _shown(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def fix_text(f: Fix) -> str:
    """A fix's button: the engine's label (what it changes and what it returns)."""
    return f.label


class WrapLayout(QLayout):
    """Buttons left to right, wrapping onto the next line where the width ends: a banner
    with four long fixes never makes the window wider than a laptop screen."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gap = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, i: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items[i] if 0 <= i < len(self._items) else None

    def takeAt(self, i: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items.pop(i) if 0 <= i < len(self._items) else None

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt's name
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt's name
        size = QSize(0, 0)
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return QSize(min(size.width(), 240), size.height())

    def _place(self, rect: QRect, move: bool) -> int:
        x, y, line = rect.x(), rect.y(), 0
        for item in self._items:
            if item.widget() is not None and item.widget().isHidden():
                continue
            hint = item.sizeHint()
            w = min(hint.width(), rect.width())
            if x > rect.x() and x + w > rect.right() + 1:
                x, y, line = rect.x(), y + line + self._gap, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), QSize(w, hint.height())))
            x += w + self._gap
            line = max(line, hint.height())
        return y + line - rect.y()


class DiagnosisBanner(QFrame):
    """The diagnosis in words, with each fix the engine ran as a button; a what-if on
    screen is said, with the way back to the system's own behaviour."""

    fix_applied = Signal(object)  # flow.runs.Change
    what_if_cleared = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.title = QLabel("", objectName="bannerTitle")
        self.message = QLabel("", objectName="bannerMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # what the question sets on the pipeline changes with every tick of a slider: a line
        # of its own, painted anew without laying the window out again
        self.settings = OneLine(self, "bannerSettings")
        self.settings.hide()
        self.buttons: list[QToolButton] = []
        self.fixes: tuple[Fix, ...] = ()
        self.back = QToolButton(self, objectName="bannerBack",
                                text="Back to the system's own behaviour")
        self.back.setToolTip("Drop the what-ifs (--widen, --exact): the answer the real "
                             "system gives")
        self.back.clicked.connect(self.what_if_cleared)
        self.back.hide()
        self._fix_row = WrapLayout()
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.title, 1)
        head.addWidget(self.back)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 4, 10, 4)
        lay.setSpacing(1)
        lay.addLayout(head)
        lay.addWidget(self.message)
        lay.addWidget(self.settings)
        lay.addLayout(self._fix_row)
        self.tokens = LIGHT
        self.code: str | None = None
        self.hide()

    def show_answer(self, trace: FlowTrace | None, answer: Answer | None,
                    expected: list[str], finding: bool,
                    changed: dict[str, Any] | None = None) -> None:
        """The run's diagnosis (the full one with its fixes when `answer` is the run's),
        `finding`: the fixes are being searched for."""
        if trace is None:
            self.hide()
            return
        d: Diagnosis = answer.diagnosis if answer is not None else diagnose(trace)
        self.code = d.code
        # where each expected row fell: the engine's explanation once the run's answer has it
        # (a row outside the scope is said so even where the run never fetched it), until
        # then what the trace alone shows
        told = {e["id"]: e for e in answer.expected} if answer is not None else {}
        missing = [(rid, Fall(told[rid]["dropped_at"], told[rid]["reason"], {})
                    if rid in told else where_dropped(trace, rid)) for rid in expected
                   if rid not in trace.final.ids]
        title = TITLES.get(d.code, d.code)
        if d.code == "ok" and missing:
            title = "Looks fine to the engine, but an expected row is not returned"
        if trace.what_if:
            title = f"What-if: {title}"
        self.title.setText(title)
        lines = [d.message]
        if changed:  # what the question sets on the pipeline (a fix applied, a slider)
            self.settings.setText("Set on the pipeline: " + ", ".join(
                f"{k} = {_shown(v)}" for k, v in sorted(changed.items())))
        self.settings.setVisible(bool(changed))
        if trace.what_if:
            lines.append(f"What-if, not the system's behaviour: {what_if_words(trace)}.")
        lines += [f"⚠ {w}" for w in trace.warnings]
        lines += [f"not exact: {w}" for w in trace.inexact]
        lines += [tie_sentence(x) for x in trace.ties if x.at_cut]
        for rid, fall in missing:
            where = f" at {fall.stage}" if fall.stage else ""
            words = DROP_LABELS.get(fall.code, fall.code.replace("_", " "))
            lines.append(f"★ expected {rid}: {words}{where}")
        if answer is None and finding and d.code != "ok":
            lines.append("Finding fixes (each one is run before it is offered)…")
        elif answer is not None and d.code not in ("ok",) and not d.fixes \
                and d.code not in BAD:
            lines.append("No change the engine tried returns more rows.")
        self.message.setText("\n".join(lines))
        self.back.setVisible(trace.what_if)
        self._show_fixes(d.fixes if answer is not None else ())
        self._colour("expected_missing" if d.code == "ok" and missing else d.code)
        self.show()

    def _show_fixes(self, fixes: tuple[Fix, ...]) -> None:
        if fixes == self.fixes:
            return  # a tick that keeps the advice keeps the buttons
        self.fixes = fixes
        for b in self.buttons:
            b.hide()
            b.setParent(None)  # out of the Tab order now, not when deleteLater runs
            b.deleteLater()
        self.buttons = []
        for fix in fixes:
            what_if = fix.kind == "what_if"
            b = QToolButton(self, objectName="bannerWhatIf" if what_if else "bannerFix",
                            text=fix_text(fix))
            b.setProperty("what_if", what_if)
            b.setToolTip(("A what-if: a change to the pipeline, not a setting of the real "
                          "system.\n" if what_if else "The system's own setting.\n")
                         + "Apply: inspector query … " + " ".join(fix.change.argv()))
            b.clicked.connect(lambda _=False, c=fix.change: self.fix_applied.emit(c))
            self._fix_row.addWidget(b)
            self.buttons.append(b)

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        if self.code is not None:
            self._colour(self.code)

    def _colour(self, code: str) -> None:
        tk = self.tokens
        bg = tk.ok_bg if code == "ok" else tk.bad_bg if code in BAD else tk.warn_bg
        sheet = (f"QFrame#banner {{ background: {bg}; }} "
                 f"QFrame#banner QLabel, QFrame#banner #bannerSettings {{ color: {tk.text}; }} "
                 f"QToolButton#bannerWhatIf {{ border: 1px dashed {tk.muted}; "
                 f"font-style: italic; }}")
        if sheet != self.styleSheet():  # restyling repaints the whole window: only on change
            self.setStyleSheet(sheet)


COUNTER_TIPS = ("How many rows each stage kept, in pipeline order (the engine's counts); "
                "beside a stage, the rows it removed. The scope stage's facts are named as "
                "the real systems log them: rawCandidates (rows the search fetched), "
                "scopedCandidates (of those, in scope), filteredByScope.")


def counters(t: FlowTrace) -> list[tuple[str, int, int, str]]:
    """(stage, rows kept, rows removed, facts) per stage of the main line, as the engine
    counted them."""
    out = []
    for st in main_line(t):
        removed = len(st.rows_in) - len(st.rows) if st.role != "fetch" else len(st.dropped)
        facts = " · ".join(f"{k} {st.facts[k]}" for k in COUNTER_FACTS if k in st.facts)
        out.append((st.name, len(st.rows), max(removed, 0), facts))
    return out


class CountersChart(QWidget):
    """Each stage's count as a bar, widest first; what a stage removed beside it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("funnel")
        self.rows: list[tuple[str, int, int, str]] = []
        self.limit = 0
        self.tokens = LIGHT
        self.setMinimumSize(220, 150)
        self.setToolTip(COUNTER_TIPS)

    def set_trace(self, t: FlowTrace | None) -> None:
        rows = counters(t) if t is not None else []
        if (rows, t.limit if t else 0) != (self.rows, self.limit):
            self.rows, self.limit = rows, (t.limit if t else 0)
            self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        tk = self.tokens
        p.fillRect(self.rect(), QColor(tk.background))
        if not self.rows:
            p.setPen(QColor(tk.muted))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Counters appear after a query")
            return
        line = self.fontMetrics().height()
        rows = self.rows
        room = self.height() - 8
        compact = len(rows) * (line + 10) > room  # many stages: one line each, no bars
        if compact:
            fits = max(1, int(room // (line + 2)))
            if len(rows) > fits:  # the stages that removed rows, and the final list
                keep = [r for r in rows[:-1] if r[2]][: fits - 2] + [rows[-1]]
                rows = [*keep[:-1], ("…", -1, len(self.rows) - len(keep), ""), keep[-1]]
        per = (line + 2.0) if compact else max(line + 10.0, room / len(rows))
        biggest = max(1, max(n for _, n, _, _ in self.rows))
        bold = QFont(self.font())
        bold.setBold(True)
        for k, (name, n, removed, facts) in enumerate(rows):
            y = 4 + k * per
            last = k == len(rows) - 1
            p.setFont(bold)
            p.setPen(QColor(tk.text if n >= 0 else tk.muted))
            label = f"{name}  {n}" if n >= 0 else f"… {removed} more stages"
            p.drawText(QRectF(6, y, self.width() - 12, line),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, label)
            if removed and n >= 0:
                p.setFont(self.font())
                p.setPen(QColor(tk.cut))
                p.drawText(QRectF(6, y, self.width() - 12, line),
                           Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                           f"−{removed}")
            if compact or n < 0:
                continue
            bar_h = max(4.0, min(per - line - 4 - (line if facts else 0), 12.0))
            bw = max(3.0, (self.width() - 12) * n / biggest)
            if n:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(tk.returned if last else tk.scoped))
                p.drawRoundedRect(QRectF(6, y + line + 1, bw, bar_h), 3, 3)
            if facts and per >= line * 2 + bar_h + 2:
                p.setFont(self.font())
                p.setPen(QColor(tk.muted))
                fm = self.fontMetrics()
                if fm.horizontalAdvance(facts) > self.width() - 12:  # short names, then "…"
                    facts = facts.replace("Candidates", "").replace("filteredByScope",
                                                                    "filtered")
                    facts = fm.elidedText(facts, Qt.TextElideMode.ElideRight,
                                          self.width() - 12)
                p.drawText(QRectF(6, y + line + bar_h + 2, self.width() - 12, line),
                           Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, facts)
        p.end()


class ErrorBar(QFrame):
    """One clear sentence when something the user did cannot work, with what to do instead
    as buttons where there is a route; the window carries on."""

    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBar")
        self.label = QLabel("", objectName="errorText")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.routes: list[QToolButton] = []
        close = QToolButton(text="✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self._dismiss)
        self._lay = QHBoxLayout(self)
        self._lay.setContentsMargins(10, 4, 4, 4)
        self._lay.addWidget(self.label, 1)
        self._lay.addWidget(close)
        self.set_tokens(LIGHT)
        self.hide()

    def show_error(self, message: str, routes: tuple[tuple[str, Any], ...] = ()) -> None:
        self.label.setText(message)
        for b in self.routes:
            b.setParent(None)
            b.deleteLater()
        self.routes = []
        for text, slot in routes:
            b = QToolButton(self, text=text, objectName="errorRoute")
            b.clicked.connect(slot)
            self._lay.insertWidget(self._lay.count() - 1, b)
            self.routes.append(b)
        self.show()

    def _dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()

    def set_tokens(self, tk: Tokens) -> None:
        self.setStyleSheet(f"QFrame#errorBar {{ background: {tk.error_bg}; }} "
                           f"QFrame#errorBar QLabel {{ color: {tk.text}; }}")
