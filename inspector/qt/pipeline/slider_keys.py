"""Keyboard and snapping for the live sliders (superqt's labelled sliders ignore keys):
arrows move one declared step, Page Up/Down ten, Home/End go to the ends, and a mouse drag
lands on the step's grid."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QSlider
from superqt import QLabeledDoubleSlider


@dataclass(frozen=True)
class Steps:
    single: float  # arrow keys, and the grid a drag snaps to
    page: float  # Page Up / Page Down


def steps_for(decl: object, lo: float, hi: float) -> Steps:
    """A parameter's steps: its declared step (ParamDecl.step), else 1 for a whole number,
    else a hundredth of the slider's range; a page is ten steps."""
    step = getattr(decl, "step", None) or \
        (1.0 if getattr(decl, "type", "") == "int" else (hi - lo) / 100)
    return Steps(float(step), 10 * float(step))


def snap(value: float, step: float, lo: float) -> float:
    """The nearest point of the grid lo + k * step, rounded clean of float noise."""
    k = round((value - lo) / step)
    return round(lo + k * step, 6)


def dragging(slider: QLabeledDoubleSlider) -> bool:
    """True while the user holds the handle (typed values are kept as typed)."""
    inner = slider.findChild(QSlider)
    return inner is not None and inner.isSliderDown()


class SliderKeys(QObject):
    """Event filter giving a labelled slider its keyboard; focus goes to its inner slider."""

    def __init__(self, slider: QLabeledDoubleSlider, steps: Steps) -> None:
        super().__init__(slider)
        self.slider, self.steps = slider, steps
        inner = slider.findChild(QSlider)
        if inner is not None:
            inner.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            slider.setFocusProxy(inner)
            inner.installEventFilter(self)
        slider.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt naming
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        target = self.target(event.key())
        if target is None:
            return False
        self.slider.setValue(target)
        return True

    def target(self, key: int) -> float | None:
        s, st = self.slider, self.steps
        lo, hi, v = s.minimum(), s.maximum(), s.value()
        moves = {Qt.Key.Key_Right: st.single, Qt.Key.Key_Up: st.single,
                 Qt.Key.Key_Left: -st.single, Qt.Key.Key_Down: -st.single,
                 Qt.Key.Key_PageUp: st.page, Qt.Key.Key_PageDown: -st.page}
        if key == Qt.Key.Key_Home:
            return lo
        if key == Qt.Key.Key_End:
            return hi
        if key not in moves:
            return None
        return min(hi, max(lo, snap(v + moves[Qt.Key(key)], st.single, lo)))
