"""Test helpers shared across tests/: write real LanceDB tables, hash a store's files."""

from __future__ import annotations

import contextlib
import hashlib
import socket
from collections.abc import Iterator
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


def rows_at_distance(ids: list[str], dist: list[float], dim: int = 4) -> pa.Table:
    """Rows whose squared L2 distance to (1, 0, 0, ...) is exactly `dist`."""
    vecs = np.zeros((len(ids), dim), np.float32)
    vecs[:, 0] = 1 - np.sqrt(np.asarray(dist))
    return pa.table({"id": ids, "text": [f"memory {i}" for i in ids],
                     "vector": vectors_column(vecs), "importance": [0.5] * len(ids)})


def versioned_store(path: Path) -> Path:
    """Three versions: v1: m0..m4 at 0.1..0.5; v2: n0, n1 arrive closer (m3, m4 leave a
    top 5); v3: m0 deleted."""
    tbl = lancedb.connect(str(path)).create_table(
        "memories", rows_at_distance([f"m{i}" for i in range(5)], [0.1, 0.2, 0.3, 0.4, 0.5]))
    tbl.add(rows_at_distance(["n0", "n1"], [0.01, 0.02]))
    tbl.delete("id = 'm0'")
    return path


@contextlib.contextmanager
def moto_s3(bucket: str, key: str = "testing") -> Iterator[tuple[str, Any]]:
    """An S3 server (moto) on a free loopback port holding one empty bucket; yields its
    endpoint and a boto3 client. Nothing leaves this machine."""
    import boto3
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id=key, aws_secret_access_key=key)
        client.create_bucket(Bucket=bucket)
        yield endpoint, client
    finally:
        server.stop()
