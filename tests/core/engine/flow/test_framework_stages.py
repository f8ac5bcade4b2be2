"""The framework stage kinds on stores built here with each system's exact column types,
against the system's rule computed independently: OpenClaw memory-lancedb's tool search and
auto-recall, Generative Agents' retrieve (released code and paper), and the formulas of the
LanceDB leg that reads struct and JSON columns. (CrewAI, LangChain and LlamaIndex are also
compared with the packages themselves: tests/frameworks.)"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.flow.question import Question, ask
from inspector.core.engine.flow.stages.lance_where import (
    epoch_ms,
    like_prefix,
    scope_holds,
    score_of,
    value_at,
)
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store

DIM = 16


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


# ------------------------------------------------------------------ OpenClaw memory-lancedb

@pytest.fixture(scope="module")
def openclaw(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, np.ndarray, dict]:
    rng = np.random.default_rng(7)
    n = 90
    q = _unit(rng.normal(size=DIM))
    vecs = _unit(rng.uniform(0, 2.5, size=(n, 1)) * q + _unit(rng.normal(size=(n, DIM))))
    cols = {"id": [f"00000000-0000-4000-8000-{i:012d}" for i in range(n)],
            "text": ["   " if i % 11 == 3 else f"memory {i}" for i in range(n)],
            "vector": list(vecs.astype(np.float32)),
            "importance": [float(rng.uniform()) for _ in range(n)],
            "category": ["fact"] * n, "createdAt": [1.767e12 + i for i in range(n)],
            "agentId": ["main" if i % 3 else "helper" for i in range(n)]}
    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
                        pa.field("vector", pa.list_(pa.float32(), DIM)),
                        pa.field("importance", pa.float64()), pa.field("category", pa.utf8()),
                        pa.field("createdAt", pa.float64()), pa.field("agentId", pa.utf8())])
    path = tmp_path_factory.mktemp("openclaw") / "lancedb"
    lancedb.connect(str(path)).create_table(
        "memories", pa.table({k: pa.array(v, schema.field(k).type) for k, v in cols.items()},
                             schema=schema))
    cols["vector"] = vecs.astype(np.float32).astype(np.float64)
    return open_store(str(path), "memories"), q.astype(np.float32), cols


def plugin(cols: dict, q: np.ndarray, agent: str, k: int, min_score: float) -> list[tuple]:
    """MemoryDB.search(agentId, v, k, min): agentId prefilter, top k by squared L2,
    1/(1+d), score >= min; then cleanMemorySearchResults (blank texts out)."""
    d = ((cols["vector"] - q.astype(np.float64)) ** 2).sum(axis=1)
    mine = [i for i in range(len(d)) if cols["agentId"][i] == agent]
    top = sorted(mine, key=lambda i: d[i])[:k]
    hits = [(cols["id"][i], 1 / (1 + d[i])) for i in top if 1 / (1 + d[i]) >= min_score]
    return [(i, s) for i, s in hits if cols["text"][int(i[-12:])].strip()]


def run(store: Any, preset: str, q: np.ndarray, limit: int | None, scopes: list[str] | None,
        **sets: Any) -> Any:
    trace, _ = ask(Question(store=store.uri, preset=preset, vector=[float(x) for x in q],
                            limit=limit, scopes=scopes, set=sets), store)
    return trace


@pytest.mark.parametrize("limit", [1, 3, 5, 12])
@pytest.mark.parametrize("agent", ["main", "helper"])
def test_openclaw_tool_is_limit_plus_ten_min_01_then_the_limit(openclaw: tuple, limit: int,
                                                               agent: str) -> None:
    store, q, cols = openclaw
    t = run(store, "openclaw", q, limit, [agent])
    want = plugin(cols, q, agent, limit + 10, 0.1)[:limit]
    assert [s.id for s in t.final.rows] == [i for i, _ in want]
    for s, (_, score) in zip(t.final.rows, want, strict=True):
        assert s.score == pytest.approx(score, rel=1e-5)
    assert "agentId = '" + agent + "'" in t.stage("fetch").note


@pytest.mark.parametrize("agent", ["main", "helper"])
def test_openclaw_autorecall_fetches_ten_keeps_03_and_injects_three(openclaw: tuple,
                                                                    agent: str) -> None:
    store, q, cols = openclaw
    for limit in (1, 3, 8):  # the caller's limit changes nothing
        t = run(store, "openclaw-autorecall", q, limit, [agent])
        want = plugin(cols, q, agent, 10, 0.3)[:3]
        assert [s.id for s in t.final.rows] == [i for i, _ in want]
        assert len(t.stage("fetch").rows) + len(t.stage("fetch").dropped) == 10


def test_openclaw_search_defaults_are_one_set_away(openclaw: tuple) -> None:
    """MemoryDB.search with its own defaults (limit, min 0.5) is the tool search with no
    extra rows and min score 0.5; blank texts are dropped and said so."""
    store, q, cols = openclaw
    t = run(store, "openclaw", q, 5, ["main"],
            **{"fetch.depth_extra": 0, "fetch.min_score": 0.5})
    assert [s.id for s in t.final.rows] == [i for i, _ in plugin(cols, q, "main", 5, 0.5)]
    blank = run(store, "openclaw", q, 30, ["main"]).stage("clean").dropped
    assert blank and {d.code for d in blank} == {"blank_text"}


def test_openclaw_is_the_tool_today_and_its_first_reading_is_kept_by_name(openclaw: tuple
                                                                          ) -> None:
    """`openclaw` is the memory_recall tool as its code runs now; `openclaw-tool`, its former
    name, is the same pipeline; the first reading (fixed engine, limit, min 0.5) is
    openclaw-search-defaults (the classic shape), which says what it was read from."""
    from inspector.core.engine.flow.fixed import classic_stages
    from inspector.core.engine.flow.spec import load_shipped

    store, q, cols = openclaw
    assert classic_stages(load_shipped("openclaw")) is None  # not the classic shape
    assert load_shipped("openclaw-tool") == load_shipped("openclaw")
    for limit in (1, 5, 12):
        want = [s.id for s in run(store, "openclaw", q, limit, ["main"]).final.rows]
        assert [s.id for s in run(store, "openclaw-tool", q, limit, ["main"]).final.rows] == want
        assert want == [i for i, _ in plugin(cols, q, "main", limit + 10, 0.1)][:limit]
    first = load_shipped("openclaw-search-defaults")
    stages = classic_stages(first)
    assert stages is not None and "REFERENCE.md" in first.version
    assert stages["min_score"].params["min"] == 0.5


# ------------------------------------------------------------------ Generative Agents

def _stream(tmp: Path, n: int = 14, seed: int = 3) -> tuple[Any, np.ndarray, list[dict]]:
    rng = np.random.default_rng(seed)
    q = _unit(rng.normal(size=DIM))
    base = dt.datetime(2023, 2, 13, 9, 0, 0)
    nodes = []
    for i in range(1, n + 1):
        kind = ("event", "thought", "chat")[i % 3]
        created = base + dt.timedelta(minutes=10 * (i // 2))  # pairs share a time
        accessed = created + dt.timedelta(minutes=(i * 37) % 50 if i % 4 else 0)
        nodes.append({"id": f"node_{i}", "node_count": i, "type": kind,
                      "description": f"node {i} {kind}", "poignancy": 1 + (i * 5) % 9,
                      "created": created.strftime("%Y-%m-%d %H:%M:%S"),
                      "last_accessed": accessed.strftime("%Y-%m-%d %H:%M:%S"),
                      "embedding_key": "is idle" if i == 4 else f"node {i}",
                      "vector": _unit(rng.uniform(-1, 1) * q + rng.normal(size=DIM))})
    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("node_count", pa.int64()),
                        pa.field("type", pa.utf8()), pa.field("description", pa.utf8()),
                        pa.field("poignancy", pa.int64()), pa.field("created", pa.utf8()),
                        pa.field("last_accessed", pa.utf8()),
                        pa.field("embedding_key", pa.utf8()),
                        pa.field("vector", pa.list_(pa.float32(), DIM))])
    table = pa.table({f.name: pa.array([x[f.name] for x in nodes], f.type) for f in schema},
                     schema=schema)
    lancedb.connect(str(tmp)).create_table("nodes", table)
    for x in nodes:
        x["vector"] = np.asarray(x["vector"], np.float32).astype(np.float64)
    return open_store(str(tmp), "nodes"), q, nodes


def released(nodes: list[dict], q: np.ndarray, n: int) -> list[tuple[str, float]]:
    """retrieve.py new_retrieve with scratch defaults, written out from the code."""
    stream = sorted([x for x in nodes if x["type"] == "event"], key=lambda x: -x["node_count"])
    stream += sorted([x for x in nodes if x["type"] == "thought"],
                     key=lambda x: -x["node_count"])
    stream = [x for x in stream if "idle" not in x["embedding_key"]]
    stream = sorted(stream, key=lambda x: x["last_accessed"])

    def norm(d: dict) -> dict:
        lo, hi = min(d.values()), max(d.values())
        return {k: (v - lo) / (hi - lo) if hi > lo else 0.5 for k, v in d.items()}

    rec = norm({x["id"]: 0.99 ** i for i, x in enumerate(stream, start=1)})
    imp = norm({x["id"]: x["poignancy"] for x in stream})
    rel = norm({x["id"]: float(np.dot(x["vector"], q) / (np.linalg.norm(x["vector"])
                                                         * np.linalg.norm(q)))
                for x in stream})
    master = {k: rec[k] * 0.5 + rel[k] * 3 + imp[k] * 2 for k in rec}
    return sorted(master.items(), key=lambda kv: kv[1], reverse=True)[:n]


@pytest.mark.parametrize("limit", [1, 5, 30])
def test_generative_agents_follows_the_released_retrieve(tmp_path: Path, limit: int) -> None:
    store, q, nodes = _stream(tmp_path)
    t = run(store, "generative-agents", q, limit, None)
    want = released(nodes, q, limit)
    assert [s.id for s in t.final.rows] == [k for k, _ in want]
    for s, (_, v) in zip(t.final.rows, want, strict=True):
        assert s.score == pytest.approx(v, abs=1e-12)
    assert {d.code for d in t.stage("stream").dropped} == {"idle"}
    from inspector.core.stores.shapes import detect_shape

    assert detect_shape(store).preset == "generative-agents"


def test_generative_agents_released_recency_favours_the_oldest_access(tmp_path: Path) -> None:
    """The released code's recency is highest for the node accessed longest ago (0.99^1),
    the paper's for the most recent one."""
    store, q, nodes = _stream(tmp_path)
    rel = run(store, "generative-agents", q, 30, None).stage("score").rows
    oldest = min((s for s in rel), key=lambda s: s.row.columns["last_accessed"])
    assert oldest.input("recency") == 1.0
    now = dt.datetime(2023, 2, 14, 9, 0, tzinfo=dt.UTC).timestamp() * 1000
    trace, _ = ask(Question(store=store.uri, preset="generative-agents-paper",
                            vector=[float(x) for x in q], limit=30, now=now), store)
    paper = trace.stage("score").rows
    newest = max(paper, key=lambda s: s.row.columns["last_accessed"])
    assert newest.input("recency") == 1.0
    hours = {s.id: (now - s.row.timestamp) / 3.6e6 for s in paper}
    raw = {k: 0.995 ** h for k, h in hours.items()}
    lo, hi = min(raw.values()), max(raw.values())
    for s in paper:
        assert s.input("recency") == pytest.approx((raw[s.id] - lo) / (hi - lo))


def test_generative_agents_needs_its_columns(tmp_path: Path, openclaw: tuple) -> None:
    store, q, _ = openclaw
    with pytest.raises(InspectorError, match="poignancy"):
        run(store, "generative-agents", q, 5, None)


# ------------------------------------------------------------------ the leg's formulas

def test_values_are_read_from_struct_fields_and_json_text() -> None:
    rec = {"metadata": {"user_id": "u1"}, "metadata_str": json.dumps({"k": 2}), "s": "x"}
    assert value_at(rec, "metadata.user_id") == "u1"
    assert value_at(rec, "metadata_str.k") == 2
    assert value_at(rec, "s") == "x" and value_at(rec, "s.k") is None
    assert value_at({"metadata_str": "{not json"}, "metadata_str.k") is None


def test_times_are_epoch_ms_and_naive_iso_text_is_utc() -> None:
    assert epoch_ms("2026-03-01T12:00:00", "iso") == 1772366400000.0
    assert epoch_ms("2026-03-01T12:00:00+01:00", "iso") == 1772362800000.0
    assert epoch_ms(1772366400, "epoch_s") == 1772366400000.0
    assert epoch_ms(None, "iso") == 0.0 and epoch_ms("soon", "iso") == 0.0


def test_scores_are_each_systems_own() -> None:
    assert score_of(0.25, "inv1p") == 1 / 1.25
    assert score_of(0.25, "exp_neg_f32") == float(np.exp(np.float32(-0.25)))
    assert score_of(1.5, "l2_relevance") == 1 - 1.5 / math.sqrt(2) < 0  # LangChain's quirk
    assert score_of(0.25, "cosine_relevance") == 0.75


def test_crewai_like_prefix_escapes_its_wildcards() -> None:
    assert like_prefix("/team_x", "scope") == r"scope LIKE '/team\_x%' ESCAPE '\'"
    assert like_prefix("/a%b\\c'd", "scope") == r"scope LIKE '/a\%b\\c''d%' ESCAPE '\'"
    assert scope_holds("contains", json.dumps(["ops", "deploy"]), ("ops",))
    assert not scope_holds("contains", "[]", ("ops",))
    # any of the asked scopes, not all of them (the list rule's boundary)
    assert scope_holds("contains", json.dumps(["ops"]), ("ops", "billing"))
    assert scope_holds("contains", ["billing", "x"], ("ops", "billing"))
    assert not scope_holds("contains", ["x"], ("ops", "billing"))
    assert scope_holds("prefix_like", "/teamwork", ("/team",))


def test_a_ga_memory_folder_imports_and_ranks_as_ga_loads_it(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    """nodes.json and embeddings.json as AssociativeMemory.save writes them (node_N down to
    node_1), imported with `inspector import`, ranked as new_retrieve ranks them: float64
    embeddings kept, so the scores are GA's own."""
    from inspector.cli.main import main

    rng = np.random.default_rng(11)
    q = _unit(rng.normal(size=DIM))
    base = dt.datetime(2023, 2, 13, 0, 0, 10)
    nodes, emb = {}, {}
    plain = []
    for i in range(12, 0, -1):
        kind = ("event", "thought", "chat")[i % 3]
        desc = f"isabella is idle (node {i})" if i == 6 else f"node {i} {kind}"
        key = "is idle" if i == 9 else f"key {i}"
        vec = [float(x) for x in _unit(rng.uniform(-1, 1) * q + rng.normal(size=DIM))]
        created = (base + dt.timedelta(minutes=7 * (i // 3))).strftime("%Y-%m-%d %H:%M:%S")
        nodes[f"node_{i}"] = {"node_count": i, "type_count": i, "type": kind, "depth": 0,
                              "created": created, "expiration": None, "subject": "isabella",
                              "predicate": "is", "object": "idle", "description": desc,
                              "embedding_key": key, "poignancy": 1 + (i * 3) % 8,
                              "keywords": ["isabella"], "filling": []}
        emb[key] = vec
        plain.append({"id": f"node_{i}", "node_count": i, "type": kind,
                      "embedding_key": key, "poignancy": 1 + (i * 3) % 8,
                      "last_accessed": created, "vector": np.asarray(vec)})
    src = tmp_path / "associative_memory"
    src.mkdir()
    (src / "nodes.json").write_text(json.dumps(nodes))
    (src / "embeddings.json").write_text(json.dumps(emb))
    dest = tmp_path / "stream"
    assert main(["import", "generative-agents", str(src), str(dest)]) == 0
    assert main(["import", "generative-agents", str(src), str(dest)]) == 2  # never overwrites
    store = open_store(str(dest), "nodes")
    t = run(store, "generative-agents", q, 30, None)
    want = released(plain, q, 30)
    assert [s.id for s in t.final.rows] == [k for k, _ in want]
    for s, (_, v) in zip(t.final.rows, want, strict=True):
        assert s.score == pytest.approx(v, abs=1e-12)
    six = next(s for s in t.stage("stream").rows if s.id == "node_6")
    assert six.row.text == "isabella is idle node 6"  # add_event's clean-up of "(...)"
    capsys.readouterr()
