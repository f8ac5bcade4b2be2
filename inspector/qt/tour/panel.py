"""The tour's bar at the top of the window (where it is, one sentence, Back and Next) and
the frame it draws round the widget the step talks about."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from inspector.qt.theme import LIGHT, Tokens
from inspector.qt.tour.steps import TOUR, Step, tour_for


class Pointer(QFrame):
    """A frame round the widget a step talks about, over the window, never taking a click;
    it follows the widget as the layout moves it."""

    def __init__(self, win: QWidget) -> None:
        super().__init__(win, objectName="tourPointer")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.target: QWidget | None = None
        self.hide()

    def point_at(self, widget: QWidget | None) -> None:
        if self.target is not None:
            self.target.removeEventFilter(self)
        self.target = widget
        if widget is not None:
            widget.installEventFilter(self)
        self.follow()

    def follow(self) -> None:
        w, win = self.target, self.parentWidget()
        if w is None or not w.isVisible() or win is None:
            self.hide()
            return
        top = win.mapFromGlobal(w.mapToGlobal(QPoint(0, 0)))
        self.setGeometry(QRect(top, w.size()).adjusted(-2, -2, 2, 2) & win.rect())
        self.show()
        self.raise_()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show,
                            QEvent.Type.Hide):
            self.follow()
        return False

    def set_tokens(self, tk: Tokens) -> None:
        self.setStyleSheet(f"QFrame#tourPointer {{ border: 2px solid {tk.accent}; "
                           "border-radius: 4px; background: transparent; }")


class TourPanel(QFrame):
    """The tour as a bar at the top of the window: where it is, one sentence, Back and Next;
    each step is applied in the real window and the widget it talks about is framed. A bar
    rather than a floating panel: on a laptop screen a panel over the window hid the very
    chart or table a step talks about."""

    def __init__(self, win: Any) -> None:
        super().__init__(win, objectName="tourPanel")
        self.win = win
        self.step = -1
        self.steps: tuple[Step, ...] = TOUR
        self.pointer = Pointer(win)
        self.where = QLabel("", objectName="sectionTitle")
        self.sentence = QLabel("", objectName="tourSentence")
        self.sentence.setWordWrap(True)
        self.back = QPushButton("Back")
        self.next = QPushButton("Next")
        done = QPushButton("End tour")
        self.back.clicked.connect(lambda: self.go(self.step - 1))
        self.next.clicked.connect(lambda: self.go(self.step + 1))
        done.clicked.connect(self.hide)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 3, 4, 3)
        lay.setSpacing(8)
        lay.addWidget(self.where)
        lay.addWidget(self.sentence, 1)
        for b in (self.back, self.next, done):
            lay.addWidget(b)
        self.set_tokens(LIGHT)
        self.hide()

    @property
    def pointed(self) -> QWidget | None:
        """The widget the step on show talks about."""
        return self.pointer.target

    def set_tokens(self, tk: Tokens) -> None:
        self.setStyleSheet(f"QFrame#tourPanel {{ background: {tk.surface}; border: 1px solid "
                           f"{tk.accent}; border-radius: 6px; }} QFrame#tourPanel QLabel "
                           f"{{ color: {tk.text}; }}")
        self.pointer.set_tokens(tk)

    def go(self, n: int) -> None:
        """Show and apply step n (0-based). Going back re-applies the story from its start,
        so every step shows the window as the sentence says."""
        steps = self._known_steps()
        n = max(0, min(n, len(steps) - 1))
        if n == self.step + 1:
            replay = [n]
        else:  # back, or a jump: the story's steps from its start
            start = max(k for k in range(n + 1)
                        if k == 0 or steps[k].story != steps[k - 1].story)
            replay = list(range(start, n + 1))
        self.setEnabled(False)  # while a story's query is awaited, no second click
        try:
            for k in replay:
                steps[k].apply(self.win)
        finally:
            self.setEnabled(True)
        steps = self._known_steps()  # the demo store's own stories, now it is open
        self.step = n
        s = steps[n]
        self.where.setText(f"{s.story} · step {n + 1} of {len(steps)}")
        self.sentence.setText(s.sentence)
        self.back.setEnabled(n > 0)
        self.next.setEnabled(n < len(steps) - 1)
        self.pointer.point_at(s.widget(self.win))

    def _known_steps(self) -> tuple[Step, ...]:
        """The steps of the demo store's stories, as known once its main table was open (an
        index story's own table does not list the stories)."""
        found = tour_for(self.win)
        if len(found) > len(self.steps):
            self.steps = found
        return self.steps

    def start(self, step: int = 0) -> None:
        """Show the bar and apply the tour up to `step` (0-based); a tour started again
        starts over."""
        self.step = -1
        self.show()
        self.go(step)

    def hideEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().hideEvent(event)
        self.pointer.point_at(None)
