"""`python -m inspector` and the `inspector` command. Without arguments it is the window on
the demo store, whose frame paints before the command line's parser and the engine are
imported (importing inspector.cli alone took ~0.6 s before anything showed); every other use
runs the command line (inspector.cli)."""

from __future__ import annotations

import sys


def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        from inspector.qt.app import launch

        try:
            return launch(None, None)
        except KeyboardInterrupt:
            return 130
    from inspector.cli import main as run

    return run(argv)


if __name__ == "__main__":
    raise SystemExit(main())
