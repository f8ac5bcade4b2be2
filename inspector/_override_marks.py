"""`import lancedb` on Python 3.11 with the decorator lancedb itself uses on 3.12 and later.

On Python < 3.12 lancedb marks its ~100 overriding methods with the `overrides` package's
`@override`, which finds each method's base classes by disassembling the bytecode of the module
that defines the class, from its start to the class statement, once per method: a seventh of
every process's `import lancedb`, which the window's first results and every CLI query wait for
(the note on issue 34 has the figures). On 3.12 and later lancedb uses `typing.override`, which
only sets `__override__ = True` (PEP 698). While lancedb's own package runs its imports,
`overrides.override` is that marker; it is restored the moment they end.

Nothing lancedb does changes: the marker sets the attribute `overrides.EnforceOverrides` reads,
and what is skipped is the package's check that each override matches a base method's signature,
made for lancedb's developers (it raises at import if they get one wrong, never for a user). A
lancedb submodule imported later (its namespace module, say) gets the package's own decorator.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

NAME = "lancedb"


def mark(method: Any = None, **_options: Any) -> Any:
    """PEP 698's `override`: sets `__override__` and returns the method (also as
    `@override(check_signature=...)`, the `overrides` package's keyword form)."""
    if method is None:
        return mark
    try:
        method.__override__ = True
    except (AttributeError, TypeError):
        pass  # a read-only object: PEP 698 skips it silently too
    return method


@contextmanager
def marking() -> Iterator[None]:
    """`overrides.override` (and its alias `overrides`) is `mark` inside the block."""
    module = sys.modules.get("overrides")
    if module is None:
        try:
            import overrides as module  # type: ignore[import-not-found,no-redef]
        except ImportError:
            yield
            return
    saved = {name: getattr(module, name) for name in ("override", "overrides")
             if hasattr(module, name)}
    for name in saved:
        setattr(module, name, mark)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


class _Loader(importlib.abc.Loader):
    """lancedb's own loader, running its package under `marking()`; the module keeps the real
    loader (importlib.resources and the like see nothing of this one)."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self.real.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__loader__ = self.real
        if module.__spec__ is not None:
            module.__spec__.loader = self.real
        with marking():
            self.real.exec_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds lancedb once, through the finders after it, and hands back its spec with the
    loader above; then leaves sys.meta_path."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != NAME:
            return None
        remove()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


_FINDER = _Finder()


def install() -> bool:
    """Import lancedb, when anything first does, under `marking()`. False (nothing installed)
    on Python 3.12+, where lancedb never uses the package, or once lancedb is imported."""
    if sys.version_info >= (3, 12) or NAME in sys.modules or _FINDER in sys.meta_path:
        return False
    sys.meta_path.insert(0, _FINDER)
    return True


def remove() -> None:
    try:
        sys.meta_path.remove(_FINDER)
    except ValueError:
        pass
