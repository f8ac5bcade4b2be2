"""Test helpers shared across tests/: write real LanceDB tables, hash a store's files."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa


def vectors_column(vecs: np.ndarray, dtype: pa.DataType | None = None) -> pa.Array:
    vecs = np.asarray(vecs)
    dtype = dtype or pa.float32()
    return pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel(), type=dtype), vecs.shape[1])


def write_table(path: Path, columns: dict[str, Any], name: str = "memories",
                schema: pa.Schema | None = None) -> Path:
    """Write one table; `columns["vector"]` may be a 2-D numpy array."""
    cols = dict(columns)
    if isinstance(cols.get("vector"), np.ndarray):
        cols["vector"] = vectors_column(cols["vector"])
    table = pa.table(cols, schema=schema) if schema is not None else pa.table(cols)
    db = lancedb.connect(str(path))
    db.create_table(name, table)
    return path


def snapshot(path: Path) -> dict[str, str]:
    """Every file under path with its content hash: equal snapshots mean byte-identical trees."""
    out = {}
    for f in sorted(Path(path).rglob("*")):
        if f.is_file():
            out[str(f.relative_to(path))] = hashlib.sha256(f.read_bytes()).hexdigest()
        elif f.is_dir():
            out[str(f.relative_to(path)) + "/"] = "dir"
    return out
