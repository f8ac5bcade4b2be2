"""Full-text search without touching the user's store.

If the user's table already has a full-text index on its text column it is used as is.
Otherwise a private copy of the non-vector columns is written to the app's own cache and
indexed there. Its identity (cache.py) is the store's resolved location, the table, the
version and that version's creation time, so two stores at the same relative path, or a table
deleted and recreated at the same path, never share a copy; the identity and row count are
checked before every use.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.stores.safety import cache
from inspector.core.stores.safety.cache import APP_NAME, cache_root
from inspector.core.stores.safety.redact import without_credentials
from inspector.core.stores.store import Store, is_remote, local_path

__all__ = ["APP_NAME", "cache_root", "fts_table", "store_identity"]

_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # names LanceDB's projection accepts
_ENDPOINTS = ("aws_endpoint", "endpoint", "aws_endpoint_url", "endpoint_url", "host_override")


def _location(store: Store) -> str:
    """Where the store really is: an absolute resolved path, or the URI without credentials
    (plus its endpoint, since one bucket name may exist on several endpoints)."""
    if not is_remote(store.uri):
        return str(local_path(store.uri).resolve())
    where = without_credentials(store.uri).rstrip("/")
    opts = store.storage_options or {}
    endpoint = next((opts[k] for k in _ENDPOINTS if opts.get(k)), "")
    return f"{where} @ {without_credentials(endpoint)}" if endpoint else where


def _version_stamp(store: Store) -> str:
    """The pinned version's creation time: differs between a table and its recreation."""
    try:
        for v in store.table.list_versions():
            if int(v["version"]) == store.version:
                return str(v.get("timestamp"))
    except InspectorError:
        raise
    except Exception as exc:  # noqa: BLE001 - a vanished version is a user-facing condition
        raise store.gone(exc) from exc
    return "unknown"


def store_identity(store: Store) -> dict[str, Any]:
    """What a private copy of this store's table at its version must match."""
    return {"location": _location(store), "table": store.table_name,
            "version": store.version, "stamp": _version_stamp(store), "rows": store.rows,
            "layout": 2}


def fts_table(store: Store) -> tuple[Any, str]:
    """A table to run full-text search on, and where it lives ('store' or the cache path)."""
    import lancedb

    if store.roles.text is None:
        raise InspectorError(f"Table '{store.table_name}' has no text column, so full-text "
                             "and hybrid search are not possible; use --mode vector.")
    if store.fts_index_column():
        return store.table, "store"
    known = store.__dict__.get("_fts_copy")  # this Store object's copy, found once
    if known is None:
        identity = store_identity(store)
        where = cache.entry("fts", identity)
        known = _OPENED.get(where)
        if known is None or not cache.is_valid(where, identity):
            lease = _obtain(store, identity)
            known = _Copy(lancedb.connect(str(lease.where)).open_table("fts"), lease)
            _OPENED[where] = known
        store.__dict__["_fts_copy"] = known  # the Store keeps the copy, and its lease
    return known.table, str(known.lease.where)


@dataclass(eq=False)
class _Copy:
    """An open private copy and the lease that keeps any prune from removing it."""

    table: Any
    lease: cache.Lease


# a verified copy never changes: open each once per process (keyed by its identity's folder)
# while some Store uses it; when none does, the copy is closed and its lease released
_OPENED: weakref.WeakValueDictionary[Path, _Copy] = weakref.WeakValueDictionary()


def _rows_match(where: Path, rows: int) -> bool:
    import lancedb

    try:
        return int(lancedb.connect(str(where)).open_table("fts").count_rows()) == rows
    except Exception:  # noqa: BLE001 - an unreadable copy is rebuilt
        return False


def copy_columns(store: Store) -> list[str]:
    """Every column but vectors whose name LanceDB can project (scope columns included)."""
    return [f.name for f in store.schema if f.name != store.roles.vector
            and not pa.types.is_fixed_size_list(f.type) and _PLAIN_NAME.match(f.name)]


def _obtain(store: Store, identity: dict[str, Any]) -> cache.Lease:
    """The verified copy's folder, built once whatever the number of concurrent callers."""
    try:
        return cache.obtain("fts", identity, lambda tmp: _write_copy(store, tmp),
                            check=lambda where: _rows_match(where, store.rows))
    except InspectorError:
        raise
    except Exception as exc:  # noqa: BLE001 - one line naming the copy, never a traceback
        if (gone := store.gone_or_none(exc)) is not None:
            raise gone from exc
        raise InspectorError(f"Cannot build the private full-text copy of table "
                             f"'{store.table_name}': {str(exc).strip()[:200]}.") from exc


def _write_copy(store: Store, tmp: Path) -> None:
    """Write and index the copy in `tmp`, a private build folder."""
    import lancedb
    from lancedb.index import FTS

    cols = copy_columns(store)
    if store.roles.text not in cols:
        raise InspectorError(f"The text column '{store.roles.text}' has a name LanceDB cannot "
                             "select, so the table cannot be searched by full text.")
    try:
        reader = store.table.search().select(cols).limit(None).to_batches(65_536)
    except InspectorError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise store.gone(exc) from exc
    db = lancedb.connect(str(tmp))
    tbl = None
    for batch in reader:
        if not batch.num_rows:
            continue
        if tbl is None:
            tbl = db.create_table("fts", pa.Table.from_batches([batch]))
        else:
            tbl.add(pa.Table.from_batches([batch]))
    if tbl is None:
        raise InspectorError(f"Table '{store.table_name}' is empty; there is nothing to search.")
    tbl.create_index(store.roles.text, config=FTS())
