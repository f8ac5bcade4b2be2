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

import pytest  # noqa: E402
from PySide6.QtCore import QSettings, QThreadPool  # noqa: E402

import inspector.qt  # noqa: E402,F401 - first: guards PySide6's refcount bug (qt/_refcount.py)
from inspector.core.stores.demo import DEMO_VERSION, build_demo  # noqa: E402


@pytest.fixture(scope="session")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inspector-data")
    build_demo(root / f"demo-store-v{DEMO_VERSION}")
    return root


@pytest.fixture(scope="session")
def demo_path(data_root: Path) -> str:
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


@pytest.fixture
def window(qtbot) -> Iterator[object]:
    """The main window on the demo store, after its suggested query has run."""
    from inspector.qt.window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()
    win.vm.open_store(None)
    wait_ready(qtbot, win.vm)
    yield win
    # a debounced job (expected rows, shape) must not answer a window already deleted
    win.vm.jobs.cancel_all()
    win.vm.jobs.wait_idle()


def wait_ready(qtbot, vm, timeout: int = 30_000) -> None:
    """Until no store is opening and no query is in flight (both start synchronously)."""
    qtbot.waitUntil(lambda: not vm.busy, timeout=timeout)


@pytest.fixture
def ready(qtbot):
    return lambda vm, timeout=30_000: wait_ready(qtbot, vm, timeout)
