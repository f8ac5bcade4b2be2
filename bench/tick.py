"""Measure how long one slider tick takes to re-rank and repaint the whole window.

Run:  QT_QPA_PLATFORM=offscreen .venv/bin/python bench/tick.py [--ticks 120] [--json]
(`scripts/dev bench --only tick` runs it in a fresh process and collects the JSON.)

Two pools: ~50 candidates (importance-blend, limit 10, cap 50) and 1,000 candidates
(memory-plugin, limit 50, no cap, over-fetch 20). A tick is: the slider's setValue (which
derives every stage from the cached pool and updates tables, funnel, banner, plots and the
detail pane), then processing events until the window is painted. "full repaint" also forces
every widget to repaint synchronously, the worst case. Not a test: it asserts nothing.
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


def _numbers(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return {"median_ms": statistics.median(ms), "p95_ms": p95, "max_ms": ms[-1]}


def _stats(samples: list[float]) -> str:
    n = _numbers(samples)
    return (f"median {n['median_ms']:6.2f} ms   p95 {n['p95_ms']:6.2f} ms   "
            f"max {n['max_ms']:6.2f} ms")


def _ticks(app, win, key: str, values: list[float], full: bool) -> list[float]:
    out = []
    slider = win.sliders.sliders[key]
    for v in values:
        t0 = time.perf_counter()
        slider.setValue(v)
        app.processEvents()  # runs the coalescing timer, the re-rank and the paint
        if full:
            win.repaint()
        out.append(time.perf_counter() - t0)
        if abs(getattr(win.vm.params, key) - round(v, 2)) > 1e-9:
            print(f"  (tick {v} not applied within the measured turn)", file=sys.stderr)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=120)
    ap.add_argument("--size", default="1600x1000")
    ap.add_argument("--json", action="store_true", help="one JSON list on stdout")
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
        for full in (False, True):
            samples = _ticks(app, win, "blend", blends, full)
            label = "full repaint" if full else "events only "
            say(f"{name} (pool {size}, raw {raw}) blend ticks, {label}: {_stats(samples)}")
            rows.append({"bench": "tick", "pool": size, "slider": "blend",
                         "repaint": label.strip(), **_numbers(samples),
                         "target": "p95 < 16 ms at 1,000"})
        top = 20.0 if preset == "memory-plugin" else 5.0
        ofs = [round(1 + (i % 40) * (top - 1) / 39, 1) for i in range(a.ticks)]
        for full in (False, True):
            samples = _ticks(app, win, "overfetch", ofs, full)
            label = "full repaint" if full else "events only "
            say(f"{name} (pool {size}) over-fetch ticks, {label}: {_stats(samples)}")
            rows.append({"bench": "tick", "pool": size, "slider": "overfetch",
                         "repaint": label.strip(), **_numbers(samples),
                         "target": "p95 < 16 ms at 1,000"})
    win.close()
    if a.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
