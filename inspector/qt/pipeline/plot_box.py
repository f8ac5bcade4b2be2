"""The plots' boxes, without pyqtgraph: each plot's title, colour key and empty sentence, the
title-and-key box a plot sits in, the stand-in it holds until the window builds the plot
(after the first results are on screen: MainWindow.ensure_plots), and the stage the plots
show. The plots themselves are plots.py and rank_chart.py."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QMargins, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.qt.theme import LIGHT, Tokens

if TYPE_CHECKING:
    from inspector.core.engine.flow.runner import FlowTrace, StageRun

MIN_PLOT = (220, 120)  # below this tick labels crowd; Y_NAME fits its height (formulas: tips)
GROUPS = {"returned": "returned", "kept": "kept here, not returned",
          "dropped": "dropped here"}


@dataclass(frozen=True)
class PlotKind:
    """What a box says of its plot before and after the plot is built: its title, its colour
    key for the theme's tokens, and the sentence its empty plot shows."""

    title: str
    key: Callable[[Tokens], list[tuple[str, ...]]]
    empty: str


def _scatter_key(tk: Tokens) -> list[tuple[str, ...]]:
    return [(tk.returned, GROUPS["returned"]), (tk.scoped, GROUPS["kept"]),
            (tk.cut, GROUPS["dropped"]), (tk.expected, "expected", "★"),
            (tk.muted, "unchanged (y = x)", "┈┈"), (tk.cut, "threshold", "╌╌")]


def _bump_key(tk: Tokens) -> list[tuple[str, ...]]:
    return [(tk.returned, "returned"), (tk.out, "not returned"), (tk.accent, "selected", "━"),
            (tk.cut, "limit", "╌╌")]


SCATTER = PlotKind("Score before and after", _scatter_key,
                   "Run a query to see each stage's scores")
BUMP = PlotKind("Rank before and after", _bump_key,
                "Run a query to see ranks before and after a stage")


def key_html(tk: Tokens, title: str, items: list[tuple[str, ...]], more: int = 0) -> str:
    """A title and a colour key of (colour, text[, glyph]) items (lines break between items;
    `more`: items left out, "+N more") for a wrapping label: a legend would cover points."""
    def one(item: tuple[str, ...]) -> str:
        glyph = item[2] if len(item) > 2 else "●"
        label = html.escape(item[1]).replace(" ", "&nbsp;")
        return f"<span style='color:{item[0]}'>{glyph}</span>&nbsp;{label}"

    bullets = " &nbsp;".join([one(i) for i in items] + [f"+{more}&nbsp;more"] * (more > 0))
    return (f"<b>{html.escape(title)}</b><br><span style='color:{tk.muted}; "
            f"font-size:8pt'>{bullets}</span>")


class PlotStandIn(QWidget):
    """Where a plot goes until it is built: the plot's background and its empty sentence,
    painted, asking a layout what a pyqtgraph plot asks (its least size, MIN_PLOT; expanding
    both ways, no height for width; a size hint of its own size, as a QGraphicsView's is), so
    nothing moves when the plot takes its place."""

    def __init__(self, kind: PlotKind, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="plotStandIn")
        self.text, self.tokens = kind.empty, LIGHT
        self.setMinimumSize(*MIN_PLOT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        # a QGraphicsView's: its scene's rect (pyqtgraph keeps it the view's own size, 640x480
        # before any), bounded by three quarters of the screen
        size = self.size() if self.testAttribute(Qt.WidgetAttribute.WA_Resized) \
            else QSize(640, 480)
        screen = QGuiApplication.primaryScreen()
        return size.boundedTo(screen.virtualSize() * 3 / 4) if screen is not None else size

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(68, 68)  # a pyqtgraph plot's; its minimum size (MIN_PLOT) rules anyway

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        self.update()

    def set_text(self, text: str) -> None:
        self.text = text
        self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(self.tokens.background))
        painter.setPen(QColor(self.tokens.muted))
        painter.drawText(self.rect().adjusted(8, 4, -8, -4),
                         Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.text)
        painter.end()


class PlotBox(QWidget):
    """A plot under its title-and-key line, which keeps its height (title plus two lines of
    key): where the key needs more at this width its last items give way to "+N more" and
    the whole key is the tooltip, so the plot never jumps and the window never grows. Until
    the window builds the plot (`set_plot`) the box holds its stand-in."""

    became_visible = Signal()  # a hidden plot skips updates and catches up when shown

    def __init__(self, kind: PlotKind, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind, self.tokens = kind, LIGHT
        self.plot: Any = None  # the plot once built
        self.stand_in = PlotStandIn(kind, self)
        self.header = QLabel("", objectName="plotKey", wordWrap=True,
                             alignment=Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.header.setFixedHeight(3 * self.header.fontMetrics().lineSpacing() + 4)
        lay = QVBoxLayout(self, spacing=0, contentsMargins=QMargins(0, 0, 0, 0))
        lay.addWidget(self.header)
        lay.addWidget(self.stand_in, 1)

    def set_plot(self, plot: Any) -> None:
        """The plot takes its stand-in's place (once), in the box's theme."""
        self.plot = plot
        plot.set_tokens(self.tokens)
        self.layout().replaceWidget(self.stand_in, plot)
        self.stand_in.hide()
        self.stand_in.deleteLater()
        plot.show()
        self.layout().activate()  # the plot has its place now, for a grab at once

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.became_visible.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_key()

    def set_tokens(self, tk: Tokens) -> None:
        self.tokens = tk
        (self.plot or self.stand_in).set_tokens(tk)
        self._fit_key()

    def _fit_key(self) -> None:
        items, lab = self.kind.key(self.tokens), self.header
        for n in range(len(items), 0, -1):
            lab.setText(key_html(self.tokens, self.kind.title, items[:n], len(items) - n))
            if self.width() <= 0 or lab.heightForWidth(self.width()) <= lab.height():
                break
        lab.setToolTip("" if n == len(items) else " · ".join(i[1] for i in items))


def plotted_stage(t: FlowTrace, driven: str | None,
                  expected: list[str] | tuple[str, ...] = ()) -> StageRun:
    """The stage the plots show: the one the last moved slider drives, else the stage that
    matters (where an expected row fell, else the one that removed the most rows), else the
    first stage that re-scores rows, else the first fetch."""
    from inspector.core.engine.flow.summary import stage_that_matters

    names = [s.name for s in t.stages]
    if driven in names:
        return t.stage(driven)
    k = stage_that_matters(t, expected)
    if k is not None and t.stages[k].role != "query":
        return t.stages[k]
    for test in (lambda s: s.role == "transform" and bool(s.rows_in),
                 lambda s: s.role not in ("query", "fetch") and len(s.rows) < len(s.rows_in),
                 lambda s: s.role == "fetch"):
        found = next((s for s in t.stages if test(s)), None)
        if found is not None:
            return found
    return t.stages[-1]
