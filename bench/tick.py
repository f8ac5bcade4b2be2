"""Measure how long one slider tick takes to re-rank and repaint the whole window.

Run:  QT_QPA_PLATFORM=offscreen .venv/bin/python bench/tick.py [--ticks 120] [--json]
(`scripts/dev bench --only tick` runs it in a fresh process and collects the JSON.)

Under a real X server (what issue 13 targets):
  xvfb-run -s "-screen 0 1920x1080x24" env QT_QPA_PLATFORM=xcb .venv/bin/python bench/tick.py \
      --size 1600x1000

Two pools: ~50 candidates (importance-blend, limit 10, cap 50) and 1,000 candidates
(memory-plugin, limit 50, no cap, over-fetch 20). A tick is: the slider's setValue (which
derives every stage from the cached pool and updates tables, funnel, banner, plots and the
detail pane), then processing events until the window is painted. "full repaint" also forces
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


def _ticks(app, win, key: str, values: list[float], full: bool,
           rests: list[float] | None = None, cpu: list[float] | None = None) -> list[float]:
    out = []
    slider = win.sliders.sliders[key]
    for n, v in enumerate(values):
        if rests is not None and n % 10 == 9 and hasattr(win, "flush_plots"):
            t0 = time.perf_counter()
            win.flush_plots()
            app.processEvents()
            rests.append(time.perf_counter() - t0)
        c0, t0 = time.process_time(), time.perf_counter()
        slider.setValue(v)
        app.processEvents()  # runs the coalescing timer, the re-rank and the paint
        if full:
            win.repaint()
        out.append(time.perf_counter() - t0)
        if cpu is not None:
            cpu.append(time.process_time() - c0)
        if abs(getattr(win.vm.params, key) - round(v, 2)) > 1e-9:
            print(f"  (tick {v} not applied within the measured turn)", file=sys.stderr)
    return out


def _flow_ticks(app, win, fixture: str, ticks: int, size: str) -> list[dict]:
    """The pipeline view's sliders on memory-lancedb-pro over a copy of its fixture."""
    import shutil
    from pathlib import Path

    from PySide6.QtCore import QEventLoop

    from inspector.qt.app import wait_idle

    store = Path(tempfile.mkdtemp(prefix="inspector-measure-fx-")) / "store"
    shutil.copytree(Path(fixture) / "store", store)
    vm, s = win.vm, win.flow.session
    vm.open_store(str(store), "memories", then="none")
    wait_idle(vm)
    win.query_bar.text.setText("postgres connection pool size")
    s.vector = json.loads((Path(fixture) / "q_pg.json").read_text())
    s.now_ms = 1796113038032.0
    win.flow.enter("memory-lancedb-pro")
    wait_idle(vm)
    stages = len(s.trace.stages)
    pool = sum(len(st.rows) for st in s.trace.stages if st.role == "fetch")
    rows = []
    for key, values in (("fused.vector_weight", [0.3 + 0.01 * (i % 40) for i in range(ticks)]),
                        ("decay_boost.half_life_days", [10.0 + i % 40 for i in range(ticks)])):
        slider = win.flow.sliders.sliders[key]
        samples, cpu = [], []
        for v in values:
            old = s.trace
            c0, t0 = time.process_time(), time.perf_counter()
            slider.setValue(v)
            while s.trace is old and time.perf_counter() - t0 < 30:
                app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)
            app.processEvents()  # the new answer painted
            samples.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        from inspector.qt.flow.session import answer_with

        engine = []  # the re-rank alone, on this thread: the rest is the window's
        for v in values[:20]:
            t0 = time.perf_counter()
            answer_with(s.live, {**s.sets, key: v})
            engine.append(time.perf_counter() - t0)
        rows.append({"bench": "tick", "pool": pool, "slider": key, "size": size,
                     "platform": app.platformName(), "repaint": "events only",
                     "stages": stages, "engine_median_ms": statistics.median(engine) * 1000,
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
    setups = {
        "pool ~50 ": ("importance-blend", {"limit": 10, "min_score": 0.0}),
        "pool 1000": ("memory-plugin", {"limit": 50, "min_score": 0.0, "overfetch": 20.0}),
    }
    blends = [round((i % 50) / 49, 2) for i in range(a.ticks)]
    say(f"window {a.size}, {a.ticks} ticks per row, Qt platform {app.platformName()}")
    for name, (preset, given) in setups.items():
        vm.set_query("which editor theme does the user prefer")
        vm.preset, vm.given = preset, dict(given)
        vm._rebuild_params()
        vm.run()
        wait_idle(vm)
        size, raw = vm.trace.pool.size, vm.trace.counters["rawCandidates"]
        _ticks(app, win, "blend", blends[:10], full=False)  # warm-up
        top = 20.0 if preset == "memory-plugin" else 5.0
        ofs = [round(1 + (i % 40) * (top - 1) / 39, 1) for i in range(a.ticks)]
        for key, values in (("blend", blends), ("overfetch", ofs)):
            rests: list[float] = []
            for full in (False, True):
                cpu: list[float] = []
                samples = _ticks(app, win, key, values, full, rests if not full else None, cpu)
                label = "full repaint" if full else "events only "
                say(f"{name} (pool {size}, raw {raw}) {key} ticks, {label}: "
                    f"{_stats(samples, cpu)}")
                rows.append({"bench": "tick", "pool": size, "slider": key, "size": a.size,
                             "platform": app.platformName(), "repaint": label.strip(),
                             **_numbers(samples, cpu), "target": "p95 <= 16 ms at 1,000"})
            if rests:
                say(f"{name} (pool {size}) {key} rest redraw (plots catch up): {_stats(rests)}")
                rows.append({"bench": "tick", "pool": size, "slider": key, "size": a.size,
                             "platform": app.platformName(), "repaint": "rest redraw",
                             **_numbers(rests), "target": "after the drag, not per tick"})
    if a.pipeline_fixture:
        flow = _flow_ticks(app, win, a.pipeline_fixture, a.ticks, a.size)
        for r in flow:
            say(f"memory-lancedb-pro ({r['stages']} stages, pool {r['pool']}) {r['slider']}: "
                f"p95 {r['p95_ms']:.2f} ms, median {r['median_ms']:.2f} ms (the re-rank "
                f"alone {r['engine_median_ms']:.2f} ms)")
        rows += flow
    win.close()
    if a.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
