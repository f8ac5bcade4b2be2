"""Real indexed LanceDB tables for tests: clustered vectors, an agent column with one rare
agent (a selective scope), trained IVF_PQ / IVF_HNSW_SQ indexes (>= 5,000 rows)."""

from __future__ import annotations

from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa

from tests.storekit import vectors_column

N, DIM, CLUSTERS = 6000, 32, 48
RARE = "rare"  # ~1 % of rows, in a few clusters only: a selective pushed-down scope


def data(seed: int = 7) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """ids, vectors, agentId and importance, deterministic."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((CLUSTERS, DIM)).astype(np.float32) * 3
    label = rng.integers(0, CLUSTERS, N)
    vecs = (centers[label] + rng.standard_normal((N, DIM)).astype(np.float32)).astype(np.float32)
    agents = np.where(rng.random(N) < 0.5, "main", "ops").astype(object)
    rare = np.flatnonzero(label < 3)[:60]
    agents[rare] = RARE
    ids = [f"r{i:05d}" for i in range(N)]
    return ids, vecs, list(agents), rng.uniform(0, 1, N)


def build(path: Path, kind: str, seed: int = 7) -> Path:
    """A store folder with table `memories` indexed by `kind` (IVF_PQ or IVF_HNSW_SQ)."""
    from lancedb.index import HnswSq, IvfPq

    ids, vecs, agents, imp = data(seed)
    tbl = pa.table({"id": ids, "text": [f"memory {i}" for i in ids], "vector": vectors_column(vecs),
                    "agentId": agents, "importance": imp})
    db = lancedb.connect(str(path))
    t = db.create_table("memories", tbl)
    config = (IvfPq(num_partitions=64, num_sub_vectors=4, sample_rate=32) if kind == "IVF_PQ"
              else HnswSq(num_partitions=4, sample_rate=32, m=8, ef_construction=60))
    t.create_index("vector", config=config)
    return path


def queries(n: int, seed: int = 11) -> np.ndarray:
    """Query vectors near the data (perturbed rows), deterministic."""
    _, vecs, _, _ = data()
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(vecs), n, replace=False)
    return (vecs[pick] + 0.5 * rng.standard_normal((n, DIM))).astype(np.float32)


def exact_ids(vecs: np.ndarray, ids: list[str], q: np.ndarray, k: int,
              mask: np.ndarray | None = None) -> list[str]:
    """An independent exact ranking: squared L2 in numpy, ties by row position."""
    d = ((vecs.astype(np.float64) - q.astype(np.float64)) ** 2).sum(axis=1)
    rows = np.arange(len(ids)) if mask is None else np.flatnonzero(mask)
    order = rows[np.lexsort((rows, d[rows]))][:k]
    return [ids[i] for i in order]
