"""Test helpers shared across tests/: write real LanceDB tables, hash a store's files."""

from __future__ import annotations

import contextlib
import hashlib
import socket
import sqlite3
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


def write_fragments(path: Path, parts: list[pa.Table], delete: str | None = None,
                    name: str = "memories") -> Path:
    """One table written as one fragment per part (created, then each further part added),
    then the rows matching `delete` deleted: a store as a long-running agent leaves it."""
    tbl = lancedb.connect(str(path)).create_table(name, parts[0])
    for part in parts[1:]:
        tbl.add(part)
    if delete:
        tbl.delete(delete)
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


# ---- the docs engine's SQLite store, with its exact schema ----

DOCS_DIM = 24
DOCS_REPOS = ("platform-docs", "vault-agent", "billing-api", "Mixed-Case")
DOCS_WORDS = ("rotate", "signing", "keys", "tokens", "deploy", "canary", "cache", "redis", "logs",
         "retention", "schema", "migration", "theme", "editor", "quota", "limits")

CHUNKS_SQL = """CREATE TABLE docs_chunks (
    id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, repo TEXT NOT NULL,
    path TEXT NOT NULL, doc_kind TEXT, heading_path TEXT, title TEXT, text TEXT NOT NULL,
    source_kind TEXT, source_ref TEXT, ts_hint INTEGER, content_hash TEXT, updated_at TEXT)"""
FTS_SQL = """CREATE VIRTUAL TABLE docs_fts USING fts5(text, title, heading_path, path, repo,
    doc_kind, content='docs_chunks', content_rowid='id')"""
EMB_SQL = """CREATE TABLE docs_embeddings (chunk_rowid INTEGER NOT NULL, model TEXT NOT NULL,
    dim INTEGER NOT NULL, vector BLOB NOT NULL, norm REAL NOT NULL, text_hash TEXT,
    created_at TEXT)"""


def build_docs_db(path: Path, n: int = 240, seed: int = 3, model: str = "hash-v1",
                  skip_every: int = 17) -> dict[str, np.ndarray]:
    """A docs store with the engine's exact schema; vectors are NOT unit length."""
    rng = np.random.default_rng(seed)
    con = sqlite3.connect(path)
    con.executescript(CHUNKS_SQL + ";" + FTS_SQL + ";" + EMB_SQL + ";")
    vecs = rng.normal(size=(n, DOCS_DIM)) * rng.uniform(0.2, 5.0, size=(n, 1))
    repos = []
    for i in range(n):
        repo = DOCS_REPOS[0] if i % 3 else DOCS_REPOS[1 + (i // 3) % 3]
        repos.append(repo)
        path_ = f"{repo}/docs/page{i % 23}.md"
        words = " ".join(rng.choice(DOCS_WORDS, size=int(rng.integers(3, 12))))
        con.execute("INSERT INTO docs_chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (i + 1, f"{repo}:{path_}", f"{repo}:{path_}#{i}", repo, path_, "guide",
                     f"Guide > Part {i % 5}", f"Page {i % 23}", words, "git", "abc123",
                     1_700_000_000 + i, f"h{i}", "2026-01-01T00:00:00Z"))
        if skip_every and i % skip_every == 5:
            continue  # a chunk without an embedding
        v = vecs[i].astype("<f4")
        con.execute("INSERT INTO docs_embeddings VALUES (?,?,?,?,?,?,?)",
                    (i + 1, model, DOCS_DIM, v.tobytes(), float(np.linalg.norm(v)), f"h{i}",
                     "2026-01-01"))
    con.execute("INSERT INTO docs_fts(rowid, text, title, heading_path, path, repo, doc_kind) "
                "SELECT id, text, title, heading_path, path, repo, doc_kind FROM docs_chunks")
    con.commit()
    con.close()
    return {"vectors": vecs.astype("<f4").astype(np.float64), "repos": np.array(repos)}


def write_random_store(path: Path, n: int = 300, dim: int = 8, seed: int = 0,
                       repos: int = 6) -> Path:
    """n random rows over several repos, with importance (some missing, some outside 0-1)."""
    rng = np.random.default_rng(seed)
    names = [f"repo{r}" for r in range(repos)]
    imp = [None if i % 11 == 0 else float(rng.uniform(-0.2, 1.2)) for i in range(n)]
    return write_table(path, {
        "id": [f"m{i:04d}" for i in range(n)],
        "text": [f"note {i} about {'keys' if i % 3 else 'tokens'} and {names[i % repos]}"
                 for i in range(n)],
        "vector": rng.normal(size=(n, dim)).astype(np.float32),
        "importance": pa.array(imp, pa.float64()),
        "category": ["fact"] * n,
        "repo": [names[int(rng.integers(repos))] for _ in range(n)],
        "path": [f"{names[i % repos]}/docs/{i}.md" for i in range(n)],
    })


def write_tuning_store(path: Path, n: int = 240, dim: int = 8, seed: int = 3,
                       repos: int = 5) -> Path:
    """n random rows over several repos; repo0 is rare (crowded out under a post-filter)."""
    rng = np.random.default_rng(seed)
    names = [f"repo{r}" for r in range(repos)]
    repo = [names[0] if i % 12 == 0 else names[1 + i % (repos - 1)] for i in range(n)]
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    imp = [None if i % 13 == 0 else round(float(rng.uniform(0, 1)), 3) for i in range(n)]
    words = ("keys", "tokens", "rotate", "deploy", "cache", "logs")
    table = pa.table({
        "id": [f"m{i:04d}" for i in range(n)],
        "text": [f"note {i} {words[i % 6]} {words[(i * 7) % 6]} {repo[i]}" for i in range(n)],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dim),
        "importance": pa.array(imp, pa.float64()),
        "repo": repo,
        "path": [f"{repo[i]}/docs/{i}.md" for i in range(n)],
    })
    db = lancedb.connect(str(path))
    db.create_table("memories", table)
    return path


class CountingTable:
    """A LanceDB table that counts its searches and passes everything else through (set it
    as an opened store's `table` to count the round trips a call makes)."""

    def __init__(self, table: Any) -> None:
        self._table, self.searches = table, 0

    def search(self, *a: Any, **k: Any) -> Any:
        self.searches += 1
        return self._table.search(*a, **k)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


def write_mixed_store(path: Path, n: int = 300, intid: bool = False, seed: int = 1) -> Path:
    """n rows with what the classic pipeline's rules trip on: integer or text ids, missing,
    NaN and out-of-range importance, exact twin vectors, a mixed-case repo, '' and NULL
    scopes, two agents; a full-text index on text."""
    rng = np.random.default_rng(seed)
    names = [f"repo{r}" for r in range(6)]
    imp = [None if i % 11 == 0 else (float("nan") if i % 17 == 0 else
                                      float(rng.uniform(-0.2, 1.2))) for i in range(n)]
    vecs = rng.normal(size=(n, 16)).astype(np.float32)
    vecs[5] = vecs[6]
    vecs[40] = vecs[41]
    words = ("keys", "tokens", "rotate", "deploy", "cache", "logs")
    table = pa.table({
        "id": list(range(n)) if intid else [f"m{i:04d}" for i in range(n)],
        "text": [f"note {words[i % 6]} {words[(i * 7) % 6]}" for i in range(n)],
        "vector": vectors_column(vecs), "importance": pa.array(imp, pa.float64()),
        "repo": [names[int(rng.integers(6))] if i % 9 else "Repo0" for i in range(n)],
        "path": [f"{names[i % 6]}/docs/{i}.md" for i in range(n)],
        "scope": [["agent:main", "agent:ops", "", None][int(rng.integers(4))] for _ in range(n)],
        "agentId": [["main", "ops"][int(rng.integers(2))] for _ in range(n)]})
    tbl = lancedb.connect(str(path)).create_table("memories", table)
    tbl.create_fts_index("text")
    return path
