"""Cold start: `inspector` (no arguments) until the window is painted, and until it shows its
first results.

One launch (what bench/run.py spawns): BENCH_T0 is the parent's wall clock just before the
spawn, so interpreter start-up, imports, opening the demo store and the first query all count.
Prints `PAINT <seconds>` (the first paint of a window: the frame the window paints before its
heavy imports), `LANCEDB_AT_PAINT 0|1` (whether lancedb was already imported then: the window
must not wait for it) and `HEAVY_AT_PAINT` (which of lancedb, pyarrow, pyqtgraph, numpy and the
engine were), then `FIRST <seconds>` (results painted) and exits at once.

Several launches: `python bench/startup.py --runs 5 [--json]` spawns itself N times in fresh
processes and prints the medians (one JSON list of rows with --json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HEAVY = ("lancedb", "pyarrow", "pyqtgraph", "numpy", "inspector.core.engine")


def _launch() -> int:
    """`inspector` as its console script runs it, watched from the QApplication: the first
    paint of any window (the frame painted before the heavy imports counts), which heavy
    modules were loaded by then, and the first results on screen (polled every 5 ms)."""
    t0 = float(os.environ["BENCH_T0"])
    import inspector.qt.app as app_module

    original = app_module._application

    def application() -> Any:
        from PySide6.QtCore import QEvent, QObject, QTimer
        from PySide6.QtWidgets import QApplication

        app = original()

        class FirstPaint(QObject):
            seen = False

            def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802
                if event.type() == QEvent.Type.Paint and not self.seen:
                    self.seen = True
                    print(f"PAINT {time.time() - t0:.4f}", flush=True)
                    print(f"LANCEDB_AT_PAINT {int('lancedb' in sys.modules)}", flush=True)
                    print("HEAVY_AT_PAINT " + ",".join(m for m in HEAVY if m in sys.modules),
                          flush=True)
                return False

        found: list[Any] = []  # the window, once built: each poll then reads one attribute

        def results() -> None:
            if not found:  # listing the top-level widgets wraps each (menus too): not per poll
                found.extend(w for w in QApplication.topLevelWidgets()
                             if getattr(w, "vm", None) is not None)
                if not found:
                    return
            w = found[0]
            t = w.vm.trace
            if t is not None and any(st.rows for st in t.stages):
                w.repaint()  # the results are on screen, not just computed
                print(f"FIRST {time.time() - t0:.4f}", flush=True)
                os._exit(0)

        app._bench_paint = FirstPaint(app)
        app.installEventFilter(app._bench_paint)
        app._bench_poll = QTimer(app, interval=5)
        app._bench_poll.timeout.connect(results)
        app._bench_poll.start()
        return app

    app_module._application = application
    sys.argv = [sys.argv[0]]
    from inspector.__main__ import main

    return main()


def _one(env: dict[str, str]) -> dict[str, float]:
    env = {**env, "BENCH_T0": repr(time.time())}
    done = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True,
                          timeout=120)
    got: dict[str, float] = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key in ("PAINT", "LANCEDB_AT_PAINT", "FIRST"):
            got[key] = float(value)
    if "FIRST" not in got:
        raise RuntimeError(f"startup run printed no FIRST line: {done.stderr[-400:]}")
    return got


def _runs(n: int, as_json: bool) -> int:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env.setdefault("INSPECTOR_DATA_DIR", tempfile.mkdtemp(prefix="bench-start-"))
    env["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="bench-start-settings-")  # not the user's
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode kept, as any user's launches keep it
    _one(env)  # the very first launch writes the demo store: not a cold start
    samples = [_one(env) for _ in range(n)]
    paint = statistics.median(s.get("PAINT", float("nan")) for s in samples)
    first = statistics.median(s["FIRST"] for s in samples)
    early = sum(1 for s in samples if s.get("LANCEDB_AT_PAINT") == 0)
    rows = [{"bench": "startup", "case": "first paint", "median_s": paint,
             "runs": n, "target": "<= 0.8 s"},
            {"bench": "startup", "case": "first results", "median_s": first,
             "runs": n, "target": "<= 2.0 s"}]
    if as_json:
        print(json.dumps(rows))
    else:
        print(f"{n} launches, Qt platform {env['QT_QPA_PLATFORM']}: first paint median "
              f"{paint:.3f} s (painted before lancedb was imported in {early} of {n}), "
              f"first results median {first:.3f} s")
    return 0


def main() -> int:
    if "BENCH_T0" in os.environ:
        return _launch()
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="one JSON list on stdout")
    a = ap.parse_args()
    return _runs(a.runs, a.json)


if __name__ == "__main__":
    sys.exit(main())
