"""Cut text, as a user sees it under a real window manager: the window larger than the screen
(its bottom rows off screen), word-wrapped labels shorter than their lines (a key's third row
hidden under its plot), one-line labels narrower than their text, and plot texts (axis titles,
tick labels, text items) painted partly outside their plot; and `plot_texts`, every text a plot
shows, which the overlap checks use too. Each check returns sentences."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QRectF
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtWidgets import QGraphicsLayout, QGraphicsTextItem, QLabel, QWidget
from superqt import QElidingLabel

from inspector.qt.harness.painted import cut_painted_problems


def _glyphs(item: QGraphicsTextItem) -> QRectF:
    """A text item's lines in scene coordinates, without the document's empty margin."""
    m = item.document().documentMargin()
    return item.mapRectToScene(item.boundingRect().adjusted(m, m, -m, -m))


def _settle(scene: Any, painter: QPainter) -> None:
    """Lay the plot out as its next paints will: an axis sizes itself to its tick labels when
    it draws them (and asks its layout for the room), so a range just changed is measured on
    the axis' new width and the label's new place, not on the last paint's (one frame)."""
    for axis in (i for i in scene.items() if isinstance(i, pg.AxisItem) and i.isVisible()):
        if axis.style["showValues"]:
            axis.generateDrawSpecs(painter)
    for item in scene.items():
        layout = getattr(item, "layout", None)
        if isinstance(layout, QGraphicsLayout) and not layout.isActivated():
            layout.activate()  # only a layout a size change left pending
    for vb in (i for i in scene.items() if isinstance(i, pg.ViewBox)):
        vb.updateMatrix()  # the view's transform as the next paint will have it


def plot_texts(widget: pg.PlotWidget) -> list[tuple[str, QRectF]]:
    """Every text a plot shows, as (text, scene rectangle): text items (clipped to their
    view, as painted), axis tick labels and axis titles."""
    scene = widget.scene()
    img = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(img)
    out: list[tuple[str, QRectF]] = []
    try:
        _settle(scene, painter)
        for item in scene.items():
            if not item.isVisible():
                continue
            if isinstance(item, pg.TextItem) and item.textItem.toPlainText().strip():
                item.updateTransform()
                rect = _glyphs(item.textItem)
                vb = item.getViewBox()
                if isinstance(vb, pg.ViewBox):
                    rect = rect & vb.sceneBoundingRect()
                if not rect.isEmpty():
                    out.append((item.textItem.toPlainText(), rect))
            elif isinstance(item, pg.AxisItem):
                specs = item.generateDrawSpecs(painter) if item.style["showValues"] else None
                out += [(text, item.mapRectToScene(r)) for r, _f, text in
                        (specs[2] if specs else [])]
                if item.label.isVisible() and item.label.toPlainText().strip():
                    out.append((item.label.toPlainText(), _glyphs(item.label)))
    finally:
        painter.end()
    return out


def screen_problems(win: QWidget) -> list[str]:
    """The window, frame included, inside the screen's available area (a real screen only:
    the offscreen platform's screen is a placeholder)."""
    if QGuiApplication.platformName() == "offscreen":
        return []
    screen = win.screen().availableGeometry()
    g = win.frameGeometry()
    if screen.adjusted(-1, -1, 1, 1).contains(g):
        return []
    return [f"the window is {g.width()}x{g.height()} with its frame, the screen has "
            f"{screen.width()}x{screen.height()}: its edge is off screen"]


def _name(w: QWidget) -> str:
    text = w.text() if isinstance(w, QLabel) else ""
    plain = " ".join(text.replace("<br>", " ").split())
    while "<" in plain and ">" in plain[plain.index("<"):]:  # tags out, for a readable name
        a = plain.index("<")
        plain = plain[:a] + plain[plain.index(">", a) + 1:]
    where = w.parentWidget()
    while where is not None and not where.objectName():
        where = where.parentWidget()
    own = w.objectName() or repr(plain[:40])
    return f"{own} in {where.objectName()}" if where is not None else own


def cut_label_problems(win: QWidget) -> list[str]:
    """Visible labels of the window whose text needs more room than they have: wrapped ones
    more height, one-line ones more width (labels that elide say so with "…", and pass)."""
    out = []
    for lab in win.findChildren(QLabel):
        if (not lab.isVisible() or not lab.text().strip() or lab.window() is not win
                or isinstance(lab, QElidingLabel)):  # it paints "…" where it is cut
            continue
        if lab.wordWrap():
            need = lab.heightForWidth(lab.width())
            if need > lab.height() + 1:
                out.append(f"label {_name(lab)} needs {need} px of height, has {lab.height()}: "
                           "its last lines are hidden")
        else:
            need = lab.minimumSizeHint().width()
            if need > lab.width() + 1:
                out.append(f"label {_name(lab)} needs {need} px, has {lab.width()}: cut")
    return out[:8]


def _visible_scene(widget: pg.PlotWidget) -> QRectF:
    return widget.mapToScene(widget.viewport().rect()).boundingRect()


def cut_plot_text_problems(win: QWidget) -> list[str]:
    """Texts of a visible plot painted partly outside the plot's own area."""
    out = []
    plots = [win] if isinstance(win, pg.PlotWidget) else []
    for w in plots + win.findChildren(pg.PlotWidget):
        if not w.isVisible() or w.width() <= 0 or w.height() <= 0:
            continue
        box = _visible_scene(w).adjusted(-1, -1, 1, 1)
        for text, rect in plot_texts(w):
            if not box.contains(rect):
                out.append(f"{w.objectName() or 'a plot'}: {text!r} is cut at the plot's edge")
    return out[:8]


def cut_problems(win: Any) -> list[str]:
    """All of the above, on the layout the next paint will have (pending layout requests
    are applied first: a label whose text just changed has its old width until then)."""
    if hasattr(win, "ensure_plots"):
        win.ensure_plots()  # the plots checked, even before their turn after the results
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    return (screen_problems(win) + cut_label_problems(win) + cut_plot_text_problems(win)
            + cut_painted_problems(win))
