"""Cold start: `inspector` (no arguments) until the window shows its first results.

Run by bench/run.py in a fresh process; BENCH_T0 is the parent's wall clock just before the
spawn, so interpreter start-up, imports, opening the demo store and the first query all count.
Prints one line `FIRST <seconds>` and exits at once.
"""

from __future__ import annotations

import os
import sys
import time

T0 = float(os.environ["BENCH_T0"])


def main() -> int:
    import inspector.qt.window as window_module
    from inspector.cli import main as cli_main

    original = window_module.MainWindow.__init__

    def init(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        original(self, *args, **kwargs)

        def shown() -> None:
            t = self.vm.trace
            if t is not None and len(t.stage("raw")):
                self.repaint()  # the results are on screen, not just computed
                print(f"FIRST {time.time() - T0:.4f}", flush=True)
                os._exit(0)

        self.vm.trace_changed.connect(shown)

    window_module.MainWindow.__init__ = init
    return cli_main([])


if __name__ == "__main__":
    sys.exit(main())
