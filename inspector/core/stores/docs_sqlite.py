"""The docs engine's SQLite store, opened strictly read-only through a LanceDB working copy.

The source file is only ever read, and nothing beside it is created or touched (sqlite_ro:
`immutable=1`, or a private snapshot when a write-ahead log or journal is present). Its chunks
and one model's embeddings are copied into a LanceDB table in the app's cache, keyed by the
file's resolved path, its stamp (size, modification and change times, inode and a content
digest of the file, its -wal and -journal: sqlite_ro.file_stamp) and the model; the copy's
recorded identity and row count are checked before use.

Faithfulness to the docs engine:
- vector leg: the engine ranks by brute-force cosine. The copy stores each vector divided by
  its norm, so LanceDB's squared L2 (the docs presets' metric) equals 2 * cosine distance and
  ranks exactly as cosine does (`--distance cosine` gives the same order). Rows without an
  embedding for the model, or with a zero vector, have a NULL vector: no vector hit, as in the
  engine, which has nothing to score them with.
- full-text leg: the engine's own FTS5 table is queried on the read-only source with
  `bm25()` over all its columns (see docs_fts5); LanceDB's BM25 is never used for it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.stores.docs_fts5 import Fts5Table
from inspector.core.stores.docs_source import (
    CHUNKS,
    EMBEDDINGS,
    SOURCE_ROWID,
    DocsSource,
    checked_dim,
    choose_model,
    inspect_source,
    source_stamp,
)
from inspector.core.stores.roles import detect_roles
from inspector.core.stores.safety import cache
from inspector.core.stores.safety.sqlite_ro import connect_readonly
from inspector.core.stores.store import META_KEY, Store, TableInfo, read_meta

BUILD_VERSION = 1  # bump when the working copy's layout changes
_BATCH = 4096
_BATCH_BYTES = 32 * 1024 * 1024  # at most this much vector matrix per batch
_TYPES = {"integer": pa.int64(), "real": pa.float64(), "text": pa.string(), "blob": pa.binary()}


def _column_types(con: sqlite3.Connection) -> dict[str, pa.DataType]:
    """Arrow type per docs_chunks column from the values actually stored (SQLite is dynamic)."""
    out: dict[str, pa.DataType] = {}
    for _, name, *_rest in con.execute(f"PRAGMA table_info({CHUNKS})"):
        kinds = {k for (k,) in con.execute(
            f'SELECT DISTINCT typeof("{name}") FROM {CHUNKS}')} - {"null"}
        if len(kinds) == 1:
            out[name] = _TYPES[kinds.pop()]
        elif kinds == {"integer", "real"}:
            out[name] = pa.float64()
        else:
            out[name] = pa.string()
    return out


def _vectors(blobs: list[bytes | None], dim: int) -> tuple[pa.Array, int]:
    """Unit-length float32 vectors as a fixed-size list; NULL where missing, bad or zero."""
    mat = np.zeros((len(blobs), dim), np.float64)
    valid = np.zeros(len(blobs), bool)
    for i, b in enumerate(blobs):
        if b is not None and len(b) == 4 * dim:
            v = np.frombuffer(b, "<f4").astype(np.float64)
            n = float(np.linalg.norm(v))
            if np.isfinite(n) and n > 0:
                mat[i], valid[i] = v / n, True
    flat = pa.array(mat.astype(np.float32).ravel(), pa.float32())
    arr = pa.FixedSizeListArray.from_arrays(flat, dim, mask=pa.array(~valid))
    return arr, int((~valid).sum())


def _batches(con: sqlite3.Connection, types: dict[str, pa.DataType], model: str, dim: int,
             missing: list[int]) -> Iterator[pa.RecordBatch]:
    cols = list(types)
    select = ", ".join(f'c."{c}"' for c in cols)
    # the newest embedding of this model per chunk (by embeddings rowid)
    sql = (f"SELECT c.rowid, {select}, e.vector FROM {CHUNKS} c LEFT JOIN {EMBEDDINGS} e "
           f"ON e.rowid = (SELECT max(rowid) FROM {EMBEDDINGS} x WHERE x.chunk_rowid = c.rowid "
           "AND x.model = ?) ORDER BY c.rowid")
    cur = con.execute(sql, (model,))
    per_batch = max(1, min(_BATCH, _BATCH_BYTES // (8 * dim)))  # the float64 matrix's rows
    while rows := cur.fetchmany(per_batch):
        data: dict[str, pa.Array] = {SOURCE_ROWID: pa.array([r[0] for r in rows], pa.int64())}
        for j, c in enumerate(cols, 1):
            vals = [r[j] for r in rows]
            if types[c] == pa.string():
                vals = [None if v is None else (v.decode("utf-8", "replace")
                        if isinstance(v, bytes) else str(v)) for v in vals]
            data[c] = pa.array(vals, types[c])
        data["vector"], bad = _vectors([r[-1] for r in rows], dim)
        missing.append(bad)
        yield pa.RecordBatch.from_pydict(data)


def copy_identity(src: DocsSource, model: str) -> dict[str, Any]:
    """What a working copy must have been built from."""
    return {"source": str(Path(src.path).resolve()), "stamp": list(src.stamp), "model": model,
            "layout": BUILD_VERSION}


def cache_key(src: DocsSource, model: str) -> str:
    return cache.key_of(copy_identity(src, model))


def working_copy(con: sqlite3.Connection, src: DocsSource, model: str
                 ) -> tuple[Any, cache.Lease]:
    """The cached LanceDB copy of the chunks with this model's vectors, built if missing or
    if the copy found does not match its source (identity or row count), and the lease that
    keeps it from being pruned while it is open (its folder: `lease.where`)."""
    import lancedb

    identity = copy_identity(src, model)
    rows = int(con.execute(f"SELECT count(*) FROM {CHUNKS}").fetchone()[0])

    def rows_match(where: Path) -> bool:
        try:
            return int(lancedb.connect(str(where)).open_table(CHUNKS).count_rows()) == rows
        except Exception:  # noqa: BLE001 - an unreadable copy is rebuilt
            return False

    try:
        lease = cache.obtain("sqlite", identity, lambda tmp: _build(con, src, model, tmp),
                             check=rows_match)
    except InspectorError:
        raise
    except Exception as exc:  # noqa: BLE001 - one line naming the copy, never a traceback
        raise InspectorError(f"Cannot copy the docs store {src.path} into the cache: "
                             f"{str(exc).strip()[:200]}.") from exc
    try:
        return lancedb.connect(str(lease.where)).open_table(CHUNKS), lease
    except BaseException:
        lease.release()
        raise


def _build(con: sqlite3.Connection, src: DocsSource, model: str, tmp: Path) -> dict[str, Any]:
    """Write the working copy into `tmp`, a private build folder; its READY extras."""
    import lancedb

    types = _column_types(con)
    dim = src.dims[model]
    missing: list[int] = []
    meta = {"embedder": {"name": model, "model": model},
            "source": {"kind": "sqlite-docs", "path": src.path, "model": model,
                       "fts_table": src.fts_table}}
    fields = [pa.field(SOURCE_ROWID, pa.int64()), *[pa.field(c, t) for c, t in types.items()],
              pa.field("vector", pa.list_(pa.float32(), dim))]
    schema = pa.schema(fields, metadata={META_KEY: json.dumps(meta).encode()})
    reader = pa.RecordBatchReader.from_batches(
        schema, (b.cast(schema) if b.schema != schema else b
                 for b in _batches(con, types, model, dim, missing)))
    tbl = lancedb.connect(str(tmp)).create_table(CHUNKS, reader, on_bad_vectors="null")
    if src.fts_table is None and "text" in types and tbl.count_rows():
        from lancedb.index import FTS

        tbl.create_index("text", config=FTS())  # the copy is ours: index it in place
    return {"without_vector": sum(missing)}


def _stale_note(where: Path) -> int:
    ready = cache.read_ready(where) or {}
    try:
        return int(ready.get("without_vector", 0))
    except (TypeError, ValueError):
        return 0


@dataclass
class DocsStore(Store):
    """A Store over the working copy whose full-text leg is the source's own FTS5."""

    source: DocsSource | None = None
    model: str | None = None
    fts5: Any = field(default=None, repr=False, compare=False)
    lease: cache.Lease | None = field(default=None, repr=False, compare=False)  # of the copy
    connection: Any = field(default=None, repr=False, compare=False)  # read-only, see sqlite_ro
    lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)

    def source_rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of one query on the SQLite source itself, through the connection it was opened
        with: `immutable=1` or a private snapshot, so nothing beside the file is ever written.
        Only SELECT statements; SQLite's own errors (a bad FTS5 expression) pass through."""
        if self.connection is None:
            raise InspectorError("This docs store has no SQLite source connection.")
        if not sql.lstrip().upper().startswith("SELECT"):
            raise InspectorError("Only SELECT statements are run on a docs store's source.")
        with self.lock:
            return self.connection.execute(sql, args).fetchall()

    def fts_index_column(self) -> str | None:
        return self.roles.text if self.fts5 is not None else super().fts_index_column()

    def latest_version(self) -> int:
        return self.version

    def table_names(self) -> list[str]:
        return [CHUNKS]

    def has_newer(self) -> bool:
        """True when the SQLite file (or its -wal) changed since the copy was made."""
        return self.source is not None and source_stamp(Path(self.source.path)) != self.source.stamp

    def reopen(self, version: int | None = None) -> Store:
        return open_docs_store(self.uri, roles=self.role_overrides, model=self.model)


def open_docs_store(path: str, table: str | None = None, roles: dict[str, str] | None = None,
                    model: str | None = None) -> DocsStore:
    """Open a docs SQLite file read-only as a Store over its cached LanceDB working copy."""

    if table not in (None, CHUNKS):
        raise InspectorError(f"A SQLite docs store has one table, '{CHUNKS}', not '{table}'.")
    con, read_mode = connect_readonly(path)
    src = inspect_source(con, path, read_mode)
    chosen = choose_model(src, model)
    checked_dim(con, src, chosen)
    tbl, lease = working_copy(con, src, chosen)
    detected = detect_roles(tbl.schema, roles)
    meta = read_meta(tbl.schema)
    notes = []
    if len(src.models) > 1:
        notes.append(f"embeddings from {len(src.models)} models; using '{chosen}' "
                     f"(others: {', '.join(m for m in src.models if m != chosen)})")
    if (n := _stale_note(lease.where)):
        notes.append(f"{n} chunks have no '{chosen}' embedding and no vector hit")
    if src.fts_table is None:
        notes.append("no FTS5 table: full-text search uses a private LanceDB index instead")
    meta["notes"] = notes
    lock = threading.Lock()
    fts5 = Fts5Table(con, src, tbl, lock=lock) if src.fts_table else None
    return DocsStore(uri=path, table_name=CHUNKS, table=fts5 or tbl, roles=detected,
                     version=int(tbl.version), rows=int(tbl.count_rows()),
                     dim=int(src.dims[chosen]), meta=meta, role_overrides=roles,
                     source=src, model=chosen, fts5=fts5, lease=lease, connection=con,
                     lock=lock)


def describe_docs_store(path: str) -> list[TableInfo]:
    store = open_docs_store(path)
    return [TableInfo(name=CHUNKS, rows=store.rows, version=store.version,
                      columns={f.name: str(f.type) for f in store.schema}, roles=store.roles,
                      dim=store.dim, fts_indexed=store.fts5 is not None,
                      notes=tuple(store.meta.get("notes", [])),
                      read_mode=store.source.read_mode if store.source else "sqlite")]
