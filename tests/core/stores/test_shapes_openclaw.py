"""The OpenClaw memory plugin's `memories` table, with its exact column types: roles, the
shape (preset `openclaw`), and the fixed `openclaw-search-defaults` preset's ranking against
MemoryDB.search's formula computed here on the same rows."""

from __future__ import annotations

import uuid
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store
from inspector.core.stores.shapes import detect_shape, known_locations
from tests.askkit import ask, final_ids
from tests.storekit import snapshot

DIM = 1536  # text-embedding-3-small
AGENTS = ("main", "helper")
SCOPES = ("", None, "proj-a", "proj-b", "global")  # 'global' is a plain slug here, not global
CATEGORIES = ("preference", "fact", "decision", "entity", "other")


def _schema(agent: bool, scope: bool) -> pa.Schema:
    fields = [pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
              pa.field("vector", pa.list_(pa.float32(), DIM)),
              pa.field("importance", pa.float64()), pa.field("category", pa.utf8()),
              pa.field("createdAt", pa.float64())]
    if agent:
        fields.append(pa.field("agentId", pa.utf8()))
    if scope:
        fields.append(pa.field("scope", pa.utf8(), nullable=True))
    return pa.schema(fields)


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def build_openclaw(path: Path, n: int = 160, seed: int = 0, agent: bool = True,
                   scope: bool = True) -> tuple[np.ndarray, dict[str, list]]:
    """Unit vectors (as OpenAI returns them) at varied angles to a hidden query vector."""
    rng = np.random.default_rng(seed)
    q = _unit(rng.normal(size=DIM))
    noise = _unit(rng.normal(size=(n, DIM)))
    alpha = rng.uniform(0.0, 1.6, size=(n, 1))
    vecs = _unit(alpha * q + noise).astype(np.float32)
    cols: dict[str, list] = {
        "id": [str(uuid.UUID(int=int(rng.integers(1 << 62)) << 64 | i)) for i in range(n)],
        "text": [f"memory {i}" for i in range(n)],
        "vector": list(vecs),
        "importance": [float(rng.uniform(0, 1)) for _ in range(n)],
        "category": [CATEGORIES[i % 5] for i in range(n)],
        "createdAt": [1.767e12 + 1000.0 * i for i in range(n)],
    }
    if agent:
        cols["agentId"] = [AGENTS[i % 2] for i in range(n)]
    if scope:
        cols["scope"] = [SCOPES[i % 5] for i in range(n)]
    schema = _schema(agent, scope)
    table = pa.table({k: pa.array(v, schema.field(k).type) for k, v in cols.items()},
                     schema=schema)
    lancedb.connect(str(path)).create_table("memories", table)
    cols["vector"] = vecs.astype(np.float64)
    return q.astype(np.float32), cols


def plugin_search(cols: dict[str, list], q: np.ndarray, limit: int, agent: str | None,
                  scope: str | None, min_score: float = 0.5) -> list[tuple[str, float]]:
    """The plugin: `agentId = A AND (scope = S OR scope = '' OR scope IS NULL)` prefilter,
    vector search (squared L2) to `limit`, score 1 / (1 + d), keep score >= min_score."""
    v = np.asarray(cols["vector"])
    d = ((v - q.astype(np.float64)) ** 2).sum(axis=1)
    keep = []
    for i in range(len(d)):
        if agent is not None and cols["agentId"][i] != agent:
            continue
        if scope is not None and cols["scope"][i] not in (scope, "", None):
            continue
        keep.append(i)
    top = sorted(keep, key=lambda i: d[i])[:limit]
    out = [(cols["id"][i], 1.0 / (1.0 + d[i])) for i in top]
    return [(i, s) for i, s in out if s >= min_score]


@pytest.fixture
def store_path(tmp_path: Path) -> tuple[Path, np.ndarray, dict[str, list]]:
    path = tmp_path / "lancedb"
    q, cols = build_openclaw(path)
    return path, q, cols


def test_openclaw_roles_are_detected_from_the_real_types(store_path):
    path, _, _ = store_path
    store = open_store(str(path))
    assert store.table_name == "memories" and store.dim == DIM
    shape = detect_shape(store)
    assert (shape.name, shape.preset) == ("openclaw", "openclaw")
    assert store.roles.as_dict() == {
        "id": "id", "text": "text", "vector": "vector", "importance": "importance",
        "category": "category", "created": "createdAt", "scope": "scope", "agent": "agentId",
        "repo": None, "path": None}


@pytest.mark.parametrize("scope,agent,sub", [("main/proj-a", "main", "proj-a"),
                                             ("helper/proj-b", "helper", "proj-b"),
                                             ("main", "main", None),
                                             ("main/global", "main", "global")])
@pytest.mark.parametrize("limit", [3, 10, 25])
def test_openclaw_preset_reproduces_the_plugin_ranking(store_path, scope, agent, sub, limit):
    path, q, cols = store_path
    before = snapshot(path)
    store = open_store(str(path))
    trace = ask(store, preset="openclaw-search-defaults", vector=q, limit=limit,
                scope=scope).trace
    want = plugin_search(cols, q, limit, agent, sub)
    assert trace.final.ids == [i for i, _ in want]
    got = [s.score for s in trace.final.rows]
    np.testing.assert_allclose(got, [s for _, s in want], rtol=1e-5)
    assert len(trace.stage("min_score").dropped) == limit - len(want) or \
        len(trace.stage("fetch").rows) < limit
    assert snapshot(path) == before


def test_openclaw_pushdown_is_structural_and_treats_empty_and_null_as_global(store_path):
    path, q, cols = store_path
    store = open_store(str(path))
    trace = ask(store, preset="openclaw-search-defaults", vector=q, limit=200,
                scope="main/proj-a", min_score=0.0).trace
    sql = trace.stage("fetch").facts["pushdown_sql"]
    assert "`agentId` = 'main'" in sql and "`scope` = 'proj-a'" in sql
    assert "concat(`scope`) = ''" in sql
    seen = {cols["scope"][cols["id"].index(i)] for i in trace.final.ids}
    assert seen == {"proj-a", "", None}
    assert trace.stage("fetch").rows and not trace.stage("scope").dropped  # all pushed down
    assert final_ids(store, preset="openclaw-search-defaults", vector=q, limit=10,
                     scope="main/x' OR '1'='1", min_score=0.0) == \
        [i for i, _ in plugin_search(cols, q, 10, "main", "x' OR '1'='1", 0.0)]


def test_column_global_post_filter_matches_its_pushdown(store_path):
    path, q, cols = store_path
    store = open_store(str(path))
    base = dict(limit=40, cap=0, scope="proj-b", scope_strategy="column_global",
                scope_column="scope")
    post = ask(store, vector=q, **base, filter="post").trace
    push = ask(store, vector=q, **base, filter="pushdown").trace
    scope_of = {i: cols["scope"][n] for n, i in enumerate(cols["id"])}
    kept = post.stage("scope").ids
    assert {scope_of[i] for i in kept} == {"proj-b", "", None}  # NULL and '' are global
    assert kept == [i for i in post.stage("fetch").ids if scope_of[i] in ("proj-b", "", None)]
    assert push.stage("fetch").facts["pushdown_sql"] and not push.stage("scope").dropped
    # the post-filter keeps exactly the rows the pushdown matches: the nearest of them
    assert push.final.ids[:len(kept)] == kept
    want = push.final.ids
    assert want == [cols["id"][i] for i in sorted(
        (i for i in range(len(cols["id"])) if cols["scope"][i] in ("proj-b", "", None)),
        key=lambda i: ((cols["vector"][i] - q) ** 2).sum())][:40]


def test_older_tables_without_agent_or_scope_still_open_and_rank(tmp_path):
    old = tmp_path / "old"
    q, cols = build_openclaw(old, agent=False, scope=False)
    store = open_store(str(old))
    assert (store.roles.agent, store.roles.scope) == (None, None)
    assert final_ids(store, preset="openclaw-search-defaults", vector=q, limit=5) == \
        [i for i, _ in plugin_search(cols, q, 5, None, None)]
    with pytest.raises(InspectorError, match="needs an agent or scope column"):
        ask(store, preset="openclaw-search-defaults", vector=q, limit=5, scope="main")
    agent_only = tmp_path / "agent_only"
    q2, cols2 = build_openclaw(agent_only, scope=False)
    s2 = open_store(str(agent_only))
    assert final_ids(s2, preset="openclaw-search-defaults", vector=q2, limit=5,
                     scope="helper") == [i for i, _ in plugin_search(cols2, q2, 5, "helper",
                                                                     None)]
    with pytest.raises(InspectorError, match="no scope column; give just the agent id"):
        ask(s2, preset="openclaw-search-defaults", vector=q2, limit=5, scope="helper/proj-a")


def test_known_locations_offer_the_openclaw_folder_only_when_it_exists(tmp_path):
    assert known_locations(tmp_path) == []
    assert not (tmp_path / ".openclaw").exists()
    (tmp_path / ".openclaw" / "memory" / "lancedb").mkdir(parents=True)
    (found,) = known_locations(tmp_path)
    assert found.path == str(tmp_path / ".openclaw" / "memory" / "lancedb")
    assert (found.preset, found.table) == ("openclaw", "memories")
