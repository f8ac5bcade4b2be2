"""Where real memory stores live by default, for File > Open to offer the ones that exist."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
