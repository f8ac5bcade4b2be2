"""Commands that touch no store never import lancedb (issue 22: `import lancedb` is most of a
command's start-up): each runs in a fresh process, which reports the modules it loaded."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import contextlib, io, sys
from inspector.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(code, sorted(m for m in sys.modules if m.split(".")[0] in ("lancedb", "lance")))
"""


@pytest.mark.parametrize("command", [["presets"], ["pipeline", "show", "memory-lancedb-pro"],
                                     ["pipeline", "list"], ["--help"], ["query", "--help"]])
def test_a_command_without_a_store_imports_no_lancedb(command: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, *command], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    code, _, loaded = done.stdout.strip().splitlines()[-1].partition(" ")
    assert code in ("0", "None")
    assert loaded == "[]", f"inspector {' '.join(command)} imported {loaded}"
