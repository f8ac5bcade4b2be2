"""Opening any store the inspector knows, read-only: a LanceDB folder or URI, or a SQLite docs
file (opened through a private LanceDB working copy). Also what the window needs beside the
store: its sibling tables and the scope values to suggest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.stores import docs_sqlite
from inspector.core.stores.ann.indexes import vector_indexes
from inspector.core.stores.docs_source import is_sqlite_file
from inspector.core.stores.options import OpenOptions
from inspector.core.stores.roles import Roles, detect_roles, ignored_columns, read_meta
from inspector.core.stores.safety.redact import redact_uri
from inspector.core.stores.shapes import shape_of
from inspector.core.stores.store import (
    Store,
    TableInfo,
    connect,
    first_line,
    is_remote,
    list_table_names,
    local_path,
    no_tables_message,
    open_lance,
)


def _sqlite_path(uri: str) -> str | None:
    return None if is_remote(uri) or not is_sqlite_file(local_path(uri)) else \
        str(local_path(uri))


def open_store(uri: str, table: str | None = None, roles: dict[str, str] | None = None,
               version: int | None = None,
               storage_options: dict[str, str] | None = None,
               embedding_model: str | None = None) -> Store:
    """Open one table of a store read-only, pinned at `version` (default: the latest now).

    A SQLite docs store (detected by its header) opens as a LanceDB working copy in the app's
    cache; `embedding_model` picks which of its embeddings to use (see docs_sqlite).
    """
    path = _sqlite_path(uri)
    if path is not None:
        if version is not None:
            raise InspectorError(f"{uri} is a SQLite docs store, which has no table versions.")
        return docs_sqlite.open_docs_store(path, table=table, roles=roles, model=embedding_model)
    return open_lance(uri, table, roles=roles, version=version, storage_options=storage_options)


def describe_tables(uri: str, storage_options: dict[str, str] | None = None) -> list[TableInfo]:
    """Every table of a store with its columns, detected roles and size."""
    path = _sqlite_path(uri)
    if path is not None:
        return docs_sqlite.describe_docs_store(path)
    return describe_lance(uri, storage_options)


@dataclass(frozen=True)
class Opened:
    """A store ready to browse: the Store, its sibling tables, and scope values to offer."""

    store: Store
    tables: tuple[str, ...]
    scope_values: dict[str, list[str]] = field(default_factory=dict)
    demo: bool = False
    options: OpenOptions | None = None  # how it was opened (None: defaults)


def open_for_browsing(uri: str | None, table: str | None,
                      options: OpenOptions | None = None) -> Opened:
    """Open a store (the demo store, written on first use, when uri is None) with what a
    browsing client offers beside it: sibling tables and up to 500 values per scope column."""
    from inspector.core.stores.demo import ensure_demo_store

    demo = uri is None
    if uri is None:
        uri = str(ensure_demo_store())
    store = open_store(uri, table, **(options.kwargs() if options and not demo else {}))
    tables = tuple(store.table_names())
    values: dict[str, list[str]] = {}
    for col in dict.fromkeys(c for c in (store.roles.repo, store.roles.scope, store.roles.agent)
                             if c):
        try:
            values[col] = store.distinct(col, limit=500)
        except Exception:  # noqa: BLE001 - scope suggestions are a convenience
            values[col] = []
    return Opened(store=store, tables=tables, scope_values=values, demo=demo, options=options)


def describe_lance(uri: str, storage_options: dict[str, str] | None = None) -> list[TableInfo]:
    """Every table of a LanceDB store with its columns, detected roles and size."""
    db = connect(uri, storage_options)
    names = list_table_names(db, uri, storage_options)
    if not names:
        raise InspectorError(no_tables_message(uri))
    out = []
    for name in names:
        try:
            out.append(_describe_one(db, name))
        except InspectorError:
            raise
        except Exception as exc:  # noqa: BLE001 - a damaged table is named, not a traceback
            raise InspectorError(f"Cannot read table '{name}' in {redact_uri(uri)}: "
                                 f"{first_line(exc)}.") from exc
    return out


def _describe_one(db: Any, name: str) -> TableInfo:
    tbl = db.open_table(name)
    schema = tbl.schema
    roles = detect_roles(schema) if _vector_count(schema) < 2 else Roles()
    dim = (schema.field(roles.vector).type.list_size if roles.vector else None)
    indices = list(tbl.list_indices())
    fts = any(getattr(i, "index_type", "") == "FTS" for i in indices)
    shape = None if read_meta(schema).get("demo") else shape_of(name, schema)
    known = shape is not None and shape.name != "unknown"
    return TableInfo(name=name, rows=int(tbl.count_rows()), version=int(tbl.version),
                     columns={f.name: str(f.type) for f in schema}, roles=roles,
                     dim=dim, fts_indexed=fts, notes=tuple(ignored_columns(schema, roles)),
                     vector_indexes=vector_indexes(indices),
                     system=shape.name if known else "",
                     system_title=shape.title if known else "",
                     preset=shape.preset if known else None,
                     system_notes=shape.notes if known else ())


def _vector_count(schema: pa.Schema) -> int:
    return sum(1 for f in schema if pa.types.is_fixed_size_list(f.type))
