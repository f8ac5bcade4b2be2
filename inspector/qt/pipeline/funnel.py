"""The counters as a funnel, the engine's diagnosis as a banner, and the error bar."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.diagnosis import TITLES as DIAGNOSIS_TITLES
from inspector.core.engine.ties import TieGroup
from inspector.core.engine.trace import OUTCOME_LABELS, Fix, Trace
from inspector.qt.theme import LIGHT, Tokens

SEVERITY = ("query_or_index", "scope_starvation", "min_score_cut", "scope_dominated", "ok")
LANE_NAMES = {"post": "post-filter", "pushdown": "pushdown"}


COUNTER_TIPS = (
    "How many rows each step kept, named as the real systems log them:\n"
    "rawCandidates: rows the search fetched (the pool depth).\n"
    "scopedCandidates: of those, rows inside the caller's scope.\n"
    "filteredByScope: rows the scope filter removed (raw minus scoped).\n"
    "belowMinScore: rows whose blended score is under the min score.\n"
    "returned: rows the caller gets, at most the limit.")


class FunnelChart(QWidget):
    """rawCandidates -> scopedCandidates -> above min score -> returned, one funnel per lane,
    with filteredByScope and belowMinScore written beside the step that removes them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("funnel")
        self.lanes: list[tuple[str, dict[str, int]]] = []
        self.tokens = LIGHT
        self.setMinimumSize(220, 150)
        self.setToolTip(COUNTER_TIPS)

    def set_traces(self, traces: list[tuple[str, Trace]]) -> None:
        lanes = [(name, dict(t.counters)) for name, t in traces]
        if lanes != self.lanes:  # a blend tick often leaves every counter as it was
            self.lanes = lanes
            self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        tk = self.tokens
        p.fillRect(self.rect(), QColor(tk.background))
        if not self.lanes:
            p.setPen(QColor(tk.muted))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Counters appear after a query")
            return
        w = self.width() / len(self.lanes)
        for n, (name, c) in enumerate(self.lanes):
            self._paint_lane(p, QRectF(n * w + 6, 4, w - 12, self.height() - 8), name, c,
                             len(self.lanes) > 1)
        p.end()

    def _paint_lane(self, p: QPainter, box: QRectF, name: str, c: dict[str, int],
                    titled: bool) -> None:
        tk = self.tokens
        kept = c["scopedCandidates"] - c["belowMinScore"]
        wide = box.width() >= 170  # the engine's counter names when they fit
        steps = [("rawCandidates" if wide else "raw", c["rawCandidates"], tk.out, ""),
                 ("scopedCandidates" if wide else "scoped", c["scopedCandidates"], tk.scoped,
                  f"−{c['filteredByScope']} {'filteredByScope' if wide else 'by scope'}"),
                 ("above min score" if wide else "≥ min score", kept, tk.scoped,
                  f"−{c['belowMinScore']} {'belowMinScore' if wide else 'below min'}"),
                 ("returned", c["returned"], tk.returned,
                  f"−{kept - c['returned']} past limit")]
        top = box.top()
        bold = QFont(self.font())
        bold.setBold(True)
        if titled:
            p.setFont(bold)
            p.setPen(QColor(tk.text))
            p.drawText(QRectF(box.left(), top, box.width(), 16), Qt.AlignmentFlag.AlignCenter,
                       LANE_NAMES.get(name, name))
            top += 18
        row_h = (box.bottom() - top) / len(steps)
        biggest = max(1, c["rawCandidates"])
        line = self.fontMetrics().height()
        for k, (label, value, colour, removed) in enumerate(steps):
            y = top + k * row_h
            p.setFont(bold)
            p.setPen(QColor(tk.text))
            p.drawText(QRectF(box.left(), y, box.width(), line),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       f"{label}  {value}")
            bar_h = max(6.0, min(row_h - 2 * line - 2, 16.0))
            bw = max(3.0, box.width() * value / biggest)
            if value:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(colour))
                p.drawRoundedRect(QRectF(box.left() + (box.width() - bw) / 2, y + line + 1, bw,
                                         bar_h), 3, 3)
            if removed and not removed.startswith("−0 "):
                p.setFont(self.font())
                p.setPen(QColor(tk.cut))
                p.drawText(QRectF(box.left(), y + line + bar_h + 1, box.width(), line),
                           Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter,
                           removed)


def tie_sentence(g: TieGroup) -> str:
    """A tie straddling a cut, said plainly: which rows, and who decides among them."""
    ids = ", ".join(str(x) for x in g.ids[:4]) + (", …" if len(g.ids) > 4 else "")
    who = ("the real system may return any of them" if g.arbitrary
           else f"the real system orders them by {g.order}")
    return (f"= Tie at the {g.cut} cut: {ids} share {g.measure} {g.score:.6g}; {who}, and "
            "the rows marked = in the tables are that tie.")


def _fate(t: Trace, rid: str) -> str:
    """What became of a row in a trace, in the trace's outcome vocabulary."""
    i = t.row_of(rid)
    if i is None:  # ids stored as numbers are expected as text
        i = next((k for k, x in enumerate(t.pool.ids.tolist()) if str(x) == rid), None)
    return "not_fetched" if i is None else t.outcome(i)


class DiagnosisBanner(QFrame):
    """The engine's diagnosis in words, with each fix it offers as a button."""

    fix_applied = Signal(object)  # dict of parameter changes

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.title = QLabel("", objectName="bannerTitle")
        self.message = QLabel("", objectName="bannerMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons: list[QToolButton] = []
        self._fix_row = QHBoxLayout()  # the title's line: fixes sit beside it, adding no height
        self._fix_row.setContentsMargins(0, 0, 0, 0)
        self._fix_row.addWidget(self.title)
        self._fix_row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 6, 10, 6)
        lay.setSpacing(2)
        lay.addLayout(self._fix_row)
        lay.addWidget(self.message)
        self.tokens = LIGHT
        self.codes: list[str] = []
        self.hide()

    def set_traces(self, traces: list[tuple[str, Trace]],
                   expected: tuple[str, ...] | list[str] = (),
                   runnable: Callable[[tuple[Fix, ...]], tuple[Fix, ...]] | None = None) -> None:
        """`runnable` keeps the fixes that can run from here (LiveSession.runnable): a
        receipt cannot fetch, so a fix that needs the store is said, not offered."""
        if not traces:
            self.hide()
            return
        self.codes = [t.diagnosis.code for _, t in traces]
        worst = min(self.codes, key=lambda c: SEVERITY.index(c) if c in SEVERITY else 0)
        missing = [(n, rid, fate) for n, t in traces for rid in expected
                   if (fate := _fate(t, rid)) != "returned"]
        if len(traces) == 1:
            self.title.setText(DIAGNOSIS_TITLES.get(worst, worst) if not (
                worst == "ok" and missing) else "Looks fine to the engine, but an expected "
                                               "row is not returned")
            lines = [traces[0][1].diagnosis.message]
        else:
            self.title.setText("Diagnosis, post-filter vs pushdown")
            lines = [f"{LANE_NAMES.get(n, n)} — {DIAGNOSIS_TITLES.get(t.diagnosis.code, '')}: "
                     f"{t.diagnosis.message}" for n, t in traces]
        for _, t in traces:
            lines.extend(f"⚠ {w}" for w in t.warnings)
            lines.extend(tie_sentence(g) for g in t.ties() if g.at_cut)
        lines.extend(f"★ expected {rid}: {OUTCOME_LABELS.get(fate, fate)}"
                     + (f" ({LANE_NAMES.get(n, n)})" if len(traces) > 1 else "")
                     for n, rid, fate in missing)
        worst_trace = next(t for _, t in traces if t.diagnosis.code == worst)
        fixes = worst_trace.diagnosis.fixes if len(traces) == 1 else ()
        can = runnable(fixes) if runnable is not None else fixes
        if len(can) < len(fixes):
            lines.append("Receipt mode: " + ", ".join(f.label for f in fixes if f not in can)
                         + " needs the store, which a receipt does not have.")
        self.message.setText("\n".join(lines))
        self._show_fixes(can)
        self._colour("expected_missing" if worst == "ok" and missing else worst)
        self.show()

    def _show_fixes(self, fixes: tuple[Fix, ...]) -> None:
        labels = [f.label for f in fixes]
        if labels == [b.text() for b in self.buttons]:
            return  # a slider tick that keeps the advice keeps the buttons
        for b in self.buttons:
            b.hide()
            b.setParent(None)  # out of the Tab order now, not when deleteLater runs
            b.deleteLater()
        self.buttons = []
        for fix in fixes:
            b = QToolButton(self, objectName="bannerFix", text=fix.label)
            b.setFixedHeight(self.title.fontMetrics().lineSpacing() + 6)
            b.setToolTip("Apply: " + ", ".join(f"{k} = {v}" for k, v in fix.changes))
            b.clicked.connect(lambda _=False, c=dict(fix.changes): self.fix_applied.emit(c))
            self._fix_row.addWidget(b)
            self.buttons.append(b)

    def _colour(self, code: str) -> None:
        tk = self.tokens
        bg = {"ok": tk.ok_bg, "query_or_index": tk.bad_bg}.get(code, tk.warn_bg)
        sheet = (f"QFrame#banner {{ background: {bg}; }} "
                 f"QFrame#banner QLabel {{ color: {tk.text}; }}")
        if sheet != self.styleSheet():  # restyling repaints the whole window: only on change
            self.setStyleSheet(sheet)


class ErrorBar(QFrame):
    """One clear sentence when something the user did cannot work; the window carries on."""

    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBar")
        self.label = QLabel("", objectName="errorText")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(text="✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self._dismiss)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(close)
        self.set_tokens(LIGHT)
        self.hide()

    def show_error(self, message: str) -> None:
        self.label.setText(message)
        self.show()

    def _dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()

    def set_tokens(self, tk: Tokens) -> None:
        self.setStyleSheet(f"QFrame#errorBar {{ background: {tk.error_bg}; }} "
                           f"QFrame#errorBar QLabel {{ color: {tk.text}; }}")
