"""On Python 3.11, `import lancedb` runs with the marking `@override` lancedb uses on 3.12+
(PEP 698), not the `overrides` package's, which disassembles lancedb's modules once per
method: lancedb's classes are the same, and nothing stays changed once it is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector import _override_marks

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import json, sys
import overrides
impl = sys.modules["overrides.overrides"]
calls = []
real_bases = impl._get_base_classes
impl._get_base_classes = lambda *a: calls.append(1) or real_bases(*a)
real_override = overrides.override
import inspector
import lancedb
from lancedb.db import DBConnection, LanceDBConnection
import importlib.resources
overriding = [name for name, value in vars(LanceDBConnection).items()
              if callable(value) and getattr(DBConnection, name, None) is not None
              and not name.startswith("__")]
print(json.dumps({
    "disassembled": len(calls),
    "overriding": len(overriding),
    "marked": all(getattr(vars(LanceDBConnection)[n], "__override__", False)
                  for n in overriding),
    "restored": overrides.override is real_override,
    "loader": type(lancedb.__spec__.loader).__module__,
    "finder_left": any(type(f).__module__ == "inspector._override_marks"
                       for f in sys.meta_path),
    "resources": importlib.resources.files("lancedb").joinpath("__init__.py").is_file()}))
"""


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="lancedb uses typing.override there")
def test_lancedb_imports_with_marks_and_leaves_nothing_changed() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["overriding"] >= 10 and got["marked"], got  # EnforceOverrides was satisfied
    assert got == {**got, "disassembled": 0, "restored": True, "finder_left": False,
                   "resources": True}
    assert not got["loader"].startswith("inspector"), got


def test_marking_restores_the_package_s_decorator_even_when_the_import_fails() -> None:
    overrides = pytest.importorskip("overrides")
    real = overrides.override
    with pytest.raises(RuntimeError), _override_marks.marking():
        assert overrides.override is _override_marks.mark
        raise RuntimeError("lancedb failed to import")
    assert overrides.override is real


def test_the_mark_is_pep_698_s() -> None:
    def method() -> None:
        pass

    assert _override_marks.mark(method) is method and method.__override__ is True
    assert _override_marks.mark(check_signature=False)(method) is method
    assert _override_marks.mark(1) == 1  # a read-only object is returned unmarked
    assert _override_marks.install() is False  # lancedb is imported in this process already
