"""The wheel is the product: every folder of code and every file the app reads at run time is
declared in pyproject.toml, so a wheel built from it runs without the source tree (the CI step
`scripts/dev wheel` installs one into a fresh virtualenv and runs the README's commands)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"]


def _package_of(folder: Path) -> str:
    return ".".join(folder.relative_to(ROOT).parts)


def test_every_folder_of_modules_is_a_declared_package() -> None:
    declared = set(CONFIG["packages"])
    folders = {p.parent for p in (ROOT / "inspector").rglob("*.py")}
    missing = sorted(_package_of(f) for f in folders if _package_of(f) not in declared)
    assert not missing, f"not in pyproject's packages (left out of the wheel): {missing}"
    stale = sorted(n for n in declared - {"inspector.resources"}
                   if not (ROOT / n.replace(".", "/")).is_dir())
    assert not stale, f"declared packages with no folder: {stale}"


def test_every_package_folder_has_an_init() -> None:
    folders = {p.parent for p in (ROOT / "inspector").rglob("*.py")}
    assert all((f / "__init__.py").exists() for f in folders), \
        sorted(_package_of(f) for f in folders if not (f / "__init__.py").exists())


def test_every_resource_file_is_package_data() -> None:
    from fnmatch import fnmatch

    patterns = CONFIG["package-data"]["inspector.resources"]
    base = ROOT / CONFIG["package-dir"]["inspector.resources"]
    files = [p.relative_to(base).as_posix() for p in base.rglob("*")
             if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts]
    assert files, "resources/ holds no files"
    left_out = [f for f in files if not any(fnmatch(f, pat) for pat in patterns)]
    assert not left_out, f"resource files the wheel would not ship: {left_out}"
