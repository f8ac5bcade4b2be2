"""A pinned LanceDB table whose failures say what happened when a file it needs is missing.

LanceDB fails with a raw "lance error: ... Not found" when a file of the pinned version is
gone. Two different things cause that: someone else's `cleanup_old_versions` (or `optimize`)
deleted an old version the inspector is pinned at (`VersionGoneError`: one sentence naming the
version and the newest one), or the store is damaged: a data, index or deletion file that a
version still listed refers to was deleted or lost (`StoreDamagedError`, naming the file).
Every call on the table, and on the query builders it returns, goes through this proxy, which
turns the failure into the error the store decides on and lets everything else through.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from inspector.core.errors import InspectorError


class VersionGoneError(InspectorError):
    """The pinned table version no longer exists (cleaned up by someone's `cleanup_old_versions`
    or compaction). `latest` is the newest version now, when it could be read; a client may
    offer to reopen the store there."""

    def __init__(self, message: str, version: int, latest: int | None = None) -> None:
        super().__init__(message)
        self.version = version
        self.latest = latest


class StoreDamagedError(InspectorError):
    """A file the table's version still refers to is missing: damage, not a cleanup (a cleanup
    never removes a version that is still listed, nor the files it refers to)."""


def looks_missing(exc: BaseException) -> bool:
    """True for LanceDB's error when a file it needs is gone ("Not found" on a manifest, data,
    index or deletion file)."""
    text = str(exc)
    return "Not found" in text or "NotFound" in text or "No such file" in text


# the path as LanceDB names it: a URL, an absolute path, or (its local object store's form)
# a path without its leading "/" that runs through the table's folder
_MISSING_PATH = re.compile(r"(?:Not found|No such file or directory)\W*"
                           r"((?:[A-Za-z][A-Za-z0-9+.-]*://|/)[^\s,]+|[^\s,]*\.lance/[^\s,]+)")
_KINDS = (("/data/", "data file"), ("/_indices/", "index file"), ("/_deletions/",
          "deletion file"), ("/_versions/", "version manifest"), ("/_transactions/",
          "transaction file"))


def missing_file(exc: BaseException) -> tuple[str, str] | None:
    """(what kind of file, its path inside the table folder) named by LanceDB's error."""
    m = _MISSING_PATH.search(str(exc))
    if m is None:
        return None
    path = m.group(1)
    kind = next((k for part, k in _KINDS if part in path), "file")
    inside = path.split(".lance/", 1)[1] if ".lance/" in path else path.rsplit("/", 1)[-1]
    return kind, inside


ErrorFactory = Callable[[BaseException], InspectorError | None]


class Guarded:
    """Forwards everything to `target`; a missing-file failure raises `on_gone(exc)`."""

    __slots__ = ("_target", "_on_gone")

    def __init__(self, target: Any, on_gone: ErrorFactory) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_on_gone", on_gone)

    @property
    def unwrapped(self) -> Any:
        return self._target

    def guard(self, other: Any) -> Guarded:
        """`other` (e.g. a query builder made of the object guarded) behind this proxy's rule."""
        return Guarded(other, self._on_gone)

    def run(self, fn: Callable[[Any], Any]) -> Any:
        """fn(the object guarded), its failures translated as this proxy's calls are."""
        return self._wrap_call(fn)(self._target)

    def _translate(self, exc: Exception) -> None:
        err = self._on_gone(exc)
        if err is not None:
            raise err from exc

    def __getattr__(self, name: str) -> Any:
        if name in Guarded.__slots__:  # not yet set (copying, unpickling): no recursion
            raise AttributeError(name)
        try:
            attr = getattr(self._target, name)
        except InspectorError:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. `schema` of a vanished version
            self._translate(exc)
            raise
        if not callable(attr) or isinstance(attr, type):
            return attr
        return self._wrap_call(attr)

    def _wrap_call(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                out = fn(*args, **kwargs)
            except InspectorError:
                raise
            except Exception as exc:  # noqa: BLE001 - translated or re-raised as is
                self._translate(exc)
                raise
            if out is not None and type(out).__module__.startswith("lancedb.") \
                    and out is not self._target:
                return Guarded(out, self._on_gone)  # a query builder: its to_arrow() too
            return self if out is self._target else out

        return call

    def __repr__(self) -> str:
        return f"Guarded({self._target!r})"
