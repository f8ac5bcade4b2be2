"""Application entry points: `inspector [STORE]` opens the window, `inspector shot` renders
it offscreen after a query and saves a PNG."""

from __future__ import annotations

import os
import sys
import time
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

    app = QApplication.instance() or QApplication(sys.argv[:1])
    configure_app(app)
    return app


def _wait_for_pool() -> None:
    """Let queries still in flight finish before the interpreter tears Qt down."""
    from PySide6.QtCore import QThreadPool

    QThreadPool.globalInstance().waitForDone(5000)


def launch(store: str | None, table: str | None, options: Any = None) -> int:
    """The window on STORE (or the demo store); options: store_options.OpenOptions."""
    if not has_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    app = _application()
    from inspector.qt.window import MainWindow

    win = MainWindow()
    win.show()
    if store:
        if options is not None:
            win.store_features.open(store, table, options)
        else:
            win.open_store(store, table)
    else:
        win.vm.open_store(None, table)
    code = app.exec()
    _wait_for_pool()
    return int(code)


def parse_size(text: str) -> tuple[int, int]:
    w, sep, h = text.lower().partition("x")
    try:
        size = (int(w), int(h)) if sep else None
    except ValueError:
        size = None
    if size is None or not (320 <= size[0] <= 8192 and 240 <= size[1] <= 8192):
        raise InspectorError(f"--size takes WIDTHxHEIGHT between 320x240 and 8192x8192, "
                             f"not {text!r}.")
    return size


def _given_from_args(args: Any) -> dict[str, Any]:
    """The explicitly given parameters, as `inspector query` would pass them to build_params."""
    from inspector.core.params import freeze_map
    from inspector.core.scope import load_scope_map

    keys = ("mode", "distance", "limit", "overfetch", "cap", "fts_k", "vec_k", "blend",
            "default_importance", "min_score", "scope", "scope_strategy", "scope_column",
            "filter")
    given = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    if getattr(args, "scope_map", None):
        given["scope_map"] = freeze_map(load_scope_map(args.scope_map))
    return given


def wait_idle(vm: Any, timeout: float = 60.0) -> None:
    """Spin the event loop until the view-model has no query or analysis in flight."""
    from PySide6.QtCore import QCoreApplication

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        QCoreApplication.processEvents()
        if not vm.busy and not vm.expect_busy and not vm._expect_timer.isActive():
            QCoreApplication.processEvents()
            return
        time.sleep(0.01)
    raise InspectorError(f"The query did not finish within {timeout:.0f} s.")


def _quiet_qt() -> None:
    """Keep stderr for our one-line messages: drop Qt's own chatter (the offscreen plugin
    warns about window hints it cannot honour); critical and fatal messages still pass."""
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    def handler(kind: QtMsgType, _context: Any, message: str) -> None:
        if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            print(f"qt: {message}", file=sys.stderr)

    qInstallMessageHandler(handler)


def shot(args: Any) -> int:
    """Open the window offscreen, run the query from the arguments, and save a PNG."""
    from inspector.cli import params_from_args

    size = parse_size(args.size)
    params_from_args(args)  # validate every option before any window exists
    from inspector.qt.store_options import options_from_args

    options = options_from_args(args)
    if args.vector is not None:
        raise InspectorError("inspector shot takes --text or --vector-of, not --vector.")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _quiet_qt()
    _application()
    from inspector.qt.window import MainWindow

    win = MainWindow(restore=False)
    vm = win.vm
    asked = bool(args.text or args.vector_of)
    if args.store is None and not asked:
        vm.open_store(None, args.table, then="suggested")
    else:
        vm.restore(args.preset, _given_from_args(args), compare=False)
        vm.text, vm.vector_of = args.text or "", args.vector_of
        vm.expected = list(args.expect)
        win.query_bar.show_query(vm.text, vm.vector_of)
        if args.store is not None and not asked:
            raise InspectorError("Give a query for the store: --text TEXT or --vector-of ID.")
        vm.embedder = getattr(args, "embedder", None)
        vm.open_store(args.store, args.table, then="run", options=options)
    win.resize(*size)
    win.show()
    wait_idle(vm)
    if vm.error:
        raise InspectorError(vm.error)
    win.resize(*size)
    wait_idle(vm)
    win.export_png(args.out)
    print(f"saved {args.out} ({size[0]}x{size[1]})")
    win.close()
    return 0
