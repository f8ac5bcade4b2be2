"""Recognise which memory system wrote a table, so the window and CLI can suggest its preset.

The shapes are those of REFERENCE.md section 2; recognition is by column names and types only
(no rows are read), and a guess never changes any parameter by itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from inspector.core.stores.store import Store


@dataclass(frozen=True)
class Shape:
    name: str  # openclaw | engine-memory | other-plugin | docs-sqlite | demo | unknown
    preset: str | None
    title: str
    notes: tuple[str, ...] = ()


def importance_label(importance: Any) -> str:
    """The public engine's label: must_remember >= 0.8, nice_to_have >= 0.5, else ignore;
    unknown when missing or not a number."""
    if isinstance(importance, bool) or not isinstance(importance, (int, float)) \
            or not math.isfinite(importance):
        return "unknown"
    if importance >= 0.8:
        return "must_remember"
    if importance >= 0.5:
        return "nice_to_have"
    return "ignore"


def _has(schema: pa.Schema, name: str, *types: Any) -> bool:
    if name not in schema.names:
        return False
    t = schema.field(name).type
    return not types or any(check(t) for check in types)


def detect_shape(store: Store) -> Shape:
    """The system whose table this looks like, and the preset that reproduces its ranking."""
    if getattr(store, "source", None) is not None:
        return Shape("docs-sqlite", "docs-before-fix", "Docs engine (SQLite)",
                     ("docs-overfetch and docs-pushdown reproduce the two fixes",))
    if store.meta.get("demo"):  # our own store: its suggested queries carry their presets
        return Shape("demo", None, "The inspector's demo store",
                     ("its suggested queries set their own presets",))
    s = store.schema
    if _has(s, "importance_label") or _has(s, "trust_tier"):
        return Shape("engine-memory", "engine-memory", "The public engine's memory table")
    if _has(s, "metadata", pa.types.is_string) and _has(s, "timestamp") and _has(s, "scope"):
        return Shape("other-plugin", "other-plugin", "The other public memory plugin",
                     ("scopes look like 'global', 'agent:<id>', 'project:<id>'",))
    if _has(s, "createdAt", pa.types.is_floating) and store.table_name == "memories":
        notes = []
        if not _has(s, "agentId"):
            notes.append("an older table without agentId: give just a scope, or none")
        if _has(s, "scope"):
            notes.append("scope AGENT/SCOPE; '' or NULL scope rows are global")
        return Shape("openclaw", "openclaw", "OpenClaw memory plugin", tuple(notes))
    return Shape("unknown", None, "Unrecognised table")


# ---- where real stores live by default (File > Open offers the ones that exist) ----

@dataclass(frozen=True)
class KnownStore:
    label: str
    path: str
    preset: str  # the preset that reproduces this store's system
    table: str | None = None


# (label, path relative to the home folder, preset, table)
_DEFAULTS: tuple[tuple[str, str, str, str | None], ...] = (
    ("OpenClaw memory plugin", ".openclaw/memory/lancedb", "openclaw", "memories"),
)


def known_locations(home: Path | None = None) -> list[KnownStore]:
    """The default store locations that exist on this machine (checked, never created)."""
    base = home if home is not None else Path.home()
    out = []
    for label, rel, preset, table in _DEFAULTS:
        p = base / rel
        if p.is_dir():
            out.append(KnownStore(label=label, path=str(p), preset=preset, table=table))
    return out
