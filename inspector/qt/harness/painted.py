"""Texts as they are painted: a widget rendered onto a recording paint device, which keeps every
run of text (its glyphs' rectangle on the widget) and the clip in force when it was drawn.
A text is cut when its glyphs reach past that clip (a plot's view box, the rectangle a custom
paint gave `drawText`) or past the widget's visible rectangle: "limit" centred on a plot's
edge reads "mit", a verdict drawn into a narrow rectangle reads "retur". Catches texts in
pyqtgraph plots (text items, line labels, axes) and in widgets that paint their own."""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRectF
from PySide6.QtGui import (
    QFontMetricsF,
    QPaintDevice,
    QPaintEngine,
    QPaintEngineState,
    QPainterPath,
    QTextItem,
    QTransform,
)
from PySide6.QtWidgets import QGraphicsItem, QWidget

_FLAG = QPaintEngine.DirtyFlag
_CLIP = _FLAG.DirtyClipRegion | _FLAG.DirtyClipPath | _FLAG.DirtyClipEnabled
_METRIC = QPaintDevice.PaintDeviceMetric
TOLERANCE = 0.75  # px: antialiasing and rounding, not a glyph


@dataclass(frozen=True)
class PaintedText:
    text: str
    glyphs: QRectF  # where its ink is, in the rendered widget's coordinates
    clip: QPainterPath | None  # the painter's clip when it was drawn (None: unclipped)

    def cut_by(self, visible: QRectF) -> bool:
        """Its glyphs reach past the clip in force or past the visible rectangle."""
        inner = self.glyphs.adjusted(TOLERANCE, TOLERANCE, -TOLERANCE, -TOLERANCE)
        if inner.isEmpty():
            return False
        return not visible.contains(inner) or (self.clip is not None
                                               and not self.clip.contains(inner))


class _Recorder(QPaintEngine):
    """A paint engine that paints nothing and notes each text run with its clip."""

    def __init__(self) -> None:
        super().__init__(QPaintEngine.PaintEngineFeature.AllFeatures)
        self.texts: list[PaintedText] = []
        self.clip: QPainterPath | None = None
        self.transform = QTransform()

    def begin(self, _device: QPaintDevice) -> bool:
        return True

    def end(self) -> bool:
        return True

    def type(self) -> QPaintEngine.Type:
        return QPaintEngine.Type.User

    def updateState(self, state: QPaintEngineState) -> None:  # noqa: N802 - Qt's name
        flags = state.state()
        if flags & _FLAG.DirtyTransform:
            self.transform = state.transform()
        if not flags & _CLIP:
            return
        if not state.isClipEnabled():
            self.clip = None
            return
        op = state.clipOperation()
        if op == op.NoClip:
            self.clip = None
            return
        path = QPainterPath()
        if flags & _FLAG.DirtyClipPath:
            path = state.clipPath()
        elif flags & _FLAG.DirtyClipRegion:
            path.addRegion(state.clipRegion())
        else:
            return  # clipping switched back on: the last clip stands
        path = self.transform.map(path)  # a clip is given in the coordinates of its time
        self.clip = path if op == op.ReplaceClip or self.clip is None else \
            self.clip.intersected(path)

    def drawTextItem(self, p: QPointF, item: QTextItem) -> None:  # noqa: N802 - Qt's name
        text = item.text()
        if not text.strip():
            return
        fm = QFontMetricsF(item.font())
        lead = fm.horizontalAdvance(text[:len(text) - len(text.lstrip())])
        ink = fm.tightBoundingRect(text.strip()).translated(p.x() + lead, p.y())
        self.texts.append(PaintedText(text.strip(), self.transform.mapRect(ink), self.clip))

    def _nothing(self, *_args: object) -> None:
        """Shapes, lines and images: nothing to note."""

    drawPixmap = drawRects = drawPolygon = drawPath = drawLines = _nothing  # noqa: N815
    drawEllipse = drawPoints = drawImage = drawTiledPixmap = _nothing  # noqa: N815


class _Device(QPaintDevice):
    """A paint device the size of a widget, painted through a `_Recorder`."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.engine, self.size, self.dpi = _Recorder(), widget.size(), widget.logicalDpiX()

    def paintEngine(self) -> QPaintEngine:  # noqa: N802 - Qt's name
        return self.engine

    def metric(self, m: QPaintDevice.PaintDeviceMetric) -> int:
        if m == _METRIC.PdmDevicePixelRatioScaled:
            return int(QPaintDevice.devicePixelRatioFScale())
        return {_METRIC.PdmWidth: self.size.width(), _METRIC.PdmHeight: self.size.height(),
                _METRIC.PdmWidthMM: self.size.width() * 254 // (10 * self.dpi),
                _METRIC.PdmHeightMM: self.size.height() * 254 // (10 * self.dpi),
                _METRIC.PdmDpiX: self.dpi, _METRIC.PdmDpiY: self.dpi,
                _METRIC.PdmPhysicalDpiX: self.dpi, _METRIC.PdmPhysicalDpiY: self.dpi,
                _METRIC.PdmDepth: 32, _METRIC.PdmNumColors: 1 << 24,
                _METRIC.PdmDevicePixelRatio: 1}.get(m, 0)


def painted_texts(widget: QWidget) -> list[PaintedText]:
    """Every text `widget` paints (a plot: with its view's children; a custom widget: itself
    alone), in its own coordinates. Cached plot items are painted afresh for this."""
    device = _Device(widget)
    plot = isinstance(widget, pg.GraphicsView)
    items = widget.scene().items() if plot else []
    modes = [i.cacheMode() for i in items]
    for i in items:  # a cached item would paint a pixmap of its text, not the text
        i.setCacheMode(QGraphicsItem.CacheMode.NoCache)
    try:
        flags = QWidget.RenderFlag.DrawChildren if plot else QWidget.RenderFlag(0)
        QWidget.render(widget, device, QPoint(0, 0), renderFlags=flags)
    finally:
        for i, mode in zip(items, modes, strict=True):
            i.setCacheMode(mode)
    return device.engine.texts


LIBRARIES = ("PySide6", "shiboken6", "pyqtgraph", "superqt")


def custom_painted(win: QWidget) -> list[QWidget]:
    """The visible plots of `win` (itself included) and its widgets that paint themselves
    (their class, or one it derives from, defines paintEvent outside the libraries)."""
    out = []
    for w in [win, *win.findChildren(QWidget)]:
        if not w.isVisible() or w.width() <= 0 or w.height() <= 0:
            continue
        own = any("paintEvent" in vars(k) and not k.__module__.startswith(LIBRARIES)
                  for k in type(w).__mro__)
        if own or isinstance(w, pg.PlotWidget):
            out.append(w)
    return out


def _visible(widget: QWidget) -> QRectF:
    """The rectangle the widget shows: a plot's viewport, else the widget."""
    if isinstance(widget, pg.GraphicsView):
        vp = widget.viewport()
        return QRectF(vp.geometry())
    return QRectF(widget.rect())


def cut_painted_problems(win: QWidget) -> list[str]:
    """Texts a plot or a self-painting widget paints past its clip or its visible edge."""
    out = []
    for w in custom_painted(win):
        visible = _visible(w).adjusted(-TOLERANCE, -TOLERANCE, TOLERANCE, TOLERANCE)
        for t in painted_texts(w):
            if t.cut_by(visible):
                out.append(f"{w.objectName() or type(w).__name__}: the painted text "
                           f"{t.text!r} is cut")
    return out[:8]
