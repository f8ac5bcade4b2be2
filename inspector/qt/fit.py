"""Fitting the window to the screen it is on: a first size from the available area, saved
geometry clamped back onto it, and one rule for docks (dock when the stages keep a usable
size beside the dock, the plots yielding their room if need be; else float it over the
window, inside the screen)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QSplitter, QWidget

PREFERRED = QSize(1600, 1000)
# below these the stage tables and plots stop being readable (tested down to 1280x720)
STAGES_MIN = QSize(1200, 430)
DOCK_USABLE = 180  # a bottom dock docked in less (its tabs, controls and a heatmap) is useless
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


def _vertical(area: Qt.DockWidgetArea) -> bool:
    return area in (Qt.DockWidgetArea.BottomDockWidgetArea, Qt.DockWidgetArea.TopDockWidgetArea)


def _min_h(w: QWidget) -> int:
    return w.minimumSizeHint().expandedTo(w.minimumSize()).height()


def _compact_height(win: QMainWindow) -> int:
    """The central widget's minimum height with the widgets that yield to a dock (the plots,
    under the stages in a vertical splitter that sits in the horizontal main splitter)
    gone: measured from the splitters' children, without hiding anything."""
    need = win.centralWidget().minimumSizeHint().height()
    for w in (w for w in win.yielding if w.isVisible()):
        inner = w.parentWidget()
        if not isinstance(inner, QSplitter) or inner.orientation() != Qt.Orientation.Vertical:
            continue
        kids = [k for k in map(inner.widget, range(inner.count())) if k.isVisible() and k is not w]
        without = sum(map(_min_h, kids)) + inner.handleWidth() * max(0, len(kids) - 1)
        outer, before = inner.parentWidget(), _min_h(inner)
        if isinstance(outer, QSplitter) and outer.orientation() == Qt.Orientation.Horizontal:
            others = [_min_h(k) for k in map(outer.widget, range(outer.count()))
                      if k.isVisible() and k is not inner]
            before, without = _min_h(outer), max([without, *others])
        need -= max(0, before - without)
    return need


def room_for(win: QMainWindow, area: Qt.DockWidgetArea,
             dock: QDockWidget | None = None) -> tuple[int, bool]:
    """The extent a dock gets docked in this area (measured while it is hidden): its usual
    one where the stages and plots keep a usable size beside it; for a bottom or top dock,
    else what is left once the plots yield (the stages keep theirs); 0: it does not fit.
    And whether the plots must yield."""
    central = win.centralWidget()
    need = central.minimumSizeHint().expandedTo(STAGES_MIN)
    extent = DOCK_EXTENT.get(area, 380)
    own = dock.minimumSizeHint() if dock is not None else QSize(0, 0)
    if not _vertical(area):
        return (extent if central.width() - max(extent, own.width()) >= need.width() else 0,
                False)
    # the central widget's height once the dock's last showing has left (a dock just hidden
    # leaves its room to the central widget at the next layout, not yet)
    have = win.height() - win.menuBar().height() - win.statusBar().height() - sum(
        d.height() + 6 for d in getattr(win, "dock_areas", {}) if d is not dock
        and d.isVisible() and not d.isFloating() and _vertical(win.dockWidgetArea(d)))
    if have - max(extent, own.height()) >= need.height():
        return extent, False
    left = have - _compact_height(win) - 6  # the dock's separator
    return (min(extent, left), True) if left >= max(own.height(), DOCK_USABLE) else (0, False)


def prepare_docks(win: QMainWindow, areas: dict[QDockWidget, Qt.DockWidgetArea]) -> None:
    """The one dock rule, decided for every hidden dock before it shows (a docked dock that
    does not fit would grow the window past the screen the moment it appears): docked when
    the stages keep a usable size beside it (the plots yielding their room to a bottom dock
    if need be: a dock never covers the stages it drives), otherwise floating over the
    window's lower or right part, inside the screen."""
    for dock, area in areas.items():
        if dock.isVisible():
            continue
        extent, yields = room_for(win, area, dock)
        dock.setProperty("extent", extent)
        dock.setProperty("yields", yields)
        if dock.isFloating() == (not extent):
            continue
        dock.setFloating(not extent)
        if not extent:
            dock.setGeometry(_floating_box(win, area, dock))


def _short(win: QMainWindow) -> bool:
    """The window, with the widgets that yield shown, would be taller than its screen's
    client area (a small screen under a window manager, with notices and a long banner).
    The offscreen platform's screen is a placeholder: never short there."""
    if QGuiApplication.platformName() == "offscreen" or not win.isVisible():
        return False
    room = available(win).height() - (win.frameGeometry().height() - win.geometry().height())
    need = win.minimumSizeHint().height()
    if not any(w.isVisibleTo(win) for w in win.yielding):
        need += int(win.property("yielded_height") or 0)  # what showing them again takes
    return need > room


def make_way(win: QMainWindow, showing: QDockWidget | None = None) -> None:
    """The widgets that yield to a dock hidden while a docked dock that needs their room is
    shown or the window would not fit its screen with them, and those it hid shown again
    once neither holds (one hidden for another reason, the pipeline view's plots, stays
    hidden). `showing`: a dock about to show, whose room is made first (shown first, it grew
    the window past the screen for a moment)."""
    gone = any((d.isVisible() or d is showing) and not d.isFloating() and d.property("yields")
               for d in win.dock_areas) or _short(win)
    before = win.minimumSizeHint().height()
    hid = False
    for w in win.yielding:
        if gone and w.isVisibleTo(win):
            w.setProperty("yielded", True)
            w.hide()
            hid = True
        elif not gone and w.property("yielded"):
            w.setProperty("yielded", False)
            w.setVisible(not w.property("crowded"))  # a long pipeline's stages keep it
        else:
            continue
        up = w.parentWidget()  # nested splitters do not pass a child's new minimum up
        while up is not None and up is not win:
            up.updateGeometry()
            up = up.parentWidget()
    if hid:  # the height they took, for deciding when there is room for them again
        win.setProperty("yielded_height", max(0, before - win.minimumSizeHint().height()))


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
    """A docked dock that just appeared gets the extent the dock rule gave it."""
    make_way(win)
    if dock.isFloating():
        return
    win.resizeDocks([dock], [int(dock.property("extent") or DOCK_EXTENT.get(area, 380))],
                    Qt.Orientation.Vertical if _vertical(area) else Qt.Orientation.Horizontal)


def show_dock(win: QMainWindow, dock: QDockWidget) -> None:
    """Open a dock as a user asks for it (its menu item, its shortcut, a tab's button): the
    dock rule decided on the window as it is at that moment (the decision left from an
    earlier layout, a banner or a deep pool since gone, floated the tuning panel over the
    stages of a full-screen window), then shown on top."""
    if dock.isHidden() and dock in getattr(win, "dock_areas", {}):
        prepare_docks(win, {dock: win.dock_areas[dock]})
    dock.show()
    dock.raise_()


def toggle_action(win: QMainWindow, dock: QDockWidget, text: str, keys: str) -> QAction:
    """The checkable menu item that opens a dock through show_dock and closes it, checked
    while the dock is open (Qt's own toggle action shows it on the last decision)."""
    act = QAction(text, win)
    act.setCheckable(True)
    act.setShortcut(QKeySequence(keys))
    act.triggered.connect(lambda _on: show_dock(win, dock) if dock.isHidden() else dock.close())
    dock.visibilityChanged.connect(lambda _on: act.setChecked(not dock.isHidden()))
    act.setChecked(not dock.isHidden())
    return act
