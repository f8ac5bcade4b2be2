"""The docs engine's full-text leg, run on its own FTS5 table in the read-only SQLite source.

`Fts5Table` stands in for the LanceDB working copy: full-text searches go to SQLite
(`bm25()` over every FTS5 column, as the engine ranks them), everything else goes to the copy.
It answers the same small query-builder surface the pool uses (select, with_row_id, limit,
where, to_arrow), so the pipeline runs unchanged. Scores come back as `-bm25()` (FTS5's bm25
is lower-is-better), so higher is better like LanceDB's `_score`; ties go by source rowid.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.stores.docs_source import SOURCE_ROWID, DocsSource

_WORD = re.compile(r"\w+", re.UNICODE)
FTS5_OPERATORS = ("OR", "AND")


def fts5_match(text: str, operator: str = "OR") -> str | None:
    """The MATCH expression for free text: each word quoted (so no word is FTS5 syntax),
    joined by OR (any word) or AND (all words). None when the text has no words."""
    words = _WORD.findall(text or "")
    if not words:
        return None
    return f" {operator} ".join('"' + w.replace('"', '""') + '"' for w in words)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Fts5Table:
    """A LanceDB table whose `search(text, query_type="fts")` runs on the SQLite FTS5 table."""

    def __init__(self, con: sqlite3.Connection, src: DocsSource, table: Any,
                 operator: str = "OR", lock: Any = None) -> None:
        self._con = con
        self._lock = lock if lock is not None else threading.Lock()  # one per connection
        self._src = src
        self._table = table
        self.operator = operator
        self._keys: np.ndarray | None = None  # FTS rowid of each working-copy row, sorted
        self._order: np.ndarray | None = None
        self._src_rowids: np.ndarray | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    @property
    def lance_table(self) -> Any:
        return self._table

    def search(self, query: Any = None, query_type: str = "auto", **kw: Any) -> Any:
        if query_type == "fts" and isinstance(query, str):
            return Fts5Query(self, query)
        return self._table.search(query, query_type=query_type, **kw) if query is not None \
            else self._table.search(**kw)

    def source_rowids(self) -> np.ndarray:
        """docs_chunks rowid of each working-copy row; ascending, as the copy is written."""
        if self._src_rowids is None:
            got = self._table.search().select([SOURCE_ROWID]).limit(None).to_arrow()
            self._src_rowids = np.asarray(got.column(0).to_numpy(zero_copy_only=False),
                                          np.int64)
        return self._src_rowids

    def _mapping(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted FTS5 rowids and the working-copy offset answering to each."""
        if self._keys is None:
            name = self._src.fts_rowid_column
            if name.lower() in ("rowid", "oid", "_rowid_"):
                arr = self.source_rowids()
            else:
                got = self._table.search().select([name]).limit(None).to_arrow()
                arr = np.asarray(got.column(0).to_numpy(zero_copy_only=False), np.int64)
            self._order = np.argsort(arr, kind="stable")
            self._keys = arr[self._order]
        return self._keys, self._order  # type: ignore[return-value]

    def offsets_of(self, fts_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Working-copy offsets of FTS5 rowids, and which rowids have a row at all."""
        keys, order = self._mapping()
        if not len(keys):
            return np.zeros(0, np.int64), np.zeros(len(fts_ids), bool)
        pos = np.minimum(np.searchsorted(keys, fts_ids), len(keys) - 1)
        known = keys[pos] == fts_ids
        return order[pos[known]], known

    def matches(self, text: str, limit: int | None) -> tuple[np.ndarray, np.ndarray]:
        """FTS5 rowids and -bm25 scores, best first, ties by rowid."""
        expr = fts5_match(text, self.operator)
        if expr is None:
            return np.zeros(0, np.int64), np.zeros(0)
        t = _ident(self._src.fts_table or "")
        sql = (f"SELECT rowid, bm25({t}) FROM {t} WHERE {t} MATCH ? "
               f"ORDER BY bm25({t}), rowid" + (" LIMIT ?" if limit is not None else ""))
        args: tuple[Any, ...] = (expr,) if limit is None else (expr, int(limit))
        with self._lock:
            rows = self._con.execute(sql, args).fetchall()
        ids = np.array([r[0] for r in rows], np.int64)
        return ids, -np.array([r[1] for r in rows], np.float64)


class Fts5Query:
    """The slice of LanceDB's query builder the pool calls, answered from FTS5."""

    def __init__(self, owner: Fts5Table, text: str) -> None:
        self._o = owner
        self._text = text
        self._cols: list[str] | None = None
        self._rowid = False
        self._k: int | None = 10
        self._where: Any = None

    def select(self, cols: list[str]) -> Fts5Query:
        self._cols = [c for c in cols if c != "_score"]
        return self

    def with_row_id(self, flag: bool = True) -> Fts5Query:
        self._rowid = flag
        return self

    def limit(self, k: int | None) -> Fts5Query:
        self._k = k
        return self

    def where(self, expr: Any, prefilter: bool = True) -> Fts5Query:
        self._where = expr
        return self

    def _allowed(self) -> np.ndarray:
        """Working-copy offsets passing the pushed-down predicate, evaluated by LanceDB."""
        got = (self._o.lance_table.search().where(self._where).select([SOURCE_ROWID])
               .limit(None).to_arrow())
        src = np.asarray(got.column(0).to_numpy(zero_copy_only=False), np.int64)
        return np.searchsorted(self._o.source_rowids(), src)

    def to_arrow(self) -> pa.Table:
        tbl = self._o.lance_table
        fts_ids, scores = self._o.matches(self._text, None if self._where is not None
                                          else self._k)
        offsets, known = self._o.offsets_of(fts_ids)
        fts_ids, scores = fts_ids[known], scores[known]
        if self._where is not None:
            keep = np.isin(offsets, self._allowed())
            offsets, fts_ids, scores = offsets[keep], fts_ids[keep], scores[keep]
        if self._k is not None:
            offsets, fts_ids, scores = offsets[: self._k], fts_ids[: self._k], scores[: self._k]
        cols = list(self._cols or [f.name for f in tbl.schema if f.name != "vector"])
        out = self._rows(tbl, cols, offsets)
        out = out.append_column("_score", pa.array(scores, pa.float64()))
        if self._rowid:
            out = out.append_column("_rowid", pa.array(fts_ids.astype(np.uint64), pa.uint64()))
        return out

    def _rows(self, tbl: Any, cols: list[str], offsets: np.ndarray) -> pa.Table:
        """The working copy's rows at these offsets, in this order."""
        if not len(offsets):
            return tbl.search().select(cols).limit(1).to_arrow().slice(0, 0)
        uniq = np.unique(offsets)
        got = tbl.take_offsets([int(x) for x in uniq]).select(
            list(dict.fromkeys([*cols, SOURCE_ROWID]))).to_arrow()
        where = {int(v): i for i, v in enumerate(
            got.column(SOURCE_ROWID).to_numpy(zero_copy_only=False))}
        want = self._o.source_rowids()[offsets]
        return got.take(pa.array([where[int(v)] for v in want])).select(cols)
