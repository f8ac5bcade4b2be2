"""Real indexed LanceDB tables for tests: clustered vectors, an agent column with one rare
agent (a selective scope), trained IVF_PQ / IVF_HNSW_SQ indexes (>= 5,000 rows)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def build(path: Path, kind: str, seed: int = 7,
          accept: Callable[[Any], bool] | None = None, tries: int = 6) -> Path:
    """A store folder with table `memories` indexed by `kind` (IVF_PQ or IVF_HNSW_SQ).

    LanceDB trains its index unseeded, so the partitions differ from run to run; now and then
    k-means gives two far clusters one centroid. A test whose story needs a property of the
    trained index (one partition is not enough for a query between clusters) names it as
    `accept(table)`: the index is retrained until it holds, and the fixture fails if it never
    does, instead of the test failing one run in twenty on the training's luck."""
    from lancedb.index import HnswSq, IvfPq

    ids, vecs, agents, imp = data(seed)
    tbl = pa.table({"id": ids, "text": [f"memory {i}" for i in ids], "vector": vectors_column(vecs),
                    "agentId": agents, "importance": imp})
    db = lancedb.connect(str(path))
    t = db.create_table("memories", tbl)
    config = (IvfPq(num_partitions=64, num_sub_vectors=4, sample_rate=32) if kind == "IVF_PQ"
              else HnswSq(num_partitions=4, sample_rate=32, m=8, ef_construction=60))
    t.create_index("vector", config=config)
    for _ in range(tries - 1):
        if accept is None or accept(t):
            return path
        t.create_index("vector", config=config, replace=True)
    assert accept is None or accept(t), f"{tries} trainings of {kind}: never the index asked for"
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


def bare_recall(table: Any, q: np.ndarray, nprobes: int, agent: str, k: int = 10,
                depth: int | None = None) -> float:
    """LanceDB's own scoped recall@k for `q` (agentId pushed down) when asked for `depth` rows
    with nprobes n, against the exact ranking in numpy."""
    ids, vecs, agents, _ = data()
    got = (table.search(q).nprobes(nprobes).where(f"agentId = '{agent}'").limit(depth or k)
           .to_arrow().column("id").to_pylist()[:k])
    mask = np.asarray(agents, dtype=object) == agent
    return len(set(got) & set(exact_ids(vecs, ids, q, k, mask))) / k
