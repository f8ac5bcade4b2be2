"""Two workarounds for PySide6 itself.

## A reference-count bug of PySide6 6.12 on Python 3.11

Measured here (PySide6/shiboken6 6.12.0, CPython 3.11.7): every call of a void Qt method
(QLabel.setText, QSlider.setValue, processEvents, ...) takes one reference from None, and
every Signal.emit() takes one from True, without ever having added it. Python 3.12+ made
None/True/False immortal (PEP 683), so the bug is harmless there; on 3.11 the window dies
with "Fatal Python error: none_dealloc" (or bool_dealloc) after a few thousand slider ticks.

The fix here does what 3.12 does: give those three statically allocated singletons a
reference count so large that no session can exhaust it. They are never freed either way.

## PySide6's per-import check, answered from the module's file

Once PySide6 is imported it sees every later first import of a module (its `__feature__`
support: `from __feature__ import snake_case` applies per module) and decides whether the
module uses PySide6 by `inspect.getsource(module)` and a substring test for "PySide6". For
each of the ~1,200 modules the window imports after its frame is painted (numpy, pyarrow,
pandas, pyqtgraph, lancedb) that reads, decodes and splits the whole source into `linecache`,
where it stays: about three times the cost of reading the files, on the way to the first
results (the note on issue 34 has the figures).

`quicken_feature_check()` replaces that check with one giving the same answer: whether the
bytes "PySide6" occur in the module's source file. A module whose source is not a `.py` file
(an extension, a namespace package, a module without a file) has no source for `inspect`
either, and the answer is False in both. The check only picks a module's default feature
set; the inspector uses no `__feature__`. Where the PySide6 build has no such function,
nothing is changed.
"""

from __future__ import annotations

import sys
from typing import Any

BUMP = 1 << 40


def immortalize_singletons() -> bool:
    """On Python < 3.12, make None, True and False effectively immortal. True if applied."""
    if sys.version_info >= (3, 12) or getattr(immortalize_singletons, "done", False):
        return False
    try:  # pyproject keeps 3.11 on 6.11; only a hand-installed 6.12 needs the guard
        import PySide6  # the package alone: no Qt call yet (importlib.metadata took 0.2 s)

        if not PySide6.__version__.startswith("6.12"):
            return False
    except ImportError:
        pass
    import ctypes

    for obj in (None, True, False):
        cell = ctypes.c_ssize_t.from_address(id(obj))  # ob_refcnt is a PyObject's first field
        if abs(cell.value - sys.getrefcount(obj)) > 1000:  # unexpected layout: leave it alone
            return False
        cell.value += BUMP
    immortalize_singletons.done = True  # type: ignore[attr-defined]
    return True


_MODULE = "PySide6.support.feature"
_ORIGINAL = "_mod_uses_pyside"
replaced: Any = None  # PySide6's own check, once quicken_feature_check() has replaced it


def uses_pyside(module: Any) -> bool:
    """Whether `module`'s source file contains "PySide6" (PySide6's own question)."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) if spec is not None else None
    if origin is None:
        origin = getattr(module, "__file__", None)
    if not isinstance(origin, str) or not origin.endswith(".py"):
        return False
    try:
        with open(origin, "rb") as source:
            return b"PySide6" in source.read()
    except OSError:
        return False


def quicken_feature_check() -> bool:
    """Answer PySide6's check with `uses_pyside`; False when this PySide6 has no such check
    (nothing changed) or it is answered so already."""
    try:
        __import__(_MODULE)
    except ImportError:
        return False
    feature = sys.modules[_MODULE]
    current = getattr(feature, _ORIGINAL, None)
    if current is None or current is uses_pyside:
        return False
    global replaced
    replaced = current
    setattr(feature, _ORIGINAL, uses_pyside)
    return True
