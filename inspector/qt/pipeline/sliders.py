"""The live sliders: over-fetch, blend weight and min score. Each tick re-ranks from the
cached pool; none of them starts a LanceDB query."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget
from superqt import QLabeledDoubleSlider

from inspector.core.engine.live import MAX_OVERFETCH
from inspector.core.engine.params import Params, depths
from inspector.qt.pipeline.slider_keys import (
    HYBRID_MIN_SCORE_STEPS,
    STEPS,
    SliderKeys,
    dragging,
    snap,
)

# (key, label, lowest, highest, step, decimals, tooltip)
SPECS = (
    ("overfetch", "Over-fetch", 1.0, MAX_OVERFETCH, 0.1, 1,
     "Over-fetch factor F: the raw pool is ceil(limit × F) candidates (never above the cap).\n"
     "A deeper pool gives in-scope rows and re-ranking more room. Re-ranks instantly from the "
     "cached pool."),
    ("blend", "Blend weight", 0.0, 1.0, 0.01, 2,
     "Importance blend weight w: score = base × ((1 − w) + w × importance).\n"
     "0 ignores importance (today's memory plugin); 0.5 is the proposal; 0.3 is the other "
     "plugin."),
    ("min_score", "Min score", 0.0, 1.0, 0.01, 2,
     "Results whose blended score is below this are dropped before the limit is applied."),
)
HYBRID_MIN_SCORE = (0.0, 0.04, 0.0005, 4)  # fused RRF scores are small: at most 2/(k+1)


class SliderPanel(QWidget):
    """Three labelled sliders plus a line saying what depth the over-fetch gives."""

    value_changed = Signal(str, float)  # parameter key, value

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sliders: dict[str, QLabeledDoubleSlider] = {}
        self.keys: dict[str, SliderKeys] = {}
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(0)
        for col, (key, label, lo, hi, step, dec, tip) in enumerate(SPECS):
            name = QLabel(label, objectName="sectionTitle")
            name.setToolTip(tip)
            s = QLabeledDoubleSlider(Qt.Orientation.Horizontal, self)
            s.setObjectName(f"slider_{key}")
            s.setRange(lo, hi)
            s.setSingleStep(step)
            s.setDecimals(dec)
            s.setToolTip(tip)
            s.valueChanged.connect(lambda v, k=key: self._moved(k, v))
            self.sliders[key] = s
            self.keys[key] = SliderKeys(s, STEPS[key])
            grid.addWidget(name, 0, 2 * col)
            grid.addWidget(s, 0, 2 * col + 1)
            grid.setColumnStretch(2 * col + 1, 1)
        self.depth = QLabel("", objectName="stageNote")
        self.depth.setToolTip("Raw pool depth the over-fetch gives, and the cap it is held to.")
        grid.addWidget(self.depth, 1, 1)
        self._mode = ""
        self._pending: dict[str, float] = {}
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._flush)

    def decimals(self, key: str) -> int:
        return self.sliders[key].decimals()

    def _moved(self, key: str, value: float) -> None:
        """Coalesce: a drag delivers moves faster than a 1,000-row repaint (~35 ms, see
        tests/qt/measure_tick.py), so only the latest value per turn of the event loop counts."""
        s = self.sliders[key]
        if dragging(s):  # a drag lands on round values: 2.5, not 2.7; 0.5, not 0.51
            snapped = snap(float(value), self.keys[key].steps.single, s.minimum())
            if snapped != value:
                s.blockSignals(True)
                s.setValue(snapped)
                s.blockSignals(False)
                value = snapped
        self._pending[key] = round(float(value), self.decimals(key))
        if not self._timer.isActive():
            self._timer.start()

    def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        for key, value in pending.items():
            self.value_changed.emit(key, value)

    def flush(self) -> None:
        """Apply a pending move now (tests and scripts that need the result at once)."""
        self._timer.stop()
        self._flush()

    def show_params(self, p: Params) -> None:
        """Reflect parameters without echoing them back as user moves."""
        if p.mode != self._mode:
            self._mode = p.mode
            lo, hi, step, dec = HYBRID_MIN_SCORE if p.mode == "hybrid" else (0.0, 1.0, 0.01, 2)
            s = self.sliders["min_score"]
            s.blockSignals(True)
            s.setDecimals(dec)
            s.setRange(lo, hi)
            s.setSingleStep(step)
            s.blockSignals(False)
            self.keys["min_score"].steps = (HYBRID_MIN_SCORE_STEPS if p.mode == "hybrid"
                                            else STEPS["min_score"])
        for key in ("overfetch", "blend", "min_score"):
            s = self.sliders[key]
            s.blockSignals(True)
            s.setValue(float(getattr(p, key)))
            s.blockSignals(False)
        d = depths(p)
        cap = f", held at the cap of {p.cap}" if p.cap and d.pool == p.cap else \
            (f" (cap {p.cap})" if p.cap else " (no cap)")
        self.depth.setText(f"raw pool depth {d.pool}{cap}")
