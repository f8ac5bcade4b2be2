"""One line of text that a slider's tick may change many times a second.

A QLabel's new text asks for a new layout: its own size may have changed, so its layout and
every layout above it are laid out again, up to the window, and the window fits its plots
and docks once more (in the pipeline view ~1.5 ms of every tick, and two more repaints of the
banner's area). This line's height is one line of its font whatever its text, and its width
is what its layout gives it, so a new text is only painted: cut with "…" where the width
ends, the whole text in its tooltip and under Copy in its menu."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QAction, QGuiApplication, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget


class OneLine(QWidget):
    """A label's one line, painted; `text()` and `setText()` as a QLabel's."""

    def __init__(self, parent: QWidget | None = None, object_name: str = "") -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self._text = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        copy = QAction("Copy", self)
        copy.triggered.connect(lambda: QGuiApplication.clipboard().setText(self._text))
        self.addAction(copy)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:  # noqa: N802 - QLabel's name
        if text == self._text:
            return
        self._text = text
        self.setToolTip(text)
        self.setAccessibleName(text)  # what a screen reader reads, as a label's text
        self.update()

    def shown(self) -> str:
        """The text as painted at the present width (cut with "…" where it does not fit)."""
        return self.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight,
                                             self.contentsRect().width())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        fm = self.fontMetrics()
        return QSize(fm.averageCharWidth() * 40, fm.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(0, self.fontMetrics().height())

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self.updateGeometry()  # one line of the new font
        super().changeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        self.style().drawItemText(p, self.contentsRect(),
                                  int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), self.shown(),
                                  QPalette.ColorRole.WindowText)
