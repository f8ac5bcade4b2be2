"""The command line as a test calls it: in-process, its JSON output parsed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.cli.main import main


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """`inspector ARGV` must exit 0; what it printed, read as JSON."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)
