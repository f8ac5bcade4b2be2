"""The other public plugin's table (scope kinds, metadata JSON, timestamp in ms): roles, the
`other-plugin` preset, and its ranking (cosine, over-fetch min(limit*10, 200), multiplier
0.7 + 0.3 * importance, scope filtered after the fetch) computed here on the same rows."""

from __future__ import annotations

import json
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.core.stores.opening import open_store
from inspector.core.stores.shapes import detect_shape
from tests.askkit import ask
from tests.storekit import snapshot

DIM = 12
SCOPES = ("global", "agent:main", "agent:helper", "project:inspector")
SCHEMA = pa.schema([
    pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
    pa.field("vector", pa.list_(pa.float32(), DIM)), pa.field("category", pa.utf8()),
    pa.field("scope", pa.utf8()), pa.field("importance", pa.float64()),
    pa.field("timestamp", pa.int64()), pa.field("metadata", pa.utf8())])


def build_plugin_store(path: Path, n: int = 400, seed: int = 11) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    cols = {
        "id": [f"p{i:05d}" for i in range(n)],
        "text": [f"plugin memory {i}" for i in range(n)],
        "vector": list(rng.normal(size=(n, DIM)).astype(np.float32)),
        "category": ["fact"] * n,
        "scope": [SCOPES[int(rng.integers(4))] for _ in range(n)],
        "importance": [float(rng.uniform(-0.1, 1.1)) for _ in range(n)],
        "timestamp": [1_767_000_000_000 + 60_000 * i for i in range(n)],
        "metadata": [json.dumps({"source": "chat", "n": i}) for i in range(n)],
    }
    tbl = pa.table({k: pa.array(v, SCHEMA.field(k).type) for k, v in cols.items()},
                   schema=SCHEMA)
    lancedb.connect(str(path)).create_table("memories", tbl)
    return cols


def plugin_search(cols: dict[str, list], q: np.ndarray, limit: int, scope: str
                  ) -> list[tuple[str, float]]:
    v = np.asarray(cols["vector"], np.float64)
    qq = q.astype(np.float64)
    dist = 1.0 - (v @ qq) / (np.linalg.norm(v, axis=1) * np.linalg.norm(qq))
    fetched = sorted(range(len(dist)), key=lambda i: dist[i])[: min(limit * 10, 200)]
    scored = []
    for i in fetched:
        if cols["scope"][i] != scope:
            continue
        imp = min(1.0, max(0.0, cols["importance"][i]))
        scored.append((cols["id"][i], 1.0 / (1.0 + dist[i]) * (0.7 + 0.3 * imp)))
    scored.sort(key=lambda t: -t[1])
    return scored[:limit]


@pytest.mark.parametrize("scope", ["agent:main", "project:inspector", "global"])
@pytest.mark.parametrize("limit", [3, 10, 30])
def test_other_plugin_preset_reproduces_its_ranking(tmp_path, scope, limit):
    path = tmp_path / "plugin"
    cols = build_plugin_store(path)
    before = snapshot(path)
    store = open_store(str(path))
    r = store.roles
    assert (r.created, r.scope, r.importance, r.category) == (
        "timestamp", "scope", "importance", "category")
    assert detect_shape(store).preset == "memory-lancedb-pro"  # what wrote it (today)
    q = np.random.default_rng(limit).normal(size=DIM).astype(np.float32)
    trace = ask(store, preset="other-plugin", vector=q, limit=limit, scope=scope).trace
    want = plugin_search(cols, q, limit, scope)
    assert trace.stage("fetch").facts["depth"] == min(limit * 10, 200)
    assert trace.final.ids == [i for i, _ in want]
    got = [s.score for s in trace.final.rows]
    np.testing.assert_allclose(got, [s for _, s in want], rtol=1e-5)
    assert snapshot(path) == before
