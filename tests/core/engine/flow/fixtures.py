"""The real systems' fixtures (tests/data/fixtures, see its README), copied before use."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[3] / "data" / "fixtures"


def fixture_file(name: str, file: str) -> Path:
    """A recorded file of fixture NAME (its cases or results), to read; a store is opened only
    through fixture_copy."""
    path = FIXTURES / name / file
    if not path.is_file():
        raise FileNotFoundError(f"fixture file {path} is missing")
    return path


def fixture_copy(name: str, dest: Path) -> Path:
    """A writable copy of tests/data/fixtures/NAME in dest (the committed one is never opened)."""
    src = FIXTURES / name
    if not src.is_dir():
        raise FileNotFoundError(f"fixture {src} is missing")
    out = dest / name
    shutil.copytree(src, out)
    for p in [out, *out.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return out
