"""PySide6's per-import check (does this module use PySide6?) answered from the module's file,
not through `inspect` and `linecache` (0.1-0.2 s of every launch): the same answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

from inspector.qt import _pyside

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, linecache, sys
from inspector.qt import app
app._application()
sys.path.insert(0, sys.argv[1])
import uses_qt, plain_module, pkg_without_init
from PySide6.support import feature
print(json.dumps({
    "read_by_inspect": sorted(p for p in linecache.cache if sys.argv[1] in str(p)),
    "defaults": [feature.pyside_feature_dict.get(name)
                 for name in ("uses_qt", "plain_module", "pkg_without_init")]}))
"""


def test_a_module_imported_after_the_app_starts_is_not_read_through_inspect(
        tmp_path: Path) -> None:
    (tmp_path / "uses_qt.py").write_text("from PySide6 import QtCore\nVALUE = 1\n")
    (tmp_path / "plain_module.py").write_text("VALUE = 2\n")
    (tmp_path / "pkg_without_init").mkdir()  # a namespace package: no source at all
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                               "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # PySide6's defaults: 0 for a module that uses PySide6, -1 ("ignore") for the others
    assert got == {"read_by_inspect": [], "defaults": [0, -1, -1]}


def test_the_file_check_answers_as_pyside6_s_own_for_every_loaded_module(qapp) -> None:
    import numpy  # noqa: F401 - modules of every kind: packages, extensions, pure Python
    import pyqtgraph  # noqa: F401
    from PySide6.support import feature

    _pyside.quicken_feature_check()
    original = _pyside.replaced
    assert original is not None and feature._mod_uses_pyside is _pyside.uses_pyside
    modules = [m for m in list(sys.modules.values()) if m is not None]
    ours = [_pyside.uses_pyside(m) for m in modules]
    with warnings.catch_warnings():  # inspect asks built-in modules for their deprecated repr
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = [original(m) for m in modules]
    assert ours == theirs
    assert sum(ours) >= 5 and len(ours) - sum(ours) >= 500  # both answers were checked
    assert _pyside.quicken_feature_check() is False  # once only
