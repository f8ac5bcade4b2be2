"""Measure how long one slider tick takes to re-rank and repaint the whole window.

Run:  QT_QPA_PLATFORM=offscreen .venv/bin/python bench/tick.py [--ticks 120] [--json]
(`scripts/dev bench --only tick` runs it in a fresh process and collects the JSON.)

Under a real X server (what issue 13 targets):
  xvfb-run -s "-screen 0 1920x1080x24" env QT_QPA_PLATFORM=xcb .venv/bin/python bench/tick.py \
      --size 1600x1000

Two pools: ~50 candidates (importance-blend, limit 10, cap 50) and up to 1,000 candidates
(memory-plugin, limit 50, over-fetch 20). A tick is: the slider's setValue (the question's
set changes; the cached fetches are re-ranked in a job) until the new answer is in the
tables, counters, banner and detail pane, then processing events until the window is
painted. "full repaint" also forces
every widget to repaint synchronously, the worst case. During a drag the plots wait until
the slider rests (MainWindow.flush_plots, PLOT_SETTLE_MS); "rest redraw" times that catch-up
(plots brought to the current trace and painted), once every 10 ticks, outside the ticks.
With --pipeline-fixture DIR (tests/data/fixtures/memory-lancedb-pro, which `scripts/dev bench`
passes; its store is copied before it is opened), the window's pipeline view of memory-lancedb-pro
(13 stages on its hybrid route) is ticked too: a tick is the slider's setValue until the
pipeline's new answer is on screen (it re-ranks the cached legs in a job, as the window does).
Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("INSPECTOR_DATA_DIR", tempfile.mkdtemp(prefix="inspector-measure-"))

import inspector.qt  # noqa: E402,F401 - the refcount guard before Qt calls


def _numbers(samples: list[float], cpu: list[float] | None = None) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    out = {"median_ms": statistics.median(ms), "p95_ms": p95, "max_ms": ms[-1]}
    if cpu:
        c = sorted(s * 1000 for s in cpu)
        out.update(cpu_median_ms=statistics.median(c),
                   cpu_p95_ms=c[min(len(c) - 1, int(round(0.95 * (len(c) - 1))))])
    return out


def _stats(samples: list[float], cpu: list[float] | None = None) -> str:
    n = _numbers(samples, cpu)
    text = (f"median {n['median_ms']:6.2f} ms   p95 {n['p95_ms']:6.2f} ms   "
            f"max {n['max_ms']:6.2f} ms")
    if cpu:  # this process's CPU time: steadier than wall time on a shared machine
        text += f"   (cpu median {n['cpu_median_ms']:5.2f}, p95 {n['cpu_p95_ms']:5.2f})"
    return text


def _tick(app, win, slider, v: float) -> None:
    """The slider's setValue until the new answer is on screen (a re-rank of the cached
    fetches in a job, as the window does it)."""
    from PySide6.QtCore import QEventLoop

    old = win.vm.trace
    t0 = time.perf_counter()
    slider.setValue(v)
    win.sliders.flush()
    while win.vm.trace is old and time.perf_counter() - t0 < 30:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)
    app.processEvents()  # the new answer painted


REPEAT_S = 0.040  # X's default key repeat: 25 a second


def _key_ticks(app, win, key: str, n: int,
               cpu: list[float] | None = None) -> list[float]:
    """n arrow keys pressed on the focused slider of `key` (Right until its maximum, then
    Left), one every REPEAT_S at most, each timed until the frame showing its answer is
    painted: the key event is delivered, the slider's throttle emits, the cached fetches are
    re-ranked in a job, the answer is put into the widgets, and an update request (the paint
    and flush) is processed after that. The event loop runs as the application's does
    (exec: asleep between events); the end is taken by a zero timer, which fires once the
    paint has returned."""
    from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QSlider

    slider = win.sliders.sliders[key]
    inner = slider.findChild(QSlider)
    inner.setFocus()
    out: list[float] = []
    loop = QEventLoop()
    state = {"t0": 0.0, "c0": 0.0, "old": None, "arrow": Qt.Key.Key_Right, "ending": False}

    def press() -> None:
        if slider.value() >= slider.maximum():
            state["arrow"] = Qt.Key.Key_Left
        elif slider.value() <= slider.minimum():
            state["arrow"] = Qt.Key.Key_Right
        state.update(old=win.vm.trace, ending=False, c0=time.process_time(),
                     t0=time.perf_counter())
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            app.sendEvent(inner, QKeyEvent(kind, state["arrow"],
                                           Qt.KeyboardModifier.NoModifier))

    def painted() -> None:
        out.append(time.perf_counter() - state["t0"])
        if cpu is not None:
            cpu.append(time.process_time() - state["c0"])
        if len(out) >= n:
            loop.quit()
            return
        wait = state["t0"] + REPEAT_S - time.perf_counter()  # a held key repeats at 25 Hz
        QTimer.singleShot(max(0, int(wait * 1000)), press)

    class Watch(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.UpdateRequest and not state["ending"] and \
                    win.vm.trace is not state["old"]:
                state["ending"] = True  # this request paints the answer: time it once done
                QTimer.singleShot(0, painted)
            return False

    watch = Watch()
    win.installEventFilter(watch)
    if win.windowHandle() is not None:
        win.windowHandle().installEventFilter(watch)
    guard = QTimer(singleShot=True, interval=int(60_000 + n * 1000))
    guard.timeout.connect(loop.quit)
    guard.start()
    QTimer.singleShot(0, press)
    loop.exec()
    guard.stop()
    win.removeEventFilter(watch)
    if win.windowHandle() is not None:
        win.windowHandle().removeEventFilter(watch)
    return out


def _ticks(app, win, key: str, values: list[float], full: bool,
           rests: list[float] | None = None, cpu: list[float] | None = None) -> list[float]:
    out = []
    slider = win.sliders.sliders[key]
    for n, v in enumerate(values):
        if rests is not None and n % 10 == 9:
            t0 = time.perf_counter()
            win.flush_plots()
            app.processEvents()
            rests.append(time.perf_counter() - t0)
        c0, t0 = time.process_time(), time.perf_counter()
        _tick(app, win, slider, v)
        if full:
            win.repaint()
        out.append(time.perf_counter() - t0)
        if cpu is not None:
            cpu.append(time.process_time() - c0)
    return out


def _engine(win, key: str, values: list[float]) -> float:
    """The re-rank alone, on this thread (the rest of a tick is the window's)."""
    from inspector.qt.viewmodel import rerank

    vm = win.vm
    engine = []
    memo = getattr(getattr(vm.live, "runs", None), "_memo", None)
    for v in values[:20]:
        if memo is not None:  # the ticks ran these values: timed, not looked up
            memo.clear()
        t0 = time.perf_counter()
        rerank(vm.live, {**vm.question.set, key: v})
        engine.append(time.perf_counter() - t0)
    return statistics.median(engine) * 1000


def _flow_ticks(app, win, fixture: str, ticks: int, size: str) -> list[dict]:
    """The sliders of memory-lancedb-pro (13 stages) over a copy of its fixture."""
    import shutil
    from pathlib import Path

    from inspector.qt.app import wait_idle

    store = Path(tempfile.mkdtemp(prefix="inspector-measure-fx-")) / "store"
    shutil.copytree(Path(fixture) / "store", store)
    vm = win.vm
    vm.put(preset="memory-lancedb-pro", text="postgres connection pool size",
           vector=json.loads((Path(fixture) / "q_pg.json").read_text()),
           now=1796113038032.0, set={}, scopes=None, expect=[])
    vm.open_store(str(store), "memories", then="keep")
    wait_idle(vm)
    stages = len(vm.trace.stages)
    pool = sum(len(st.rows) for st in vm.trace.stages if st.role == "fetch")
    rows = []
    for key, values in (("fused.vector_weight", [0.3 + 0.01 * (i % 40) for i in range(ticks)]),
                        ("decay_boost.half_life_days", [10.0 + i % 40 for i in range(ticks)])):
        if key not in win.sliders.sliders:
            win.sliders.chosen.append(key)
            win.sliders.set_params(win.sliders.params, win.sliders.chosen, vm.current)
        cpu: list[float] = []
        samples = _ticks(app, win, key, values, False, None, cpu)
        engine = _engine(win, key, values)
        rows.append({"bench": "tick", "pool": pool, "slider": key, "size": size,
                     "platform": app.platformName(), "repaint": "events only",
                     "stages": stages, "engine_median_ms": engine,
                     **_numbers(samples, cpu),
                     "target": "p95 <= 16 ms on a pipeline of stages"})
        cpu = []
        samples = _key_ticks(app, win, key, ticks, cpu)
        rows.append({"bench": "tick", "pool": pool, "slider": key, "size": size,
                     "platform": app.platformName(), "repaint": "key to frame",
                     "stages": stages, "engine_median_ms": engine,
                     **_numbers(samples, cpu),
                     "target": "p95 <= 16 ms on a pipeline of stages"})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=120)
    ap.add_argument("--size", default="1600x1000")
    ap.add_argument("--json", action="store_true", help="one JSON list on stdout")
    ap.add_argument("--pipeline-fixture",
                    help="tests/data/fixtures/memory-lancedb-pro (its store is copied first)")
    a = ap.parse_args()
    rows: list[dict] = []
    say = (lambda *x: None) if a.json else print
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from inspector.qt.app import configure_app, wait_idle
    from inspector.qt.window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    configure_app(app)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                      tempfile.mkdtemp(prefix="inspector-measure-settings-"))
    win = MainWindow(restore=False)
    win.resize(*(int(x) for x in a.size.split("x")))
    win.show()
    vm = win.vm
    vm.open_store(None)
    wait_idle(vm)
    win.ensure_plots()  # built a turn after the first results: never inside a timed tick
    setups = {
        "pool ~50 ": ("importance-blend", {"min_score.min": 0.0}, 10),
        "pool 1000": ("memory-plugin", {"min_score.min": 0.0, "fetch.overfetch": 20.0}, 50),
    }
    blends = [round((i % 50) / 49, 2) for i in range(a.ticks)]
    say(f"window {a.size}, {a.ticks} ticks per row, Qt platform {app.platformName()}")
    for name, (preset, sets, limit) in setups.items():
        vm.put(preset=preset, set=dict(sets), limit=limit, scopes=None, expect=[],
               text="which editor theme does the user prefer", vector=None, vector_of=None)
        wait_idle(vm)
        size = sum(len(st.rows) for st in vm.trace.stages if st.role == "fetch")
        _ticks(app, win, "blend.weight", blends[:10], full=False)  # warm-up
        top = 20.0 if preset == "memory-plugin" else 5.0
        ofs = [round(1 + (i % 40) * (top - 1) / 39, 1) for i in range(a.ticks)]
        for key, values in (("blend.weight", blends), ("fetch.overfetch", ofs)):
            rests: list[float] = []
            for full in (False, True):
                cpu: list[float] = []
                samples = _ticks(app, win, key, values, full, rests if not full else None, cpu)
                label = "full repaint" if full else "events only "
                say(f"{name} (pool {size}) {key} ticks, {label}: {_stats(samples, cpu)}")
                rows.append({"bench": "tick", "pool": size, "slider": key, "size": a.size,
                             "platform": app.platformName(), "repaint": label.strip(),
                             **_numbers(samples, cpu), "target": "p95 <= 16 ms at 1,000"})
            cpu = []
            samples = _key_ticks(app, win, key, a.ticks, cpu)
            say(f"{name} (pool {size}) {key} arrow key to painted frame: {_stats(samples, cpu)}")
            rows.append({"bench": "tick", "pool": size, "slider": key, "size": a.size,
                         "platform": app.platformName(), "repaint": "key to frame",
                         **_numbers(samples, cpu), "target": "p95 <= 16 ms at 1,000"})
            if rests:
                say(f"{name} (pool {size}) {key} rest redraw (plots catch up): {_stats(rests)}")
                rows.append({"bench": "tick", "pool": size, "slider": key, "size": a.size,
                             "platform": app.platformName(), "repaint": "rest redraw",
                             **_numbers(rests), "target": "after the drag, not per tick"})
    if a.pipeline_fixture:
        flow = _flow_ticks(app, win, a.pipeline_fixture, a.ticks, a.size)
        for r in flow:
            say(f"memory-lancedb-pro ({r['stages']} stages, pool {r['pool']}) {r['slider']} "
                f"({r['repaint']}): p95 {r['p95_ms']:.2f} ms, median {r['median_ms']:.2f} ms "
                f"(the re-rank alone {r['engine_median_ms']:.2f} ms)")
        rows += flow
    win.close()
    if a.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
