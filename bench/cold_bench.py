"""Issue 22 item 4: what a fresh process pays before it does anything.

`no_lancedb`: `inspector presets`, `inspector pipeline show memory-lancedb-pro` and `inspector
--help` in fresh processes, whether each imported lancedb, and their time against a fresh
process that only runs `import lancedb` (alternating). tests/cli/test_no_lancedb.py fails if
one of them imports it.
`lazy_client`: `import lancedb` in a fresh process with inspector's lazy namespace client
(inspector/_lazy_client.py, loaded by file so nothing else of inspector is imported) against
plain `import lancedb`, alternating.
`paint_peer`: the first paint of a bare Qt main window holding a pyqtgraph plot, the peer of the
window's own first paint (`startup`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from registry import register, row

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COMMANDS = (["presets"], ["pipeline", "show", "memory-lancedb-pro"], ["--help"])

_COMMAND = """
import contextlib, io, sys
from inspector.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(int("lancedb" in sys.modules))
"""
_LAZY_FILE = str(ROOT / "inspector" / "_lazy_client.py")
_LAZY = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("lazy", {_LAZY_FILE!r})
lazy = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lazy)
lazy.defer()
import lancedb
"""
_PEER = """
import os, sys, time
t0 = float(os.environ["BENCH_T0"])
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow
import pyqtgraph as pg
app = QApplication(sys.argv[:1])
win = QMainWindow()
win.setCentralWidget(pg.PlotWidget())
class Paint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            print(f"PAINT {time.time() - t0:.4f}", flush=True)
            os._exit(0)
        return False
f = Paint(win)
app.installEventFilter(f)  # the first paint of any of its widgets
win.resize(1366, 768)
win.show()
app.exec()
"""


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env or _env(), check=True, timeout=120)
    return time.perf_counter() - t, done.stdout.strip()


def bench_no_lancedb(quick: bool) -> list[dict[str, Any]]:
    runs = 2 if quick else 5
    out = []
    for cmd in COMMANDS:
        mine, peer, imported = [], [], set()
        for _ in range(runs):
            t, said = _run(_COMMAND, *cmd)
            mine.append(t)
            imported.add(said.splitlines()[-1] == "1")
            peer.append(_run("import lancedb")[0])
        a, b = float(np.median(mine)), float(np.median(peer))
        name = "inspector " + " ".join(cmd)
        out.append(row("no_lancedb", f"`{name}`: {a:.2f} s, imports lancedb: "
                                     f"{'yes' if any(imported) else 'no'}; a process importing "
                                     f"lancedb alone {b:.2f} s ({a / b:.2f}x)",
                       "never imports lancedb", not any(imported), command=name,
                       median_s=a, import_lancedb_median_s=b, ratio=a / b, runs=runs))
    return out


def bench_lazy_client(quick: bool) -> list[dict[str, Any]]:
    runs = 3 if quick else 7
    lazy, plain = [], []
    for _ in range(runs):
        lazy.append(_run(_LAZY)[0])
        plain.append(_run("import lancedb")[0])
    a, b = float(np.median(lazy)), float(np.median(plain))
    return [row("lazy_client", f"`import lancedb` with the lazy namespace client {a:.2f} s, "
                               f"without {b:.2f} s ({a / b:.2f}x)", "", None,
                lazy_median_s=a, plain_median_s=b, ratio=a / b, runs=runs)]


def peer_paint(runs: int) -> float:
    """Median first paint of the bare Qt + pyqtgraph window, fresh processes."""
    got = []
    for _ in range(runs):
        env = _env(QT_QPA_PLATFORM="offscreen", BENCH_T0=repr(time.time()))
        _, said = _run(_PEER, env=env)
        got.append(float(said.split()[-1]))
    return float(np.median(got))


register("no_lancedb", bench_no_lancedb, item="22.4",
         what="commands that touch no store, in fresh processes: lancedb never imported")
register("lazy_client", bench_lazy_client, item="22.4",
         what="the lazy namespace client's effect on `import lancedb`, fresh processes")
