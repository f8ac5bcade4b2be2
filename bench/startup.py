"""Cold start: `inspector` (no arguments) until the window is painted, and until it shows its
first results.

One launch (what bench/run.py spawns): BENCH_T0 is the parent's wall clock just before the
spawn, so interpreter start-up, imports, opening the demo store and the first query all count.
Prints `PAINT <seconds>` (first paint of the window), `LANCEDB_AT_PAINT 0|1` (whether lancedb
was already imported then: the window must not wait for it), then `FIRST <seconds>` (results
painted) and exits at once.

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


def _launch() -> int:
    t0 = float(os.environ["BENCH_T0"])
    from PySide6.QtCore import QEvent, QObject

    import inspector.qt.window as window_module
    from inspector.cli import main as cli_main

    original = window_module.MainWindow.__init__

    class FirstPaint(QObject):
        def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint and not getattr(self, "seen", False):
                self.seen = True
                print(f"PAINT {time.time() - t0:.4f}", flush=True)
                print(f"LANCEDB_AT_PAINT {int('lancedb' in sys.modules)}", flush=True)
            return False

    def init(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        original(self, *args, **kwargs)
        self._bench_paint = FirstPaint(self)
        self.installEventFilter(self._bench_paint)

        def shown() -> None:
            t = self.vm.trace
            if t is not None and len(t.stage("raw")):
                self.repaint()  # the results are on screen, not just computed
                print(f"FIRST {time.time() - t0:.4f}", flush=True)
                os._exit(0)

        self.vm.trace_changed.connect(shown)

    window_module.MainWindow.__init__ = init
    return cli_main([])


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
