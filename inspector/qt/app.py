"""Application entry points: `inspector [STORE]` opens the window, `inspector shot` renders
it offscreen after a query and saves a PNG."""

from __future__ import annotations

import os
import sys
from typing import Any

from inspector.core.errors import InspectorError

NO_DISPLAY = ("inspector: no display found (DISPLAY and WAYLAND_DISPLAY are unset), so the "
              "window cannot open; use `inspector shot --out FILE.png` for a picture or "
              "`inspector query STORE --text ...` for text.")


def has_display(environ: dict[str, str] | None = None, platform: str | None = None) -> bool:
    """False on Linux with no X11 or Wayland display and no explicit QT_QPA_PLATFORM."""
    env = os.environ if environ is None else environ
    if not (platform or sys.platform).startswith("linux"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM"))


def configure_app(app: Any) -> None:
    """Names first (QSettings depends on them), then the INI format so paths are portable."""
    from PySide6.QtCore import QSettings

    from inspector.qt import settings, theme

    app.setOrganizationName(settings.ORG)
    app.setApplicationName(settings.APP)
    app.setApplicationDisplayName("Memory-store inspector")
    app.setWindowIcon(theme.app_icon())
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)


def _application() -> Any:
    from PySide6.QtWidgets import QApplication

    from inspector.qt import _pyside

    _pyside.quicken_feature_check()  # before the window's heavy imports: see the module
    app = QApplication.instance() or QApplication(sys.argv[:1])
    configure_app(app)
    return app


def _wait_for_pool() -> None:
    """Let queries still in flight finish before the interpreter tears Qt down."""
    from PySide6.QtCore import QThreadPool

    QThreadPool.globalInstance().waitForDone(5000)


def launch(store: str | None, table: str | None, options: Any = None,
           pipeline: str | None = None) -> int:
    """The window on STORE (or the demo store); options: core.stores.options.OpenOptions;
    pipeline: a pipeline file shown in the pipeline view once the store is open."""
    if not has_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    app = _application()
    release = hold_collections(app)
    what = store or "the demo store"
    frame = show_frame(app, what)
    held: dict[str, Any] = {"frame": frame}  # keeps the frame, then the window, alive

    def build() -> None:
        held["win"] = start_window(store, table, options, pipeline, frame=frame)
        release_after_results(held["win"], release)

    steps: tuple[Any, ...] = HEAVY_MODULES
    if store is None:  # the demo store: on a first launch it is written from here on
        steps = (*HEAVY_MODULES[:2], write_demo_early, *HEAVY_MODULES[2:])
    after_first_paint(frame, lambda: import_then(steps, build))
    code = app.exec()
    release()
    _wait_for_pool()
    return int(code)


# Full garbage collections wait through the launch (batch_gc.hold): the modules the window
# imports leave ~170,000 objects for the collector, none of them garbage, and CPython walked all
# of them about three times before the first results were on screen (counted with
# gc.callbacks; the note on issue 34 has the figures). The wait ends once the first
# results have been shown for a moment (the window's own rest, qt.jobs.GC_QUIET_MS), then the
# collection that fell due runs once; and after STARTUP_GC_MAX_S whatever happens (a store that
# never opens). The young generations are collected as always.
STARTUP_GC_MAX_S = 30


def hold_collections(app: Any) -> Any:
    """Hold full collections from now; returns the function that ends the hold (once; later
    calls do nothing), which also runs by itself after STARTUP_GC_MAX_S."""
    from PySide6.QtCore import QTimer

    from inspector.core import batch_gc

    state = {"held": True}
    batch_gc.hold()

    def release() -> None:
        if state["held"]:
            state["held"] = False
            batch_gc.release()

    QTimer.singleShot(STARTUP_GC_MAX_S * 1000, app, release)
    return release


def release_after_results(win: Any, release: Any) -> None:
    """Call `release` once the window's first results have been on screen for GC_QUIET_MS."""
    from PySide6.QtCore import QTimer

    from inspector.qt.jobs import GC_QUIET_MS

    def shown() -> None:
        if win.vm.trace is not None:
            win.vm.trace_changed.disconnect(shown)
            QTimer.singleShot(GC_QUIET_MS, win, release)

    win.vm.trace_changed.connect(shown)


# what the window needs and its frame does not, imported one per turn of the event loop once
# the frame is on screen (each takes 0.1-0.5 s; the engine's lancedb loads in the open job;
# pyqtgraph, with the plots, once the first results are on screen: MainWindow.ensure_plots)
HEAVY_MODULES = ("numpy", "pyarrow", "inspector.core.engine.flow.runner", "inspector.qt.window")


def show_frame(app: Any, what: str) -> Any:
    """The window's frame, painted before anything heavy is imported (Qt alone): the main
    window's title, icon, theme and place, saying what it opens. The window replaces it once
    built, in the same place."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar

    from inspector.qt import fit, theme
    from inspector.qt import settings as cfg

    choice = str(cfg.load_state("theme") or "system")
    theme.apply_theme(app, choice if choice in theme.THEMES else "system")
    frame = QMainWindow()
    frame.setObjectName("startupFrame")
    frame.setWindowTitle("")  # Qt adds the application's display name, as on the window
    label = QLabel(f"Opening {what}…", objectName="stageNote")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    frame.setCentralWidget(label)
    busy = QProgressBar(frame, minimum=0, maximum=0)
    busy.setFixedWidth(120)
    frame.statusBar().addPermanentWidget(busy)
    frame.statusBar().showMessage(f"Opening {what}…")
    geometry = cfg.load_state("window/geometry")
    if geometry is None or not frame.restoreGeometry(geometry):
        fit.place_first(frame)
    fit.clamp_to_screen(frame)
    frame.show()
    return frame


def import_then(modules: tuple[Any, ...], then: Any) -> None:
    """Import the modules one per turn of the event loop (the frame repaints between them),
    then call `then`. A step may be a function instead of a module name: it is called, and
    what it returns is a gate, called every POLL_MS until it returns True before the next
    step (None: go on at once)."""
    import importlib

    from PySide6.QtCore import QTimer

    if not modules:
        then()
        return
    if callable(modules[0]):
        gate = modules[0]()
        if gate is not None:
            wait_then(gate, lambda: import_then(modules[1:], then))
            return
    else:
        importlib.import_module(modules[0])
    QTimer.singleShot(0, lambda: import_then(modules[1:], then))


POLL_MS = 10


def wait_then(gate: Any, then: Any) -> None:
    """Call `then` once gate() is True, asking every POLL_MS (the event loop runs between)."""
    from PySide6.QtCore import QTimer

    if gate():
        then()
    else:
        QTimer.singleShot(POLL_MS, lambda: wait_then(gate, then))


def write_demo_early() -> Any:
    """On a first launch on the demo store, start writing it now, in a thread, while the
    window's own modules import and the window is built (the open job then finds it written,
    or waits for it: demo.ensure_demo_store holds a lock). The store is unpacked as shipped
    (demo.unpack_demo_store): no lancedb, no index training beside the window's build; where it
    cannot be, this thread writes nothing and the open job builds it. Returns the gate the next
    import waits on: the thread's own imports, so no module is imported by two threads at once
    (CPython's per-module import locks can then deadlock); None when the store exists."""
    import threading

    from inspector.core.stores import demo

    if demo.has_demo_store(demo.demo_store_path()):
        return None
    imported = threading.Event()

    def write() -> None:
        try:
            import gzip  # noqa: F401 - what the unpacking imports, imported here
            import tarfile  # noqa: F401
            import zlib  # noqa: F401
        finally:
            imported.set()
        try:
            demo.unpack_demo_store()
        except Exception:  # noqa: BLE001 - the open job writes it again and says what failed
            pass

    threading.Thread(target=write, name="demo-store", daemon=False).start()
    return imported.is_set


def start_window(store: str | None, table: str | None, options: Any = None,
                 pipeline: str | None = None, frame: Any = None) -> Any:
    """Show the window in its loading state, then open the store once it has painted: the
    engine (lancedb alone imports in ~1.2 s) loads in the open job, never before the window.
    A pipeline file is shown once the store is open (its first store only). `frame`: the
    frame shown so far (show_frame), replaced by the window in its place."""
    from inspector.qt.window import MainWindow

    win = MainWindow()
    win.show_loading(store or "the demo store")
    if frame is not None:
        win.restoreGeometry(frame.saveGeometry())  # where the user sees it (or moved it)
    win.show()
    if frame is not None:
        frame.hide()
        frame.deleteLater()
    if pipeline is not None:
        def first_store(_opened: Any) -> None:
            win.vm.store_opened.disconnect(first_store)
            win.open_pipeline_file(pipeline)

        win.vm.store_opened.connect(first_store)
    from inspector.core.stores.options import without_userinfo

    # the question saved last asks again on the store it was asked of; another store
    # starts from its own suggested question
    saved = win.vm.question.store
    then = "keep" if store and saved and saved == without_userinfo(store) else None

    def open_store() -> None:
        if store:
            if options is not None:
                win.store_features.open(store, table, options, then=then)
            else:
                win.vm.open_store(store, table, then=then)
        else:
            win.vm.open_store(None, table)

    after_first_paint(win, open_store)
    return win


def after_first_paint(widget: Any, then: Any, fallback_ms: int = 1000) -> None:
    """Call `then` once, on the turn of the event loop after the widget's first paint (or
    after fallback_ms if it never paints, e.g. a window opened minimised)."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    state = {"done": False}

    def fire() -> None:
        if not state["done"]:
            state["done"] = True
            widget.removeEventFilter(watcher)
            then()

    class Watcher(QObject):
        def eventFilter(self, _obj: Any, event: Any) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint and not state["done"]:
                QTimer.singleShot(0, fire)
            return False

    watcher = Watcher(widget)
    widget.installEventFilter(watcher)
    QTimer.singleShot(fallback_ms, fire)


def wait_idle(vm: Any, timeout: float = 60.0) -> None:
    """Spin the event loop until the window has no job pending or running."""
    vm.jobs.wait_idle(timeout)


def _quiet_qt() -> None:
    """Keep stderr for our one-line messages: drop Qt's own chatter (the offscreen plugin
    warns about window hints it cannot honour); critical and fatal messages still pass."""
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    def handler(kind: QtMsgType, _context: Any, message: str) -> None:
        if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            print(f"qt: {message}", file=sys.stderr)

    qInstallMessageHandler(handler)


def shot(q: Any, options: Any, size: tuple[int, int], out: str) -> int:
    """Open the window offscreen, ask the question (a Question, as `inspector query` reads it
    from the same arguments; None: the demo store's first story) and save a PNG. Never reads
    or writes the user's window settings."""
    win = shot_window(q, options, size)
    win.export_png(out)
    print(f"saved {out} ({size[0]}x{size[1]})")
    win.close()
    return 0


def shot_window(q: Any, options: Any, size: tuple[int, int]) -> Any:
    """The offscreen window `shot` saves, idle after the question's answer (the diagnosis's
    fixes, the expected rows and the index facet found): the very question `inspector query`
    answers, asked through the window's own question model."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _quiet_qt()
    _application()
    from inspector.qt.window import MainWindow

    win = MainWindow(restore=False, persist=False)
    vm = win.vm
    win.resize(*size)
    win.show()
    if q is None:
        vm.open_store(None)
    else:
        fields = q.model_dump(by_alias=False)
        fields.pop("schema_", None)
        if not vm.put(**fields):
            win.close()
            raise InspectorError(vm.error or "The question is not valid.")
        if q.preset is not None:
            win.store_features.preset_chosen(q.preset)  # as when a user picks it
        vm.open_store(q.store, q.table, then="keep", options=options)
    wait_idle(vm)
    if vm.error or vm.trace is None:
        win.close()
        raise InspectorError(vm.error or "The pipeline gave no answer.")
    win.ensure_plots()  # the picture has the plots, whether or not their turn came yet
    win.resize(*size)  # the size asked, once the answer is laid out
    wait_idle(vm)
    return win
