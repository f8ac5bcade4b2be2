"""The command line: headless commands over the same engine as the window.

`main` parses and dispatches (cli.main); cli.options turns arguments into engine objects for
every command; cli.tuning holds sweep/report/check, cli.stores versions/diff-versions."""

from inspector.cli.main import main

__all__ = ["main"]
