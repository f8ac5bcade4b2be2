"""The real systems' fixtures (../shared/fixtures beside the checkout), copied before use."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

SHARED = Path(os.environ.get("INSPECTOR_SHARED",
                             Path(__file__).resolve().parents[4].parent / "shared"))


def fixture_copy(name: str, dest: Path) -> Path:
    """A writable copy of shared/fixtures/NAME in dest (the original is never opened)."""
    src = SHARED / "fixtures" / name
    if not src.is_dir():
        raise FileNotFoundError(f"fixture {src} is missing: the tests need ../shared beside "
                                f"the checkout (or INSPECTOR_SHARED)")
    out = dest / name
    shutil.copytree(src, out)
    for p in [out, *out.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return out
