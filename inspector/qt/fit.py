"""Fitting the window to the screen it is on: a first size from the available area, saved
geometry clamped back onto it, and one rule for docks (dock when the stages keep a usable
size beside the dock, else float it over the window, inside the screen)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

PREFERRED = QSize(1600, 1000)
# below these the stage tables and plots stop being readable (tested down to 1280x720)
STAGES_MIN = QSize(1200, 430)
DOCK_EXTENT = {Qt.DockWidgetArea.BottomDockWidgetArea: 380,
               Qt.DockWidgetArea.TopDockWidgetArea: 380,
               Qt.DockWidgetArea.LeftDockWidgetArea: 420,
               Qt.DockWidgetArea.RightDockWidgetArea: 420}


def available(widget: QWidget) -> QRect:
    """The usable area (without panels and task bars) of the widget's screen."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1280, 720)


def first_size(widget: QWidget) -> QSize:
    """PREFERRED, shrunk to the available area minus room for the window frame."""
    area = available(widget)
    return QSize(min(PREFERRED.width(), area.width() - 16),
                 min(PREFERRED.height(), area.height() - 40))


def place_first(win: QMainWindow) -> None:
    """Size a window that has no saved geometry and centre it on its screen."""
    size = first_size(win)
    win.resize(size)
    area = available(win)
    win.move(area.x() + (area.width() - size.width()) // 2,
             area.y() + max(0, (area.height() - size.height() - 30) // 2))


def clamp_to_screen(win: QWidget) -> None:
    """Pull a restored (or grown) window back onto the available area."""
    area = available(win)
    w = min(win.width(), area.width() - 16)
    h = min(win.height(), area.height() - 40)
    if (w, h) != (win.width(), win.height()):
        win.resize(w, h)
    frame = win.frameGeometry()
    x = min(max(frame.x(), area.x()), area.right() - frame.width() + 1)
    y = min(max(frame.y(), area.y()), area.bottom() - frame.height() + 1)
    if (x, y) != (frame.x(), frame.y()):
        win.move(x, y)


def room_for(win: QMainWindow, area: Qt.DockWidgetArea, dock: QDockWidget | None = None) -> bool:
    """Whether a dock of its usual extent fits in this area with the stages kept usable
    (measured while the dock is hidden)."""
    central = win.centralWidget()
    need = central.minimumSizeHint().expandedTo(STAGES_MIN)
    extent = DOCK_EXTENT.get(area, 380)
    own = dock.minimumSizeHint() if dock is not None else QSize(0, 0)
    if area in (Qt.DockWidgetArea.BottomDockWidgetArea, Qt.DockWidgetArea.TopDockWidgetArea):
        return central.height() - max(extent, own.height()) >= need.height()
    return central.width() - max(extent, own.width()) >= need.width()


def prepare_docks(win: QMainWindow, areas: dict[QDockWidget, Qt.DockWidgetArea]) -> None:
    """The one dock rule, decided for every hidden dock before it shows (a docked dock that
    does not fit would grow the window past the screen the moment it appears): docked when
    the stages keep a usable size beside it, otherwise floating over the window's lower or
    right part, inside the screen."""
    for dock, area in areas.items():
        if dock.isVisible():
            continue
        fits = room_for(win, area, dock)
        if dock.isFloating() == (not fits):
            continue
        dock.setFloating(not fits)
        if not fits:
            dock.setGeometry(_floating_box(win, area, dock))


def _floating_box(win: QMainWindow, area: Qt.DockWidgetArea, dock: QDockWidget) -> QRect:
    """Over the window's lower (or right) part, never smaller than the dock's own minimum,
    never past the screen."""
    screen = available(win)
    g = win.geometry().intersected(screen)
    own = dock.minimumSizeHint()
    if area in (Qt.DockWidgetArea.BottomDockWidgetArea, Qt.DockWidgetArea.TopDockWidgetArea):
        h = min(max(460, own.height() + 30), screen.height() - 40)
        top = max(screen.top(), min(g.bottom() - h, screen.bottom() - h))
        return QRect(g.left(), top, min(g.width(), 1280), h)
    w = min(max(520, own.width()), g.width())
    return QRect(g.right() - w, g.top() + 80, w, max(300, g.height() - 120))


def size_docked(win: QMainWindow, dock: QDockWidget, area: Qt.DockWidgetArea) -> None:
    """A docked dock that just appeared gets its usual extent."""
    if dock.isFloating():
        return
    vertical = area in (Qt.DockWidgetArea.BottomDockWidgetArea,
                        Qt.DockWidgetArea.TopDockWidgetArea)
    win.resizeDocks([dock], [DOCK_EXTENT.get(area, 380)],
                    Qt.Orientation.Vertical if vertical else Qt.Orientation.Horizontal)
