"""Qt tests run offscreen, on a demo store built once per session, with settings, data and
cache redirected to temporary folders so the user's own are never read or written."""

from __future__ import annotations

import json
import os
import tempfile

# A realistic offscreen screen (the plugin's default is 800x800, smaller than the window).
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    _screen = os.path.join(tempfile.mkdtemp(prefix="inspector-screen-"), "screen.json")
    with open(_screen, "w", encoding="utf-8") as fh:
        json.dump({"screens": [{"name": "test", "x": 0, "y": 0, "width": 2560,
                                "height": 1600, "logicalDpi": 96, "dpr": 1}]}, fh)
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={_screen}"

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtCore import QCoreApplication, QSettings, QThreadPool  # noqa: E402

import inspector.qt  # noqa: E402,F401 - first: guards PySide6's refcount bug (qt/_pyside.py)
from inspector.core.stores.demo import DEMO_VERSION  # noqa: E402


@pytest.fixture(scope="session")
def demo_path(data_root: Path) -> str:
    """The demo store, as the window names it (a string)."""
    return str(data_root / f"demo-store-v{DEMO_VERSION}")


@pytest.fixture(autouse=True)
def isolated(qapp, data_root: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Redirect data, cache and QSettings; yields the settings folder."""
    from inspector.qt.app import configure_app

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(data_root))
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    configure_app(qapp)
    where = tmp_path / "settings"
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(where))
    yield where
    QThreadPool.globalInstance().waitForDone(20_000)
    from inspector.qt.jobs import gc_rest

    gc_rest()  # a test ends before the window rests: CPython's schedule is back now


def _fresh_window() -> Any:
    from inspector.qt.window import MainWindow

    win = MainWindow()
    win.resize(1600, 1000)
    win.show()
    win.vm.open_store(None)
    win.vm.jobs.wait_idle(30)
    return win


def _dispose(win: Any) -> None:
    win.vm.jobs.cancel_all()
    win.vm.jobs.wait_idle(30)
    win.persist = False  # a discarded test window saves nothing
    win.close()
    win.deleteLater()
    QCoreApplication.processEvents()


def state_of(win: Any) -> tuple[Any, ...]:
    """What a test can see of a window's state beyond its store's answers: a reused window
    must show exactly this as a fresh one does, or it is not reused."""
    vm, dock = win.vm, win.tuning_dock
    store = vm.store
    return (
        win.isVisible(), win.isMaximized(), (win.width(), win.height()), win.theme_choice,
        win.windowTitle(), win.query_bar.isEnabled(), win.persist, win.tour.isVisible(),
        tuple(sorted((d.objectName(), d.isVisible(), d.isFloating()) for d in win.dock_areas)),
        tuple(n for n in ("sweep", "compare", "map", "index", "audit")
              if dock.built(n) is not None),
        dock.judgments.judgments, dock.judgments.path, dock.query_set[1],
        win.tuning_receipts.offline,
        None if store is None else (store.uri, store.table_name, store.version),
        vm.question.model_dump_json(exclude={"now"}), vm.selected, vm.error, vm.driven,
        vm.trace is not None,
        tuple((name, sp.sizes()) for name, sp in sorted(win.splitters.items())),
    )


def _reset(win: Any) -> bool:
    """Put a used window back where a fresh one starts: docks closed, the demo store opened
    again and its first story run. False when the test ended the window."""
    try:
        if not win.isVisible():
            return False
        win.vm.jobs.cancel_all()
        win.vm.jobs.wait_idle(30)
        for dock in win.dock_areas:
            dock.hide()
        win.resize(1600, 1000)
        win.vm.driven = None
        win.vm.open_store(None)
        win.vm.jobs.wait_idle(30)
        return True
    except RuntimeError:  # the test deleted it
        return False


@pytest.fixture(scope="module")
def _window_slot(qapp) -> Iterator[dict[str, Any]]:
    slot: dict[str, Any] = {"win": None, "fresh": None, "built": 0}
    yield slot
    if slot["win"] is not None:
        _dispose(slot["win"])


@pytest.fixture
def window(_window_slot: dict[str, Any], isolated: Path) -> Iterator[Any]:
    """The main window on the demo store, after its suggested query has run. One window is
    reused by the tests of a module (building one is most of a window test's time): before
    each test it is reset, and it is replaced by a fresh one when the reset cannot bring back
    everything a fresh window shows (`state_of`), e.g. after a test closed it, changed the
    theme or filled a tuning panel."""
    slot = _window_slot
    win = slot["win"]
    if win is None or not _reset(win) or state_of(win) != slot["fresh"]:
        if win is not None:
            _dispose(win)
        win = _fresh_window()
        slot["win"], slot["fresh"] = win, state_of(win)
        slot["built"] += 1
    yield win
    try:
        # a debounced job (expected rows, shape) must not answer after the test
        win.vm.jobs.cancel_all()
        win.vm.jobs.wait_idle(30)
        opened = win.vm.opened
        if opened is None or not opened.demo:
            # left on the test's own store (a temporary folder, a local S3 server): closed
            # now, while that store is still there, not at the end of the module
            _dispose(win)
            slot["win"] = None
    except RuntimeError:
        slot["win"] = None


def wait_ready(qtbot, vm, timeout: int = 30_000) -> None:
    """Until no store is opening and no query is in flight (both start synchronously)."""
    qtbot.waitUntil(lambda: not vm.busy, timeout=timeout)


@pytest.fixture
def ready(qtbot):
    return lambda vm, timeout=30_000: wait_ready(qtbot, vm, timeout)
