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

As the app is installed: `scripts/dev app`, pipx and the wheel install the app's own
requirements, not the test extras this bench runs among (pandas, pytest, ...). A launch is
timed as such an install runs it: BENCH_NOT_INSTALLED names the top-level modules of every
distribution here outside the app's requirements (`not_installed`), and the launch refuses
them as an interpreter without them does (ModuleNotFoundError). pandas is the one that
matters: with pandas importable, `import lancedb` imports it (pyarrow.dataset's module set-up
asks pyarrow's pandas shim whether it can), and the window never uses it. `--all-installed`
launches with every installed module importable.
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
APP = "memory-store-inspector"


def not_installed(app: str = APP) -> list[str]:
    """The top-level modules of the installed distributions that the app's own requirements
    (without extras, recursively) do not bring: what an install of the app alone lacks."""
    import importlib.metadata as md

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    if canonicalize_name(app) not in {canonicalize_name(d.metadata["Name"])
                                      for d in md.distributions()}:
        raise RuntimeError(f"{app} is not installed here: `pip install -e .` first")
    needed: set[str] = set()
    todo = [app]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in needed:
            continue
        needed.add(name)
        try:
            reqs = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for text in reqs:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return sorted(top for top, dists in md.packages_distributions().items()
                  if not top.startswith("_") and top != APP
                  and all(canonicalize_name(d) not in needed for d in dists))


class _Refused:
    """A meta path finder that answers the named top-level modules as not installed."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def refuse(names: set[str]) -> None:
    """From now on this interpreter imports none of `names`, as if they were not installed."""
    if names:
        sys.meta_path.insert(0, _Refused(names))  # type: ignore[arg-type]


def _launch() -> int:
    """`inspector` as its console script runs it, watched from the QApplication: the first
    paint of any window (the frame painted before the heavy imports counts), which heavy
    modules were loaded by then, and the first results on screen (polled every 5 ms)."""
    t0 = float(os.environ["BENCH_T0"])
    refuse({n for n in os.environ.get("BENCH_NOT_INSTALLED", "").split(",") if n})
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


def one_launch(env: dict[str, str]) -> dict[str, float]:
    """One launch in a fresh process with `env`: PAINT, LANCEDB_AT_PAINT and FIRST as it
    printed them (seconds)."""
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


def _runs(n: int, as_json: bool, all_installed: bool = False) -> int:
    env = dict(os.environ)
    env["BENCH_NOT_INSTALLED"] = "" if all_installed else ",".join(not_installed())
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env.setdefault("INSPECTOR_DATA_DIR", tempfile.mkdtemp(prefix="bench-start-"))
    env["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="bench-start-settings-")  # not the user's
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode kept, as any user's launches keep it
    one_launch(env)  # the very first launch writes the demo store: not a cold start
    samples = [one_launch(env) for _ in range(n)]
    paint = statistics.median(s.get("PAINT", float("nan")) for s in samples)
    first = statistics.median(s["FIRST"] for s in samples)
    early = sum(1 for s in samples if s.get("LANCEDB_AT_PAINT") == 0)
    rows = [{"bench": "startup", "case": "first paint", "median_s": paint,
             "runs": n, "target": "<= 0.6 s"},
            {"bench": "startup", "case": "first results", "median_s": first,
             "runs": n, "target": "<= 1.5 s"}]
    if as_json:
        print(json.dumps(rows))
    else:
        how = "every installed module importable" if all_installed else \
            "as the app alone is installed"
        print(f"{n} launches ({how}), Qt platform {env['QT_QPA_PLATFORM']}: first paint median "
              f"{paint:.3f} s (painted before lancedb was imported in {early} of {n}), "
              f"first results median {first:.3f} s")
    return 0


def main() -> int:
    if "BENCH_T0" in os.environ:
        return _launch()
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="one JSON list on stdout")
    ap.add_argument("--all-installed", action="store_true",
                    help="let the launches import the test extras too (pandas, ...)")
    a = ap.parse_args()
    return _runs(a.runs, a.json, a.all_installed)


if __name__ == "__main__":
    sys.exit(main())
