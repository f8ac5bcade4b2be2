"""The command line: headless commands over the same engine as the window.

`main` parses and dispatches (cli.main); cli.options turns arguments into engine objects for
every command; cli.answers holds query (with --export) and run-trec, cli.tuning
sweep/report/check, cli.stores versions/diff-versions, cli.serve the MCP server."""

from inspector.cli.main import main

__all__ = ["main"]
