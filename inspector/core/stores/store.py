"""Open a LanceDB memory store strictly read-only and describe it.

`lancedb.connect` creates a missing directory, so every local path is checked before
connecting; nothing in this module creates, writes, indexes or compacts a user's store.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.stores.ann.indexes import IndexInfo, index_on, vector_indexes
from inspector.core.stores.remote import (  # noqa: F401  (where they were; callers import them here)
    connect,
    first_line,
    is_remote,
    local_path,
    readable_folder,
)
from inspector.core.stores.roles import (
    META_KEY,
    Roles,
    detect_roles,
    ignored_columns,
    in_predicate,
    lance_columns,
    read_meta,
    vector_refusal,
    with_nested,
)
from inspector.core.stores.safety.guarded import (
    Guarded,
    StoreDamagedError,
    VersionGoneError,
    looks_missing,
    missing_file,
)
from inspector.core.stores.safety.redact import redact_text, redact_uri

__all__ = ["META_KEY", "Store", "StoreDamagedError", "TableInfo", "VersionGoneError",
           "open_lance", "read_meta"]



@dataclass(frozen=True)
class TableInfo:
    """What `inspector tables` prints for one table."""

    name: str
    rows: int
    version: int
    columns: dict[str, str]
    roles: Roles
    dim: int | None
    fts_indexed: bool
    vector_indexes: tuple[IndexInfo, ...] = ()
    notes: tuple[str, ...] = ()  # ignored columns, what a docs file holds, ...
    read_mode: str = "lance"  # lance | sqlite-immutable | sqlite-snapshot (see docs_source)
    system: str = ""  # the system whose table this looks like (shapes.shape_of), "" unknown
    system_title: str = ""
    preset: str | None = None  # the preset that reproduces it
    system_notes: tuple[str, ...] = ()


@dataclass
class Store:
    """An opened table plus what the inspector knows about it. Holds no data rows."""

    uri: str
    table_name: str
    table: Any  # lancedb Table, checked out at `version` when pinned
    roles: Roles
    version: int
    rows: int
    dim: int
    meta: dict[str, Any] = field(default_factory=dict)
    storage_options: dict[str, str] | None = None
    role_overrides: dict[str, str] | None = None
    db: Any = field(default=None, repr=False, compare=False)  # the connection, for reopening
    column_notes: tuple[str, ...] = ()  # detected-but-unusable columns, shown as warnings

    @property
    def display_uri(self) -> str:
        """The URI fit to show anywhere (titles, JSON, errors): credentials removed."""
        return redact_uri(self.uri)

    @cached_property
    def schema(self) -> pa.Schema:
        """The pinned version's schema, read once (each read is a round trip into LanceDB)."""
        return self.table.schema

    @property
    def embedder(self) -> dict[str, Any] | None:
        return self.meta.get("embedder")

    @property
    def suggested_queries(self) -> list[dict[str, Any]]:
        return list(self.meta.get("suggested_queries", []))

    def fts_index_column(self) -> str | None:
        """The text column if the user's own table already carries a full-text index on it."""
        return self._fts_index_column

    @cached_property
    def _indices(self) -> list[Any]:
        # read once: the store is pinned at a version, and each read is a LanceDB round trip
        try:
            return list(self.table.list_indices())
        except Exception:  # noqa: BLE001 - an unreadable index list means "no usable index"
            return []

    @cached_property
    def vector_index(self) -> IndexInfo | None:
        """The vector index searches of the vector column use (None: flat search)."""
        return index_on(vector_indexes(self._indices), self.roles.vector)

    @cached_property
    def _fts_index_column(self) -> str | None:
        for idx in self._indices:
            if getattr(idx, "index_type", "") == "FTS" and self.roles.text in idx.columns:
                return self.roles.text
        return None

    def latest_version(self) -> int:
        """The table's newest version, read fresh (one manifest read); the store stays pinned."""
        if self.db is None:
            return self.version
        try:
            return int(self.db.open_table(self.table_name).version)
        except Exception as exc:  # noqa: BLE001 - a vanished table is a user-facing condition
            raise InspectorError(f"Cannot check {self.display_uri} for a newer version of table "
                                 f"'{self.table_name}': {first_line(exc)}.") from exc

    def table_names(self) -> list[str]:
        """Every table beside this one, over the same connection and options."""
        if self.db is None:
            return [self.table_name]
        return list_table_names(self.db, self.uri, self.storage_options)

    def has_newer(self) -> bool:
        """True when someone wrote to the table after this store was pinned."""
        return self.latest_version() > self.version

    def reopen(self, version: int | None = None) -> Store:
        """The same table pinned at `version` (default: the latest), roles re-detected."""
        return open_lance(self.uri, self.table_name, roles=self.role_overrides, version=version,
                          storage_options=self.storage_options)

    def info(self) -> dict[str, Any]:
        return {"uri": self.display_uri, "table": self.table_name, "version": self.version,
                "rows": self.rows}

    def gone_or_none(self, exc: BaseException) -> InspectorError | None:
        """When `exc` says a file of the pinned version is missing: a VersionGoneError when
        the version was cleaned up (it is no longer listed and a newer one exists), else a
        StoreDamagedError naming the missing file; None for any other failure."""
        if not looks_missing(exc):
            return None
        try:
            latest, listed = self._versions_now()
        except InspectorError:
            return None  # the whole table or store is gone: not a cleanup
        if self.version not in listed and self.version < latest:
            return VersionGoneError(
                f"Version {self.version} of table '{self.table_name}' in {self.display_uri} "
                f"was removed by a cleanup after it was opened; the newest version is {latest}: "
                "reopen the store to read the current data.", self.version, latest)
        kind, where = missing_file(exc) or ("file", "unknown")
        return StoreDamagedError(
            f"Table '{self.table_name}' in {self.display_uri} is damaged: version "
            f"{self.version} refers to a {kind} that is missing ({redact_text(where)}); "
            "restore it from a backup (the inspector never writes to a store).")

    def _versions_now(self) -> tuple[int, set[int]]:
        """The newest version and every version listed now, read fresh."""
        if self.db is None:
            return self.version, {self.version}
        try:
            tbl = self.db.open_table(self.table_name)
            return int(tbl.version), {int(v["version"]) for v in tbl.list_versions()}
        except Exception as exc:  # noqa: BLE001 - a vanished table is a user-facing condition
            raise InspectorError(f"Cannot list the versions of table '{self.table_name}': "
                                 f"{first_line(exc)}.") from exc

    def gone(self, exc: BaseException) -> InspectorError:
        """The error to raise when a read of the pinned version failed: VersionGoneError or
        StoreDamagedError when a file is missing (see gone_or_none), else one line naming the
        table."""
        return self.gone_or_none(exc) or InspectorError(
            f"Cannot read table '{self.table_name}' in {self.display_uri}: {first_line(exc)}.")

    def vector_of(self, row_id: str) -> np.ndarray:
        """The stored vector of one row (query by example)."""
        return self.vectors_of([row_id])[row_id]

    def vectors_of(self, row_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of many rows (queries by example) in one read, `id IN (...)`;
        the first id without a row or a usable vector is one clear error."""
        want = list(dict.fromkeys(row_ids))
        got = self._by_ids(want, [self.roles.vector])
        found: dict[str, Any] = {}
        for rid, vec in zip(got.column(0).to_pylist(), got.column(1), strict=True):
            found.setdefault(str(rid), vec)
        return {r: self._checked_example(r, found.get(str(r))) for r in want}

    def columns_of(self, row_id: str, columns: Sequence[str]) -> dict[str, Any] | None:
        """One row's values in `columns` (those the table has), as a pool reads them (None: no
        row has that id)."""
        want = [c for c in dict.fromkeys(columns) if c in self.schema.names]
        got = self._by_ids([row_id], want)
        if not got.num_rows:
            return None
        return {c: got.column(c)[0].as_py() for c in want}

    def _by_ids(self, row_ids: Sequence[str], columns: Sequence[str]) -> Any:
        """The rows with these ids, `id IN (...)`, with the id column first, then `columns`:
        one read, as every search is."""
        where = in_predicate(self.roles.id, list(row_ids),
                             self.schema.field(self.roles.id).type)
        try:
            return (self.table.search().where(where)
                    .select(list(dict.fromkeys([self.roles.id, *columns])))
                    .limit(None).to_arrow())
        except InspectorError:
            raise
        except Exception as exc:  # noqa: BLE001 - a vanished version or unreadable file
            raise self.gone(exc) from exc

    def _checked_example(self, row_id: str, cell: Any) -> np.ndarray:
        if cell is None:
            raise InspectorError(f"No row with {self.roles.id} = {row_id!r} in table "
                                 f"'{self.table_name}'.")
        values = cell.values
        if values is None:
            raise InspectorError(f"Row {row_id!r} has no stored vector (its "
                                 f"{self.roles.vector} is NULL), so it cannot be a query.")
        vec = np.asarray(values.to_numpy(zero_copy_only=False), np.float64)
        if not np.all(np.isfinite(vec)):
            raise InspectorError(f"Row {row_id!r} has a vector with NULL, NaN or infinite "
                                 "values, so it cannot be a query.")
        return vec.astype(np.float32)

    def missing_ids(self, ids: Iterable[Any]) -> list[str]:
        """The given ids that match no row (compared as text), in the order given. Reads the
        id column once, in batches, never the whole table at a time."""
        want = list(dict.fromkeys(str(i) for i in ids))
        if not want:
            return []
        left = set(want)
        reader = self.table.search().select([self.roles.id]).limit(None).to_batches(65_536)
        for batch in reader:
            left.difference_update(str(v) for v in batch.column(0).to_pylist())
            if not left:
                break
        return [i for i in want if i in left]

    def distinct(self, column: str, limit: int = 10_000) -> list[str]:
        """Distinct non-null values of a column, streamed in batches (never the whole table)."""
        seen: set[str] = set()
        wanted = lance_columns(self.schema, [column])
        reader = self.table.search().select(wanted).limit(None).to_batches(65_536)
        for batch in reader:
            got = with_nested(pa.Table.from_batches([batch]), self.schema, [column])
            for v in got.column(column).to_pylist():
                if v is not None:
                    seen.add(str(v))
            if len(seen) >= limit:
                break
        return sorted(seen)


def list_table_names(db: Any, uri: str = "",
                     storage_options: dict[str, str] | None = None) -> list[str]:
    try:
        return _list_table_names(db)
    except Exception as exc:  # noqa: BLE001 - listing fails for user-facing reasons
        if not is_remote(uri):
            raise InspectorError(f"Cannot list the tables of {uri}: {first_line(exc)}.") \
                from exc
        from inspector.core.stores import remote

        raise InspectorError(remote.explain(uri, exc, storage_options)) from exc


def _list_table_names(db: Any) -> list[str]:
    names: list[str] = []
    token = None
    while True:
        resp = db.list_tables(page_token=token) if token else db.list_tables()
        names.extend(resp.tables)
        token = getattr(resp, "page_token", None)
        if not token:
            return names


def no_tables_message(uri: str) -> str:
    """Why a folder is not a store, without listing what it holds (an agent asking the MCP
    server to open /etc learns nothing of /etc)."""
    if is_remote(uri):
        return f"{redact_uri(uri)} holds no LanceDB tables."
    if not any(local_path(uri).iterdir()):
        return f"{redact_uri(uri)} is an empty folder, not a LanceDB store."
    return (f"{redact_uri(uri)} holds no LanceDB tables (no TABLE.lance folder), so it is not "
            f"a LanceDB store.")


def choose_table(uri: str, names: list[str], table: str | None) -> str:
    if not names:
        raise InspectorError(no_tables_message(uri))
    if table is not None:
        if table not in names:
            raise InspectorError(f"Table '{table}' not found in {redact_uri(uri)}; tables: "
                                 f"{', '.join(names)}.")
        return table
    if len(names) == 1:
        return names[0]
    if "memories" in names:
        return "memories"
    raise InspectorError(f"{redact_uri(uri)} has several tables ({', '.join(names)}); pick one "
                         "with --table.")


def open_lance(uri: str, table: str | None = None, roles: dict[str, str] | None = None,
               version: int | None = None,
               storage_options: dict[str, str] | None = None) -> Store:
    """Open one LanceDB table read-only, pinned at `version` (default: the latest now)."""
    db = connect(uri, storage_options)
    name = choose_table(uri, list_table_names(db, uri, storage_options), table)
    try:
        tbl = db.open_table(name)
        _pin(tbl, name, version)
        schema = tbl.schema
        rows = int(tbl.count_rows())
    except InspectorError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged table is a user-facing condition
        raise InspectorError(f"Cannot open table '{name}' in {redact_uri(uri)}: "
                             f"{first_line(exc)}.") from exc
    detected = detect_roles(schema, roles)
    if detected.vector is None:
        raise InspectorError(vector_refusal(schema) or (
            f"Table '{name}' has no vector column (a fixed-size list of floats); columns: "
            f"{', '.join(schema.names)}."))
    if detected.id is None:
        raise InspectorError(f"Table '{name}' has no id column; name one with --column id=COLUMN.")
    dim = schema.field(detected.vector).type.list_size
    store = Store(uri=uri, table_name=name, table=tbl, roles=detected, version=int(tbl.version),
                 rows=rows, dim=int(dim), meta=read_meta(schema),
                 storage_options=dict(storage_options) if storage_options else None,
                 role_overrides=dict(roles) if roles else None, db=db,
                 column_notes=tuple(ignored_columns(schema, detected)))
    store.table = Guarded(tbl, store.gone_or_none)
    return store


# ---- searches in one trip to LanceDB's event loop ---------------------------------------------
# LanceDB's synchronous API runs each step on its background event loop and waits for it: a
# vector search asks the table's schema (to infer the vector column, given here), executes,
# reads each batch, then reads the schema again (for a rule on blob columns that does not
# apply once row ids are asked): five hand-overs between this thread and LanceDB's, each
# waiting for the GIL. `search_builder` and `run_search` build the same query with the same
# builder and run it through the same async execution (`AsyncTable._execute_query`, which the
# sync `to_arrow` calls) in one hand-over: the same rows, in the same order, with the same
# schema (tests/core/stores/test_one_trip.py). Where a table is not a local LanceTable, or
# LanceDB's internals differ, the builder's own `to_arrow()` runs.

def search_builder(table: Any, query: Any, query_type: str, vector_column: str | None = None,
                   fts_columns: str | list[str] | None = None) -> Any:
    """`table.search(query, vector_column_name=..., query_type=..., fts_columns=...)` without
    its trip for the schema (it infers the vector column from it, which is given here); `table`
    as the store holds it (Guarded)."""
    raw = table.unwrapped if isinstance(table, Guarded) else table
    create = _one_trip_builder(raw)
    if create is None or (query_type == "vector" and not vector_column):
        kw: dict[str, Any] = {"query_type": query_type}
        if vector_column:
            kw["vector_column_name"] = vector_column
        if fts_columns is not None:
            kw["fts_columns"] = fts_columns
        return table.search(query, **kw)
    made = create(raw, query, query_type, vector_column_name=vector_column,
                  fts_columns=fts_columns or [])
    return table.guard(made) if isinstance(table, Guarded) else made


def _one_trip_builder(raw: Any) -> Any:
    """LanceQueryBuilder.create where `raw` is a local LanceTable whose searches run on its
    own async table (no namespace server to push them to), else None."""
    try:
        from lancedb.query import LanceQueryBuilder
        from lancedb.table import LanceTable
    except ImportError:  # pragma: no cover - lancedb is a dependency
        return None
    if type(raw) is not LanceTable or getattr(raw, "_namespace_client", True) is not None \
            or not hasattr(getattr(raw, "_table", None), "_execute_query"):
        return None
    return LanceQueryBuilder.create


def run_search(q: Any, schema: pa.Schema | None = None) -> pa.Table:
    """`q.to_arrow()` for a vector or full-text builder made by `search_builder`, in one trip
    to LanceDB's event loop where it can be; the store's error translation either way.
    `schema`: the searched table's schema at its pinned version (what LanceDB would read
    again), for a search without row ids."""
    raw = q.unwrapped if isinstance(q, Guarded) else q
    go = _one_trip(raw, schema)
    if go is None:
        return q.to_arrow()
    return q.run(go) if isinstance(q, Guarded) else go(raw)


def _one_trip(raw: Any, schema: pa.Schema | None = None) -> Any:
    """The one-trip run of builder `raw` (what its `to_arrow` does, in one hand-over), or None
    where `to_arrow` does more than run the query (a reranker, row ids LanceDB adds and takes
    off again for blob columns, another kind of query) or the table is not a local
    LanceTable."""
    from lancedb.query import LanceFtsQueryBuilder, LanceVectorQueryBuilder

    kind = type(raw)
    if kind not in (LanceVectorQueryBuilder, LanceFtsQueryBuilder) \
            or getattr(raw, "_reranker", True) is not None \
            or _one_trip_builder(getattr(raw, "_table", None)) is None:
        return None
    if getattr(raw, "_with_row_id", None) is not True and (
            schema is None or _blob_row_ids(raw, schema) is not False):
        return None

    def go(b: Any) -> pa.Table:
        from lancedb.background_loop import LOOP

        if kind is LanceFtsQueryBuilder:
            b._table._ensure_no_legacy_fts_index()  # as its to_arrow checks first
        return LOOP.run(_collect(b._table._table, b.to_query_object()))

    return go


def _blob_row_ids(raw: Any, schema: pa.Schema) -> bool | None:
    """LanceDB's own rule for adding row ids to a search of blob columns (None: unknown)."""
    try:
        from lancedb._blob import blob_auto_row_id_for_scan

        return bool(blob_auto_row_id_for_scan(schema, raw._columns,
                                              with_row_id=raw._with_row_id))
    except (ImportError, AttributeError, TypeError):
        return None


async def _collect(atable: Any, query: Any) -> pa.Table:
    reader = await atable._execute_query(query)
    return pa.Table.from_batches([b async for b in reader], reader.schema)


def _pin(tbl: Any, name: str, version: int | None) -> None:
    """Check the table out at `version`, or at its current version so later writes by others
    do not change what the inspector sees. Checkout only reads a manifest; it never writes."""
    if version is None:
        tbl.checkout(int(tbl.version))
        return
    if isinstance(version, bool) or not isinstance(version, int):
        raise InspectorError(f"A table version is a whole number, not {version!r}.")
    known = [int(v["version"]) for v in tbl.list_versions()]
    if version not in known:
        shown = _ranges(known)
        raise InspectorError(f"Table '{name}' has no version {version}; its versions are "
                             f"{shown}.")
    tbl.checkout(version)


def _ranges(nums: list[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5' (at most 8 runs shown)."""
    runs: list[tuple[int, int]] = []
    for n in sorted(nums):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    parts = [f"{a}-{b}" if b > a else str(a) for a, b in runs]
    return ", ".join(parts[:8]) + (", ..." if len(parts) > 8 else "") if parts else "none"
