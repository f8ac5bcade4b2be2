"""Entry points and persistence: settings round trip, `inspector shot`, no-display message,
the PySide6 refcount guard, and the worker jobs on their own (no window)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from inspector.qt import app as qt_app
from inspector.qt import settings as cfg
from inspector.qt.window import MainWindow


def test_settings_round_trip_and_stay_in_the_test_folder(window, qtbot, isolated,
                                                         demo_path) -> None:
    assert Path(cfg.settings().fileName()).is_relative_to(isolated)
    vm = window.vm
    vm.set_preset("importance-blend")
    vm.jobs.wait_idle(60)
    slide(window, "blend.weight", 0.42)
    vm.jobs.wait_idle(60)
    window.resize(1300, 900)
    window.splitters["main"].setSizes([900, 400])
    sizes = window.splitters["main"].sizes()
    cfg.add_recent(demo_path)
    window.close()  # closeEvent saves
    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    q = again.vm.question
    assert q.preset == "importance-blend"
    assert q.set["blend.weight"] == pytest.approx(0.42)
    assert q.text == vm.question.text and q.store == vm.question.store
    assert (again.width(), again.height()) == (1300, 900)
    assert again.splitters["main"].sizes() == sizes
    assert [a.text() for a in again.recent_menu.actions()][0] == demo_path


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               HOME=str(tmp_path / "home"))
    return env


def _inspector(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "inspector", *args], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120)


def test_shot_writes_a_real_picture_of_the_requested_size(tmp_path) -> None:
    out = tmp_path / "shot.png"
    done = _inspector(["shot", "--out", str(out), "--size", "1280x800"], tmp_path)
    assert done.returncode == 0, done.stderr
    img = QImage(str(out))
    assert (img.width(), img.height()) == (1280, 800)
    small = img.scaled(160, 100)
    colours = {small.pixel(x, y) for x in range(160) for y in range(100)}
    assert len(colours) > 40, "a blank or flat picture is not a screenshot of the window"


def test_shot_with_a_store_and_query_options(tmp_path, demo_path) -> None:
    out = tmp_path / "blend.png"
    done = _inspector(["shot", demo_path, "--out", str(out), "--size", "1600x1000", "--text",
                       "which editor theme does the user prefer", "--preset",
                       "importance-blend", "--limit", "5", "--min-score", "0", "--blend",
                       "0.5"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert QImage(str(out)).width() == 1600


@pytest.mark.parametrize("args, words", [
    (["--size", "12x12"], "--size"),
    (["--size", "wide"], "--size"),
    (["--blend", "3"], "blend.weight must be a finite number in [0, 1]"),
    (["/no/such/store", "--text", "x"], "No store at"),
])
def test_shot_bad_input_is_one_line_and_non_zero(tmp_path, args, words) -> None:
    done = _inspector(["shot", "--out", str(tmp_path / "x.png"), *args], tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr
    assert not (tmp_path / "x.png").exists()


def test_no_display_is_detected_and_explained(capsys, monkeypatch) -> None:
    assert not qt_app.has_display({}, "linux")
    assert qt_app.has_display({"DISPLAY": ":0"}, "linux")
    assert qt_app.has_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert qt_app.has_display({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert qt_app.has_display({}, "darwin")
    monkeypatch.setattr(qt_app, "has_display", lambda: False)
    assert qt_app.launch(None, None) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "inspector shot" in err[0] and "inspector query" in err[0]


def test_void_qt_calls_no_longer_exhaust_none_and_true(tmp_path) -> None:
    """PySide6 6.12 on 3.11 dies here with none_dealloc; the pin (<6.12 on 3.11) or the guard
    in inspector/qt/_pyside.py must keep it alive."""
    code = ("import inspector.qt\n"
            "from PySide6.QtCore import QObject, Signal\n"
            "from PySide6.QtWidgets import QApplication, QLabel\n"
            "app = QApplication([])\n"
            "label = QLabel()\n"
            "class O(QObject):\n"
            "    fired = Signal()\n"
            "o = O()\n"
            "o.fired.connect(lambda: None)\n"
            "for _ in range(50_000):\n"
            "    label.setText('x')\n"
            "    o.fired.emit()\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-500:]


def slide(win, key: str, value: float) -> None:
    """Move a slider as a user would, then apply the (coalesced) move at once."""
    win.sliders.sliders[key].setValue(value)
    win.sliders.flush()


def test_the_window_paints_its_loading_state_before_the_store_opens(qtbot) -> None:
    from tests.qt.qtkit import assert_shows, engine_json

    win = qt_app.start_window(None, None)
    qtbot.addWidget(win)
    assert win.status_label.text() == "Opening the demo store…"
    assert win.busy_bar.isVisible()
    assert win.vm.store is None and not win.vm.jobs.busy("open"), \
        "the store opens only after the window has painted"
    qtbot.waitUntil(lambda: win.vm.trace is not None and not win.vm.busy, timeout=30_000)
    assert not win.busy_bar.isVisible()
    win.vm.jobs.wait_idle(60)
    assert_shows(win, engine_json(win))
    win.vm.jobs.cancel_all()  # nothing may answer once the window is gone


def test_starting_the_window_imports_no_lancedb() -> None:
    code = ("import sys, inspector.cli.main, inspector.qt.app, inspector.qt.window; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lancedb', 'lance')))")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120)
    assert out.stdout.strip() == "[]", "lancedb is imported before the window opens"


def test_shot_runs_the_query_it_is_given_on_any_store(tmp_path, monkeypatch, random_store,
                                                      isolated) -> None:
    """Issue 21: `shot` refused SQLite docs files ("is a file, not a LanceDB store folder")
    and dropped --vector-of when the store opened. What the picture shows is checked on the
    window as it is saved."""
    from inspector.cli.main import main
    from tests.storekit import build_docs_db

    seen: list[tuple[str, str, int, list[str] | None]] = []
    real = MainWindow.export_png

    def spy(self: MainWindow, path: str) -> None:
        t = self.vm.trace
        seen.append((t.query_source, self.vm.store.uri, t.limit,
                     None if t.scopes is None else list(t.scopes)))
        real(self, path)

    monkeypatch.setattr(MainWindow, "export_png", spy)
    store = random_store(n=60)
    out = tmp_path / "by-example.png"
    assert main(["shot", str(store), "--vector-of", "m0003", "--limit", "4", "--size",
                 "900x700", "--out", str(out)]) == 0
    assert seen[-1] == ("example:m0003", str(store), 4, None) and out.exists()
    db = tmp_path / "docs.sqlite"
    build_docs_db(db)
    before = db.read_bytes()
    out = tmp_path / "docs.png"
    assert main(["shot", str(db), "--text", "rotate signing keys", "--preset", "docs-pushdown",
                 "--scope", "platform-docs", "--size", "900x700", "--out", str(out)]) == 0
    source, uri, _, scope = seen[-1]
    assert (source.startswith("text:"), uri, scope) == (True, str(db), ["platform-docs"])
    assert out.exists() and db.read_bytes() == before


def test_shot_on_an_indexed_table_shows_what_query_returns(tmp_path, monkeypatch, demo_path,
                                                           isolated, capsys) -> None:
    """Issue 21: `shot` must work on indexed tables and honour every query option `query`
    takes (it refused --vector): the window it saves shows `inspector query`'s answer, knobs
    and all, on the demo's IVF_PQ table."""
    import json

    from inspector.cli.main import main
    from inspector.core.stores.opening import open_store

    seen: list[tuple[object, list[str]]] = []
    real = MainWindow.export_png

    def spy(self: MainWindow, path: str) -> None:
        t = self.vm.trace
        seen.append(({st.name: st.params for st in t.stages}, list(t.final.ids)))
        real(self, path)

    monkeypatch.setattr(MainWindow, "export_png", spy)
    vec = open_store(str(demo_path), "memories_indexed").vector_of("mem-00017")
    opts = ["--table", "memories_indexed", "--overfetch", "3", "--nprobes", "5",
            "--refine-factor", "2", "--blend", "0.4", "--limit", "7", "--min-score", "0.1"]
    for asked in (["--vector-of", "mem-02540"], ["--vector", json.dumps(vec.tolist())]):
        assert main(["shot", str(demo_path), *asked, *opts, "--size", "900x700",
                     "--out", str(tmp_path / "s.png")]) == 0
        capsys.readouterr()
        assert main(["query", str(demo_path), *asked, *opts, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        params, final = seen[-1]
        (want,) = [s for s in doc["stages"] if s["name"] == "final"]
        assert final == [c["id"] for c in want["candidates"]] and final
        for stage, shown in params.items():  # every stage's parameters, the options' too
            want_params = doc["params"]["stages"][stage]
            assert {k: v for k, v in shown.items() if k in want_params} == want_params


def test_shot_of_a_pipeline_of_stages_shows_what_query_returns(tmp_path, monkeypatch,
                                                               isolated, capsys) -> None:
    """Issue 21: `shot` takes every option `query` takes, pipelines of stages included (it
    refused them): the window it saves holds `inspector query`'s stages, counts, final ids and
    scores for the same question (preset, --set, two scopes, the clock, the limit, a vector)."""
    import json

    from inspector.cli.main import main
    from tests.core.engine.flow.fixtures import fixture_copy

    fx = fixture_copy("memory-lancedb-pro", tmp_path)
    seen: list[object] = []
    real = MainWindow.export_png

    def spy(self: MainWindow, path: str) -> None:
        seen.append(self.vm.trace)
        real(self, path)

    monkeypatch.setattr(MainWindow, "export_png", spy)
    ask = [str(fx / "store"), "--preset", "memory-lancedb-pro", "--text", "postgres",
           "--vector", f"@{fx / 'q_pg.json'}", "--scope", "global", "--scope", "agent:main",
           "--now", "1767225600000", "--limit", "5", "--set", "hard_min_score.min=0.3"]
    assert main(["shot", *ask, "--size", "1366x768", "--out", str(tmp_path / "s.png")]) == 0
    assert QImage(str(tmp_path / "s.png")).width() == 1366
    capsys.readouterr()
    assert main(["query", *ask, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (trace,) = seen
    shown = [(st.name, len(st.rows)) for st in trace.stages]
    assert shown == [(s["name"], s["count"]) for s in doc["stages"]]
    final = doc["stages"][-1]["candidates"]
    assert list(trace.final.ids) == [c["id"] for c in final] and final
    assert trace.stages[-1].name == "final"
    assert trace.stage("hard_min_score").params["min"] == pytest.approx(0.3)  # the --set
    for st, want in zip(trace.stages, doc["stages"], strict=True):
        assert [r.score for r in st.rows] == pytest.approx([c["score"] for c in
                                                            want["candidates"]], abs=1e-12)



_FIRST_PAINT = """
import json, os, sys
import inspector.qt.app as app_module
from PySide6.QtCore import QEvent, QObject
original = app_module._application
HEAVY = ("lancedb", "lance", "pyarrow", "pyqtgraph", "numpy", "inspector.core.engine",
         "inspector.cli.main")
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            win = obj.window()
            print(json.dumps({"heavy": [m for m in HEAVY if m in sys.modules],
                              "status": win.statusBar().currentMessage()
                              if hasattr(win, "statusBar") else ""}), flush=True)
            os._exit(0)
        return False
def application():
    app = original()
    app._first = FirstPaint(app)
    app.installEventFilter(app._first)
    return app
app_module._application = application
sys.argv = ["inspector"]
from inspector.__main__ import main
main()
"""


def test_the_first_window_paints_before_lancedb_pyarrow_pyqtgraph_or_the_engine_load(
        tmp_path) -> None:
    """`inspector` (what its console script runs) paints its window's frame, saying what it
    opens, before any heavy module is imported: they load once it is on screen."""
    env = {**_env(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "INSPECTOR_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", _FIRST_PAINT], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-800:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["heavy"] == [], f"imported before the first paint: {got['heavy']}"
    assert got["status"] == "Opening the demo store…"
    assert not (tmp_path / "data").exists(), "the demo store was written before the paint"


_AT_WINDOW = """
import json, os, sys, threading
import inspector.qt.app as app_module
from PySide6.QtCore import QTimer
original = app_module.start_window
def start_window(*args, **kwargs):
    from inspector.core.stores import demo
    seen = {"lancedb": "lancedb" in sys.modules,
            "writing": any(t.name == "demo-store" for t in threading.enumerate()),
            "there": demo.has_demo_store(demo.demo_store_path())}
    win = original(*args, **kwargs)
    def poll():
        if win.vm.trace is not None:
            print(json.dumps({**seen, "store": win.vm.question.store}), flush=True)
            os._exit(0)
        QTimer.singleShot(20, poll)
    poll()
    return win
app_module.start_window = start_window
sys.argv = ["inspector"]
from inspector.__main__ import main
main()
"""


def test_a_first_launch_writes_the_demo_store_while_the_window_is_built(tmp_path) -> None:
    """The first launch on the demo store starts writing it (a thread, from the frame's first
    turns) before the window's own modules import, instead of after the window is built,
    and unpacks it as shipped: no lancedb before the window (building it imported lancedb in
    that thread and trained an index beside the window's build); a later launch, with the
    store written, starts nothing and imports no lancedb before the window. Both reach the
    demo's first results."""
    env = {**_env(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "INSPECTOR_DATA_DIR": str(tmp_path / "data")}
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _AT_WINDOW], env=env,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0 and done.stdout.strip(), done.stderr[-800:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    store = str(tmp_path / "data" / "demo-store-v2")
    first, later = runs
    # the unpacking is under way or, as it mostly is by then, done; nothing imported lancedb
    assert first["lancedb"] is False and (first["writing"] or first["there"])
    assert first["store"] == store
    assert later == {"lancedb": False, "writing": False, "there": True, "store": store}
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["demo-store-v2"]


def test_the_frame_gives_way_to_the_window_in_its_place(qtbot) -> None:
    from PySide6.QtWidgets import QApplication

    from tests.qt.qtkit import assert_shows, engine_json

    frame = qt_app.show_frame(QApplication.instance(), "the demo store")
    frame.setGeometry(40, 50, 1100, 700)
    qtbot.waitExposed(frame)
    where = frame.geometry()
    win = qt_app.start_window(None, None, frame=frame)
    qtbot.addWidget(win)
    assert win.geometry() == where and not frame.isVisible() and win.isVisible()
    assert win.status_label.text() == "Opening the demo store…"
    qtbot.waitUntil(lambda: win.vm.trace is not None and not win.vm.busy, timeout=30_000)
    win.vm.jobs.wait_idle(60)
    assert_shows(win, engine_json(win))
    win.vm.jobs.cancel_all()


def test_full_collections_wait_from_the_launch_until_the_first_results_have_shown(
        qtbot, monkeypatch) -> None:
    """The launch holds full garbage collections (they walked every module the window imports,
    about three times, before the first results); the hold ends once the results have been
    on screen for the window's rest, and ending it twice changes nothing."""
    import gc

    from PySide6.QtWidgets import QApplication

    from inspector.core import batch_gc
    from inspector.qt import jobs

    monkeypatch.setattr(jobs, "GC_QUIET_MS", 50)
    depth = batch_gc._State.depth
    release = qt_app.hold_collections(QApplication.instance())
    assert batch_gc._State.depth == depth + 1 and gc.get_threshold()[2] == batch_gc.OFF
    win = qt_app.start_window(None, None)
    qtbot.addWidget(win)
    shown_when_released = []

    def spied() -> None:
        t = win.vm.trace  # the demo's first question is a scoped miss: no final rows
        shown_when_released.append(t is not None and any(st.rows for st in t.stages))
        release()

    qt_app.release_after_results(win, spied)
    assert batch_gc._State.depth == depth + 1  # the store opens, asks, answers: still held
    qtbot.waitUntil(lambda: batch_gc._State.depth == depth, timeout=60_000)
    assert shown_when_released == [True]
    release()
    assert batch_gc._State.depth == depth
    if depth == 0:
        assert gc.get_threshold()[2] != batch_gc.OFF  # CPython's schedule is back
    win.vm.jobs.cancel_all()


_PLOTS_AFTER_RESULTS = """
import json, os, sys, time
import inspector.qt.app as app_module
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget
original = app_module._application
seen = {}
def results_window():
    for w in QApplication.topLevelWidgets():
        t = getattr(getattr(w, "vm", None), "trace", None)
        if t is not None and any(st.rows for st in t.stages):
            return w
    return None
def plots_of(win):  # the plots if built, without building them
    return (win.scatter_box.plot, win.bump_box.plot) if win.plots_built else None
class ResultsPainted(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and "at" not in seen and isinstance(obj, QWidget):
            win = results_window()
            if win is not None and win.stages.isAncestorOf(obj):
                seen.update(at=time.monotonic(), pyqtgraph="pyqtgraph" in sys.modules,
                            built=plots_of(win) is not None)
                QTimer.singleShot(0, lambda: wait_for_plots(win))
        return False
def wait_for_plots(win):
    plots = plots_of(win)
    if plots is None:
        QTimer.singleShot(5, lambda: wait_for_plots(win))
        return
    from inspector.qt.pipeline.plot_box import plotted_stage
    from inspector.qt.pipeline.plots import stage_points
    scatter, bump = plots
    vm = win.vm
    stage = plotted_stage(vm.trace, vm.driven, vm.question.expect)
    want = {k: list(x) for k, (x, _, _) in stage_points(vm.trace, stage).items()}
    got = {k: list(g.getData()[0]) for k, g in scatter.groups.items()}
    print(json.dumps({**seen, "after": time.monotonic() - seen["at"], "stage": stage.name,
                      "scatter_stage": scatter.stage, "same_points": got == want,
                      "points": sum(map(len, want.values())),
                      "bump_dots": len(bump.dots.data), "shown": scatter.isVisible()
                      and bump.isVisible(), "pending": win.plots_pending}), flush=True)
    os._exit(0)
def application():
    app = original()
    app._seen = ResultsPainted(app)
    app.installEventFilter(app._seen)
    return app
app_module._application = application
sys.argv = ["inspector"]
from inspector.__main__ import main
main()
"""


def test_pyqtgraph_and_the_plots_come_after_the_first_results_are_painted(tmp_path) -> None:
    """`inspector` paints its first results with no pyqtgraph imported (~0.1 s of the launch
    on the main thread, and the two plots' build beside it): the plots' boxes hold stand-ins
    until then, and the plots are built on the turns after, showing the engine's numbers for
    the plotted stage."""
    env = {**_env(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "INSPECTOR_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", _PLOTS_AFTER_RESULTS], env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-800:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["pyqtgraph"] is False, "pyqtgraph was imported before the first results"
    assert got["built"] is False, "the plots were built before the first results"
    assert got["after"] < 5.0, got  # then at once (the turn after that paint)
    assert got["scatter_stage"] == got["stage"] and got["same_points"] and got["points"] > 0
    assert got["bump_dots"] > 0 and got["shown"] and not got["pending"], got
