"""The public engine's own memory table (nullable importance, importance_label, scope default
'global', trust_tier): roles, the `engine-memory` preset, and its ranking (LanceDB FTS + vector,
both filtered by scope, RRF k = 60) computed here on the same rows."""

from __future__ import annotations

from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import FTS

from inspector.core.stores.opening import open_store
from inspector.core.stores.shapes import detect_shape, importance_label
from tests.askkit import final_ids
from tests.storekit import snapshot

DIM = 16
WORDS = ("editor", "theme", "dark", "light", "deploy", "friday", "keys", "rotate", "coffee",
         "tea", "vim", "emacs", "review", "tests")
SCOPES = ("global", "proj-a", "proj-b")

SCHEMA = pa.schema([
    pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
    pa.field("vector", pa.list_(pa.float32(), DIM)), pa.field("createdAt", pa.int64()),
    pa.field("category", pa.utf8()), pa.field("importance", pa.float64(), nullable=True),
    pa.field("importance_label", pa.utf8(), nullable=True), pa.field("scope", pa.utf8()),
    pa.field("trust_tier", pa.utf8())])


def _label(x: float | None) -> str | None:
    if x is None:
        return None  # the engine leaves it unset; the inspector reads that as 'unknown'
    return "must_remember" if x >= 0.8 else "nice_to_have" if x >= 0.5 else "ignore"


def build_engine_store(path: Path, n: int = 220, seed: int = 5) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    imp = [None if i % 7 == 0 else float(rng.choice([0.2, 0.5, 0.79, 0.8, 0.95]))
           for i in range(n)]
    cols = {
        "id": [f"mem-{i:04d}" for i in range(n)],
        "text": [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 9)))) for _ in range(n)],
        "vector": list(rng.normal(size=(n, DIM)).astype(np.float32)),
        "createdAt": [1_767_000_000_000 + i for i in range(n)],
        "category": ["fact"] * n, "importance": imp,
        "importance_label": [_label(x) for x in imp],
        "scope": [SCOPES[i % 3] for i in range(n)],
        "trust_tier": ["user" if i % 2 else "agent" for i in range(n)],
    }
    tbl = pa.table({k: pa.array(v, SCHEMA.field(k).type) for k, v in cols.items()},
                   schema=SCHEMA)
    t = lancedb.connect(str(path)).create_table("memories", tbl)
    t.create_index("text", config=FTS())  # the engine indexes its own table
    return cols


def engine_recall(path: Path, cols: dict[str, list], q: np.ndarray, text: str, limit: int,
                  scope: str | None, k: int = 20) -> list[str]:
    """Each leg filtered by `scope = S` inside LanceDB, RRF k = 60 (ties by id), cut to limit."""
    tbl = lancedb.connect(str(path)).open_table("memories")
    keep = [i for i in range(len(cols["id"])) if scope is None or cols["scope"][i] == scope]
    v = np.asarray(cols["vector"], np.float64)
    d = ((v - q.astype(np.float64)) ** 2).sum(axis=1)
    vec = [cols["id"][i] for i in sorted(keep, key=lambda i: (d[i], i))[:k]]
    s = tbl.search(text, query_type="fts", fts_columns="text").with_row_id(True).limit(10_000)
    if scope is not None:
        s = s.where(f"scope = '{scope}'", prefilter=True)
    hits = s.select(["id", "_score"]).to_arrow().to_pylist()
    fts = [h["id"] for h in sorted(hits, key=lambda h: (-h["_score"], h["_rowid"]))[:k]]
    fused: dict[str, float] = {}
    for leg in (vec, fts):
        for r, rid in enumerate(leg):
            fused[rid] = fused.get(rid, 0.0) + 1.0 / (60 + r + 1)
    return sorted(fused, key=lambda rid: (-fused[rid], rid))[:limit]


@pytest.fixture
def engine(tmp_path: Path) -> tuple[Path, dict[str, list]]:
    path = tmp_path / "engine"
    return path, build_engine_store(path)


def test_engine_table_roles_and_shape(engine):
    path, _ = engine
    store = open_store(str(path))
    r = store.roles
    assert (r.id, r.text, r.vector, r.importance, r.category, r.created, r.scope) == (
        "id", "text", "vector", "importance", "category", "createdAt", "scope")
    shape = detect_shape(store)
    assert (shape.name, shape.preset) == ("engine-memory", "engine-memory")
    assert store.fts_index_column() == "text"


def test_importance_label_follows_the_engine_thresholds(engine):
    _, cols = engine
    for x, label in zip(cols["importance"], cols["importance_label"], strict=True):
        assert importance_label(x) == (label or "unknown")
    assert [importance_label(x) for x in (0.8, 0.7999, 0.5, 0.4999, None, float("nan"))] == [
        "must_remember", "nice_to_have", "nice_to_have", "ignore", "unknown", "unknown"]


@pytest.mark.parametrize("scope", ["proj-a", "global", None])
@pytest.mark.parametrize("limit", [5, 10])
def test_engine_memory_preset_reproduces_recall(engine, scope, limit):
    path, cols = engine
    before = snapshot(path)
    store = open_store(str(path))
    rng = np.random.default_rng(limit)
    for _ in range(3):
        q = rng.normal(size=DIM).astype(np.float32)
        text = " ".join(rng.choice(WORDS, size=2))
        got = final_ids(store, preset="engine-memory", text=text, vector=q, limit=limit,
                        scope=scope)
        # a 'global' (or no) scope means no filter in the engine
        want = engine_recall(path, cols, q, text, limit, None if scope in (None, "global")
                             else scope)
        assert got == want
    assert snapshot(path) == before
