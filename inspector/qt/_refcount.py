"""Guard against a PySide6 6.12 reference-count bug on Python 3.11.

Measured here (PySide6/shiboken6 6.12.0, CPython 3.11.7): every call of a void Qt method
(QLabel.setText, QSlider.setValue, processEvents, ...) takes one reference from None, and
every Signal.emit() takes one from True, without ever having added it. Python 3.12+ made
None/True/False immortal (PEP 683), so the bug is harmless there; on 3.11 the window dies
with "Fatal Python error: none_dealloc" (or bool_dealloc) after a few thousand slider ticks.

The fix here does what 3.12 does: give those three statically allocated singletons a
reference count so large that no session can exhaust it. They are never freed either way.
"""

from __future__ import annotations

import sys

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
