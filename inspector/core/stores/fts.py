"""Full-text search without touching the user's store.

If the user's table already has a full-text index on its text column it is used as is.
Otherwise a private copy of the non-vector columns is written to the app's own cache,
keyed by store, table and table version, and indexed there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import platformdirs
import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store

APP_NAME = "memory-store-inspector"


def cache_root() -> Path:
    """The app's cache folder; INSPECTOR_CACHE_DIR overrides it (tests use this)."""
    env = os.environ.get("INSPECTOR_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir(APP_NAME))


def _cache_dir(store: Store) -> Path:
    key = hashlib.sha256(f"{store.uri}\0{store.table_name}".encode()).hexdigest()[:20]
    return cache_root() / "fts" / key / f"v{store.version}"


def fts_table(store: Store) -> tuple[Any, str]:
    """A table to run full-text search on, and where it lives ('store' or the cache path)."""
    import lancedb

    if store.roles.text is None:
        raise InspectorError(f"Table '{store.table_name}' has no text column, so full-text "
                             "and hybrid search are not possible; use --mode vector.")
    if store.fts_index_column():
        return store.table, "store"
    where = _cache_dir(store)
    opened = _OPENED.get(where)
    if opened is not None:
        return opened, str(where)
    if not (where / "READY").exists():
        _build(store, where)
    _OPENED[where] = lancedb.connect(str(where)).open_table("fts")
    return _OPENED[where], str(where)


_OPENED: dict[Path, Any] = {}  # private copies never change once READY: open each once


def _build(store: Store, where: Path) -> None:
    import lancedb
    from lancedb.index import FTS

    tmp = where.with_name(where.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # every column but vectors, so any scope column can be pushed down on the copy too
    cols = [f.name for f in store.schema if f.name != store.roles.vector
            and not str(f.type).startswith("fixed_size_list")]
    reader = store.table.search().select(cols).limit(None).to_batches(65_536)
    db = lancedb.connect(str(tmp))
    tbl = None
    for batch in reader:
        if tbl is None:
            tbl = db.create_table("fts", pa.Table.from_batches([batch])) if batch.num_rows \
                else None
        elif batch.num_rows:
            tbl.add(pa.Table.from_batches([batch]))
    if tbl is None:
        raise InspectorError(f"Table '{store.table_name}' is empty; there is nothing to search.")
    tbl.create_index(store.roles.text, config=FTS())
    (tmp / "READY").write_text(f"{store.uri}\n{store.table_name}\n{store.version}\n")
    shutil.rmtree(where, ignore_errors=True)
    os.replace(tmp, where)
