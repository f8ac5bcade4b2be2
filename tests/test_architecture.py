"""The layout's rules hold: cli above qt above core; inside core evidence above analysis above
engine above stores; no Qt in core; no import circles anywhere (import-linter contracts in
pyproject.toml). A broken contract fails the suite, so CI enforces the architecture."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    r = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_no_package_folder_is_a_warehouse() -> None:
    """A newcomer finds where a change goes from the tree: no folder of more than 14 modules."""
    for folder in (ROOT / "inspector").rglob("*"):
        if folder.is_dir() and folder.name != "__pycache__":
            modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
            assert len(modules) <= 14, f"{folder} holds {len(modules)} modules"


def test_the_wheel_lists_every_package_and_nothing_else() -> None:
    """pyproject.toml names the packages the wheel (and an editable install) holds: a package
    folder missing from the list ships nothing of it, a listed folder that is gone fails the
    install (as `engine/ann` did once the fixed engine went)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"]) - {"inspector.resources"}
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "inspector").rglob("__init__.py")}
    assert listed == found, (sorted(listed - found), sorted(found - listed))
