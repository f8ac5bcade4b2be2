"""Background jobs for the store features (shape, newer-version check, versions, comparison,
push-out): plain functions over the engine, run through the window's jobs (qt.jobs) and
testable without a GUI."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.question import Question
from inspector.core.stores.store import Store


@dataclass(frozen=True)
class ShapeInfo:
    """What the engine recognises in a store: its system, preset and notes."""

    name: str
    title: str
    preset: str | None
    notes: tuple[str, ...]


def shape_job(store: Store) -> ShapeInfo:
    """detect_shape plus the store's own notes (schema reads can touch the network)."""
    from inspector.core.stores.shapes import detect_shape

    shape = detect_shape(store)
    notes = (*shape.notes, *[str(n) for n in store.meta.get("notes") or []])
    return ShapeInfo(shape.name, shape.title, shape.preset, tuple(notes))


@dataclass(frozen=True)
class Newer:
    """The answer of one cheap check: is there something newer than the pinned version?"""

    pinned: int
    latest: int
    changed: bool  # True when a reload would show other data
    file: bool = False  # a SQLite docs file (no versions: the file itself changed)


def newer_job(store: Store) -> Newer:
    """One manifest read (LanceDB) or one stat (a SQLite docs file)."""
    if getattr(store, "source", None) is not None:
        return Newer(store.version, store.version, store.has_newer(), file=True)
    latest = store.latest_version()
    return Newer(store.version, latest, latest > store.version)


def versions_job(store: Store) -> list[Any]:
    from inspector.core.stores.versions import list_versions

    return list_versions(store)


def compare_job(store: Store, q: Question, a: int, b: int, stage: str | None = None) -> Any:
    """The question on versions a and b (`inspector diff-versions --from A --to B`)."""
    from inspector.core.analysis.version_diff import compare_versions

    return compare_versions(store, q, a, b, stage)


def push_out_job(store: Store, q: Question, row_id: Any, versions: list[int] | None,
                 stage: str | None = None) -> Any:
    """The first write after which row_id left the stage's rows (`--who-pushed-out ID`)."""
    from inspector.core.analysis.version_diff import find_push_out

    return find_push_out(store, q, row_id, versions, stage)
