"""The docs engine's SQLite file as a source: recognise it, read it without writing, and find
its chunks table, FTS5 table and embedding models."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.stores.safety.bounds import MAX_DIM
from inspector.core.stores.safety.sqlite_ro import IMMUTABLE, connect_readonly, file_stamp

SQLITE_MAGIC = b"SQLite format 3\x00"
CHUNKS = "docs_chunks"
EMBEDDINGS = "docs_embeddings"
SOURCE_ROWID = "source_rowid"
_FTS5 = re.compile(r"using\s+fts5\s*\(", re.I)
_CONTENT = re.compile(r"content\s*=\s*['\"]?docs_chunks['\"]?\s*[,)]", re.I)
_CONTENT_ROWID = re.compile(r"content_rowid\s*=\s*['\"]?(\w+)", re.I)


def is_sqlite_file(path: Path) -> bool:
    """True for a regular file that starts with SQLite's 16-byte header."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def connect_ro(path: str | Path) -> sqlite3.Connection:
    """A connection that never writes beside the file (see sqlite_ro for how)."""
    return connect_readonly(path)[0]


@dataclass(frozen=True)
class DocsSource:
    """What the source file holds: its FTS5 table and the embedding models present."""

    path: str
    fts_table: str | None
    fts_rowid_column: str  # the docs_chunks column the FTS5 rowid refers to
    models: dict[str, int] = field(default_factory=dict)  # model -> number of embeddings
    dims: dict[str, int] = field(default_factory=dict)  # model -> dim
    stamp: tuple[Any, ...] = ()  # source_stamp at opening
    read_mode: str = IMMUTABLE  # how the file is read: sqlite_ro.IMMUTABLE or SNAPSHOT


def source_stamp(path: Path) -> tuple[Any, ...]:
    """Changes whenever the file, its -wal or -journal is written, or the file is recreated."""
    return file_stamp(path)


def inspect_source(con: sqlite3.Connection, path: str, read_mode: str = IMMUTABLE) -> DocsSource:
    """Find the chunks table, the FTS5 table over it, and the embedding models."""
    tables = {name: (sql or "") for name, sql in
              con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")}
    if CHUNKS not in tables:
        raise InspectorError(f"{path} is a SQLite file but not a docs store: it has no "
                             f"{CHUNKS} table (tables: {', '.join(sorted(tables)) or 'none'}).")
    fts5 = [n for n, sql in sorted(tables.items()) if _FTS5.search(sql)]
    # prefer the FTS5 table whose external content is docs_chunks
    over = [n for n in fts5 if _CONTENT.search(tables[n])]
    fts = (over or fts5 or [None])[0]
    rowid_col = "rowid"
    if fts is not None and (m := _CONTENT_ROWID.search(tables[fts])):
        rowid_col = m.group(1)
    models: dict[str, int] = {}
    dims: dict[str, int] = {}
    if EMBEDDINGS in tables:
        for model, dim, n in con.execute(f"SELECT model, dim, count(*) FROM {EMBEDDINGS} "
                                         "GROUP BY model, dim ORDER BY count(*) DESC"):
            if model not in models:
                if isinstance(dim, float) and dim.is_integer():
                    dim = int(dim)
                if not isinstance(dim, int):
                    raise InspectorError(f"{path}: the embeddings of model '{model}' declare "
                                         f"the dimension {dim!r}, not a whole number.")
                models[str(model)], dims[str(model)] = int(n), int(dim)
    return DocsSource(path=path, fts_table=fts, fts_rowid_column=rowid_col, models=models,
                      dims=dims, stamp=source_stamp(Path(path)), read_mode=read_mode)


def checked_dim(con: sqlite3.Connection, src: DocsSource, model: str) -> int:
    """The model's declared dimension, once it is within MAX_DIM and the stored vectors hold
    that many float32 values: checked before anything the size of the declared dimension is
    allocated (a file declaring 1,000,000 made `tables` reserve gigabytes)."""
    dim = src.dims[model]
    if not 1 <= dim <= MAX_DIM:
        raise InspectorError(f"{src.path}: the embeddings of model '{model}' declare dimension "
                             f"{dim:,}; the inspector reads 1 to {MAX_DIM:,}.")
    n, fitting, shortest, longest = con.execute(
        f"SELECT count(*), coalesce(sum(length(vector) = ?), 0), min(length(vector)), "
        f"max(length(vector)) FROM {EMBEDDINGS} WHERE model = ? AND dim = ?",
        (4 * dim, model, dim)).fetchone()
    if n and not fitting:
        held = (f"{shortest:,} bytes" if shortest == longest else
                f"{shortest:,} to {longest:,} bytes")
        raise InspectorError(f"{src.path}: the embeddings of model '{model}' declare dimension "
                             f"{dim:,} ({4 * dim:,} bytes of float32), but none of its {n:,} "
                             f"vectors is that long (they hold {held}).")
    return dim


def choose_model(src: DocsSource, model: str | None) -> str:
    if not src.models:
        raise InspectorError(f"{src.path} holds no embeddings ({EMBEDDINGS} is missing or "
                             "empty), so it cannot be searched by vector.")
    if model is None:
        return next(iter(src.models))  # the most common model
    if model not in src.models:
        raise InspectorError(f"{src.path} has no embeddings from model '{model}'; models: "
                             f"{', '.join(src.models)}.")
    return model
