"""Table versions: every version of a table with its time and row count. Listing reads
manifests only; it never writes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store


@dataclass(frozen=True)
class VersionInfo:
    version: int
    timestamp: datetime | None
    rows: int | None

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "rows": self.rows,
                "timestamp": self.timestamp.isoformat() if self.timestamp else None}


def list_versions(store: Store) -> list[VersionInfo]:
    """Every version of the store's table, oldest first, with its time and row count."""
    if getattr(store, "source", None) is not None:
        raise InspectorError(f"{store.uri} is a SQLite docs store, which has no table versions.")
    try:
        raw = store.table.list_versions()
    except Exception as exc:  # noqa: BLE001
        raise InspectorError(f"Cannot list the versions of table '{store.table_name}': "
                             f"{str(exc).splitlines()[0] if str(exc) else exc!r}.") from exc
    out = []
    for v in raw:
        meta = v.get("metadata") or {}
        rows = meta.get("total_rows")
        ts = v.get("timestamp")
        out.append(VersionInfo(version=int(v["version"]),
                               timestamp=ts if isinstance(ts, datetime) else None,
                               rows=int(rows) if rows not in (None, "") else None))
    return sorted(out, key=lambda x: x.version)
