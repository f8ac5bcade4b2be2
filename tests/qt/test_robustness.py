"""The window under stress: a slow query never freezes it, closing mid-query is clean, and a
whole scripted session leaves the store byte-identical."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from PySide6.QtCore import QTimer

from inspector.qt import viewmodel
from tests.storekit import snapshot


class _Held:
    """A query job that cannot finish until the GUI thread has turned its event loop: it
    waits on `release`, which only a timer fired by the GUI thread's loop sets. No clock is
    read, so the machine's load cannot fail it: if the query ran on the GUI thread (or the
    GUI thread waited for it), the timer could not fire while the job waits, and `turned`
    stays empty until the job gives up."""

    def __init__(self, give_up: float = 30.0) -> None:
        self.release = threading.Event()
        self.waiting = threading.Event()
        self.turned: list[bool] = []  # each: was the job still waiting when the loop turned
        self.thread: int | None = None
        self.give_up = give_up

    def hold(self) -> None:
        self.thread = threading.get_ident()
        self.waiting.set()
        self.release.wait(self.give_up)
        self.waiting.clear()

    def job(self, real):
        def job(*args, **kwargs):  # on a worker thread, like a slow LanceDB search
            self.hold()
            return real(*args, **kwargs)

        return job

    def turn(self) -> None:
        """Asked of the GUI thread's loop: it records, then lets the job go on."""
        self.turned.append(self.waiting.is_set())
        self.release.set()


def test_the_event_loop_never_stalls_while_a_slow_query_runs(window, qtbot, monkeypatch):
    """While the query job runs, the user's slider move is handled and a timer queued on the
    GUI thread fires: the job waits until it has (see _Held)."""
    held = _Held()
    monkeypatch.setattr(viewmodel, "open_live", held.job(viewmodel.open_live))
    window.vm.set_query("how do I rotate the signing keys for service tokens now")
    assert window.vm.busy
    qtbot.waitUntil(held.waiting.is_set, timeout=20_000)  # the job is running, held
    window.sliders.sliders["blend.weight"].setValue(0.4)  # the user keeps working meanwhile
    window.sliders.flush()
    QTimer.singleShot(0, held.turn)
    qtbot.waitUntil(lambda: bool(held.turned), timeout=20_000)
    assert held.turned == [True], "the GUI thread's loop did not turn while the query ran"
    assert held.thread != threading.main_thread().ident, "the query ran on the GUI thread"
    qtbot.waitUntil(lambda: not window.vm.busy, timeout=20_000)
    assert window.vm.question.set["blend.weight"] == 0.4
    assert window.vm.trace.stage("blend").params["weight"] == 0.4


def test_the_measure_catches_work_on_the_gui_thread(qtbot):
    """The control: the same held job run on the GUI thread fails the measure (the timer
    fires only after the job gave up waiting)."""
    held = _Held(give_up=0.5)
    QTimer.singleShot(0, held.hold)
    QTimer.singleShot(0, held.turn)
    qtbot.waitUntil(lambda: bool(held.turned), timeout=20_000)
    assert held.turned == [False]
    assert held.thread == threading.main_thread().ident


_CLOSE_MID_QUERY = textwrap.dedent("""
    import os, sys, time
    import inspector.qt
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from inspector.qt import viewmodel
    from inspector.qt.app import configure_app, wait_idle
    from inspector.qt.window import MainWindow
    app = QApplication(sys.argv[:1]); configure_app(app)
    win = MainWindow(restore=False); win.show()
    win.vm.open_store(None); wait_idle(win.vm)
    real = viewmodel.open_live
    def slow(*a, **k):
        time.sleep(1.0)
        return real(*a, **k)
    viewmodel.open_live = slow
    win.vm.run_again()
    assert win.vm.busy
    QTimer.singleShot(100, win.close)
    QTimer.singleShot(150, app.quit)
    code = app.exec()
    from inspector.qt.app import _wait_for_pool
    _wait_for_pool()
    print("closed cleanly", code, flush=True)
""")


def test_closing_with_a_query_in_flight_shuts_down_cleanly(tmp_path, data_root):
    env = {**os.environ, "INSPECTOR_DATA_DIR": str(data_root),
           "INSPECTOR_CACHE_DIR": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path)}
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _CLOSE_MID_QUERY], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    assert "closed cleanly 0" in done.stdout
    assert "Fatal" not in done.stderr and "QThread: Destroyed" not in done.stderr
    assert time.monotonic() - t < 60


def test_a_scripted_window_session_leaves_the_store_byte_identical(qtbot, tmp_path, demo_path,
                                                                    ready):
    from inspector.qt.window import MainWindow

    store = Path(shutil.copytree(demo_path, tmp_path / "store"))
    before = snapshot(store)
    win = MainWindow(restore=False)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    win.vm.open_store(str(store))
    ready(win.vm)
    vm = win.vm
    vm.set_query("how do I rotate the signing keys for service tokens")
    for preset in ("docs-before-fix", "docs-pushdown", "importance-blend"):
        vm.set_preset(preset)
        vm.run_again()
        ready(vm)
        for key, value in (("fetch.overfetch", 4.0), ("blend.weight", 0.5),
                           ("min_score.min", 0.1)):
            win.sliders.sliders[key].setValue(value)
            win.sliders.flush()
    vm.set_param("fetch.mode", "fts")
    ready(vm)
    vm.jobs.wait_idle(60)
    first = vm.trace.stage("fetch").ids[0]
    vm.toggle_expected(first)
    vm.use_as_query(first)
    vm.jobs.wait_idle(60)
    win.export_json(str(tmp_path / "trace.json"))
    win.export_png(str(tmp_path / "view.png"))
    assert (tmp_path / "trace.json").stat().st_size > 0
    win.close()
    assert snapshot(store) == before


def test_recent_stores_never_keep_a_password_from_a_url(isolated):
    from inspector.qt import settings as cfg

    items = cfg.add_recent("s3://alice:hunter2@minio.local:9000/bucket/mem")
    assert items[0] == "s3://minio.local:9000/bucket/mem"
    cfg.settings().sync()
    saved = "".join(p.read_text() for p in Path(isolated).rglob("*") if p.is_file())
    assert "minio.local" in saved  # the file was written...
    assert "hunter2" not in saved and "alice" not in saved  # ...without the credentials


def test_dock_layout_survives_a_restart(qtbot, isolated):
    from inspector.qt.window import MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.show()
    first.tuning_dock.show()
    first.tuning_dock.setFloating(True)
    first.close()
    second = MainWindow()
    qtbot.addWidget(second)
    second.show()
    assert second.tuning_dock.isVisible() and second.tuning_dock.isFloating()


def _layout(win) -> tuple:
    """Where everything is: the window's size and least size, every splitter's sizes, each
    plot box's place and least size."""
    return ((win.size(), win.minimumSizeHint()),
            tuple((name, sp.sizes()) for name, sp in sorted(win.splitters.items())),
            tuple((b.geometry(), b.minimumSizeHint()) for b in (win.scatter_box, win.bump_box)))


def test_a_saved_layout_restores_before_the_plots_and_stays_when_they_come(qtbot, isolated):
    """The plots are built after the window's first results (pyqtgraph off the launch's
    way): the saved geometry, splitters and docks restore onto their stand-ins, and nothing
    moves when the plots take their places (the stand-ins ask a layout what a plot asks)."""
    from PySide6.QtCore import QCoreApplication

    from inspector.qt.window import MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(1366, 900)
    first.show()
    qtbot.waitExposed(first)
    first.splitters["plots"].setSizes([300, 400, 500])
    first.splitters["left"].setSizes([500, 300])
    first.tuning_dock.show()
    first.tuning_dock.setFloating(True)
    QCoreApplication.processEvents()
    saved = _layout(first)
    first.close()  # closeEvent saves
    second = MainWindow()
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    QCoreApplication.processEvents()
    assert not second.plots_built  # no results yet: nothing asked for them
    assert second.tuning_dock.isVisible() and second.tuning_dock.isFloating()
    assert _layout(second) == saved
    def asks(w) -> tuple:  # what a widget asks of its layout
        p = w.sizePolicy()
        return (w.minimumSize(), w.minimumSizeHint(), w.sizeHint(), p.horizontalPolicy(),
                p.verticalPolicy(), p.horizontalStretch(), p.verticalStretch(),
                p.hasHeightForWidth())

    stand_in = asks(second.scatter_box.stand_in)
    second.ensure_plots()
    QCoreApplication.processEvents()
    assert second.plots_built and second.scatter.isVisible() and second.bump.isVisible()
    assert _layout(second) == saved
    assert asks(second.scatter) == stand_in
