"""The Qt window. Everything Qt lives in this subpackage; inspector.core knows none of it."""

from inspector.qt._pyside import immortalize_singletons

immortalize_singletons()  # before any PySide6 call: see _pyside.py
