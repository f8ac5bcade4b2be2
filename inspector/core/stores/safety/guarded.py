"""A pinned LanceDB table whose failures say what happened when its version was cleaned up.

Someone else's `cleanup_old_versions` (or `optimize`) may delete the files of the version the
inspector is pinned at; LanceDB then fails with a raw "lance error: ... Not found". Every call
on the table, and on the query builders it returns, goes through this proxy, which turns that
failure into `VersionGoneError` (one sentence naming the version and the newest one) and lets
every other result and error through unchanged.
"""

from __future__ import annotations

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


def looks_cleaned_up(exc: BaseException) -> bool:
    """True for LanceDB's error when a version's files are gone ("Not found" on a manifest or
    data file)."""
    text = str(exc)
    return "Not found" in text or "NotFound" in text or "No such file" in text


ErrorFactory = Callable[[BaseException], InspectorError | None]


class Guarded:
    """Forwards everything to `target`; a "version cleaned up" failure raises `on_gone(exc)`."""

    __slots__ = ("_target", "_on_gone")

    def __init__(self, target: Any, on_gone: ErrorFactory) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_on_gone", on_gone)

    @property
    def unwrapped(self) -> Any:
        return self._target

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
