"""Sliders for a pipeline's live numeric parameters, generated from the stage kinds'
declarations (answered from the cached fetches, never a new search). The user chooses which
are shown; over-fetches, thresholds, weights and half-lives by default. Their keyboard
(superqt's labelled sliders ignore keys): arrows move one declared step, Page Up/Down ten,
Home/End go to the ends, and a mouse drag lands on the step's grid."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSlider,
    QToolButton,
    QWidget,
)
from superqt import QLabeledDoubleSlider
from superqt.utils import qthrottled, signals_blocked

DEFAULT_NAMES = ("min", "threshold", "half_life_days", "weight", "vector_weight",
                 "bm25_weight", "recency_weight", "base")
PER_ROW = 4  # sliders on one row at most; fewer where the row has not the room
TICK_MS = 16  # a dragged slider asks at most once per frame (the latest value wins)


def numeric(params: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [(k, d) for k, d in params if d.type in ("float", "int")]


def default_keys(params: list[tuple[str, Any]]) -> list[str]:
    """Thresholds, weights, half-lives; and the over-fetch of a search that fetches a pool
    once for every depth (the classic presets' fetch stage: its slider is the story of the
    scoped miss)."""
    return [k for k, d in numeric(params) if d.name in DEFAULT_NAMES
            or d.name == "overfetch" and k.partition(".")[0] == "fetch"]


def slider_range(decl: Any, value: float) -> tuple[float, float]:
    """A range a hand can use: the declared one, narrowed around the value when it is vast
    (a min score declared over ±1e9 slides over [0, 1])."""
    span = max(1.0, abs(value) * 4)
    lo = decl.lo if decl.lo is not None and decl.lo >= -span else min(0.0, value)
    hi = decl.hi if decl.hi is not None and decl.hi <= max(span, 10) else max(span, value)
    if decl.lo is not None:
        lo = max(lo, decl.lo)
    if getattr(decl, "effect", "") == "depth" and decl.type == "float":
        hi = max(hi, min(10.0, decl.hi if decl.hi is not None else 10.0))  # F up to 10
    return float(lo), float(hi)


def decimals_for(lo: float, hi: float, kind: str) -> int:
    if kind == "int":
        return 0
    span = hi - lo
    return 2 if span >= 10 else 3 if span >= 1 else 4


class FlowSliders(QWidget):
    """A grid of labelled sliders, one per chosen live parameter, and the chooser. As many
    sliders share a row as its width has room for (PER_ROW at most): the grid never makes
    the window wider than a small screen."""

    value_changed = Signal(str, float)  # STAGE.PARAM, value
    # STAGE.PARAM and the value its next arrow key in the direction it last moved will set:
    # the window answers it ahead, while it idles between a held key's ticks
    next_expected = Signal(str, float)
    chosen_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("flowSliders")
        self.sliders: dict[str, QLabeledDoubleSlider] = {}
        self.params: list[tuple[str, Any]] = []
        self.chosen: list[str] = []
        self.chooser = QToolButton(self, text="Sliders…", objectName="flowSliderChooser")
        self.chooser.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.chooser.setToolTip("Choose which live parameters have a slider")
        self.chooser.setMenu(QMenu(self.chooser))
        self.chooser.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._grid = QGridLayout()
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(8)
        self._grid.setVerticalSpacing(0)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.chooser, 0, Qt.AlignmentFlag.AlignTop)
        lay.addLayout(self._grid, 1)
        self._labels: list[QLabel] = []
        self.per_row = PER_ROW
        self._throttled: dict[str, Any] = {}
        self._keys: dict[str, SliderKeys] = {}
        self._last: dict[str, float] = {}  # each slider's value last set

    def set_params(self, params: list[tuple[str, Any]], chosen: list[str] | None,
                   current: Any) -> None:
        """The live parameters of a pipeline; `current(key)` gives each one's value now."""
        self.params = numeric(params)
        keys = [k for k, _ in self.params]
        self.chosen = [k for k in (chosen if chosen is not None else default_keys(params))
                       if k in keys]
        menu = self.chooser.menu()
        menu.clear()
        for key, decl in self.params:
            act = QAction(key, menu, checkable=True, checked=key in self.chosen)
            act.setToolTip(decl.doc)
            act.toggled.connect(lambda on, k=key: self._choose(k, on, current))
            menu.addAction(act)
        menu.setToolTipsVisible(True)
        self._build(current)

    def _choose(self, key: str, on: bool, current: Any) -> None:
        if on and key not in self.chosen:
            order = [k for k, _ in self.params]
            self.chosen = sorted([*self.chosen, key], key=order.index)
        elif not on and key in self.chosen:
            self.chosen.remove(key)
        self._build(current)
        self.chosen_changed.emit(list(self.chosen))

    def _build(self, current: Any) -> None:
        for w in [*self.sliders.values(), *self._labels]:
            self._grid.removeWidget(w)
            w.hide()
            w.setParent(None)  # out of the focus chain now, not when deleteLater runs
            w.deleteLater()
        for t in self._throttled.values():
            t.cancel()
        self.sliders, self._labels, self._throttled, self._keys = {}, [], {}, {}
        self._last = {}
        decls = dict(self.params)
        for key in self.chosen:
            decl = decls[key]
            value = float(current(key) if current(key) is not None else decl.default)
            lo, hi = slider_range(decl, value)
            name = QLabel(key, self, objectName="sectionTitle")
            name.setToolTip(f"{key}: {decl.doc}\nRe-ranks from the fetched rows; no new "
                            f"search.")
            s = QLabeledDoubleSlider(Qt.Orientation.Horizontal, self)
            s.setObjectName(f"flow_slider_{key}")
            dec = decimals_for(lo, hi, decl.type)
            s.setDecimals(dec)
            s.setRange(lo, hi)
            steps = steps_for(decl, lo, hi)
            s.setSingleStep(steps.single)
            # the arrows move one declared step, Page Up ten
            self._keys[key] = SliderKeys(s, steps)
            s.setValue(value)
            self._last[key] = self._as_set(decl, s, s.value())
            s.setToolTip(name.toolTip())
            throttled = qthrottled(lambda v, k=key: self._emit(k, v), timeout=TICK_MS,
                                   leading=True)
            s.valueChanged.connect(throttled)
            self.sliders[key] = s
            self._throttled[key] = throttled
            self._labels.append(name)
        self._place(self._fitting(self.width()), force=True)

    def _cell(self) -> int:
        """The width one slider needs: its name and the slider with its value box."""
        sp = self._grid.horizontalSpacing()
        return max((lab.sizeHint().width() + s.minimumSizeHint().width() + 2 * sp
                    for lab, s in zip(self._labels, self.sliders.values(), strict=True)),
                   default=0)

    def _fitting(self, width: int) -> int:
        """How many sliders a row of this width holds (one at least)."""
        room = width - self.chooser.sizeHint().width() - self.layout().spacing()
        return max(1, min(PER_ROW, room // max(1, self._cell())))

    def _place(self, per_row: int, force: bool = False) -> None:
        if per_row == self.per_row and not force:
            return
        self.per_row = per_row
        for w in [*self._labels, *self.sliders.values()]:
            self._grid.removeWidget(w)
        for col in range(2 * PER_ROW):
            self._grid.setColumnStretch(col, 0)
        for n, (name, s) in enumerate(zip(self._labels, self.sliders.values(), strict=True)):
            row, col = divmod(n, per_row)
            self._grid.addWidget(name, row, 2 * col)
            self._grid.addWidget(s, row, 2 * col + 1)
            self._grid.setColumnStretch(2 * col + 1, 1)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """One slider a row: the width the grid needs at its narrowest."""
        hint = super().minimumSizeHint()
        if not self.sliders:
            return hint
        least = self.chooser.sizeHint().width() + self.layout().spacing() + self._cell()
        return QSize(min(hint.width(), least), hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._place(self._fitting(event.size().width()))

    def show_values(self, current: Any) -> None:
        """Each slider at the question's value (a fix applied, another question); a slider
        already there is left alone, so a moved slider never gets its value echoed back."""
        for key, s in self.sliders.items():
            v = current(key)
            if v is not None and not math.isclose(float(v), s.value(), abs_tol=1e-12):
                with signals_blocked(s):
                    if float(v) > s.maximum():  # a fix beyond the range: the range grows
                        s.setMaximum(float(v))
                    elif float(v) < s.minimum():
                        s.setMinimum(float(v))
                    s.setValue(float(v))
                self._last[key] = float(v)  # the next move's direction is from here

    def _emit(self, key: str, value: float) -> None:
        decl = dict(self.params).get(key)
        if decl is None or key not in self.sliders:
            return
        s = self.sliders[key]
        v = float(value)
        if dragging(s):  # a drag lands on the step's grid (0.05 of a weight, 0.1 of F)
            v = snap(v, steps_for(decl, s.minimum(), s.maximum()).single, s.minimum())
        v = self._as_set(decl, s, v)
        last, self._last[key] = self._last.get(key), v
        self.value_changed.emit(key, v)
        if last is not None and last != v and self.sliders.get(key) is s:  # not rebuilt
            up = Qt.Key.Key_Right if v > last else Qt.Key.Key_Left
            target = self._keys[key].target(up)
            after = None if target is None else self._as_set(decl, s, target)
            if after is not None and after != v:
                self.next_expected.emit(key, after)

    @staticmethod
    def _as_set(decl: Any, s: QLabeledDoubleSlider, value: float) -> float:
        """A slider's value as the question gets it (its decimals; a whole number for an int
        parameter)."""
        v = round(value, s.decimals())
        return float(int(v)) if decl.type == "int" else v

    def flush(self) -> None:
        """Ask for every slider's last value now (a test, or a slider released)."""
        for t in self._throttled.values():
            t.flush()

    def focus_chain(self) -> list[QWidget]:
        return [self.chooser, *self.sliders.values()]


# ---- the sliders' keyboard and grid ----


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
