"""The bundled demo store tells both stories it promises."""

from __future__ import annotations

import pytest

from inspector.core.engine.inputs import build_params, build_query
from inspector.core.engine.pipeline import run
from inspector.core.errors import InspectorError
from inspector.core.stores.demo import BLEND_QUERY, SCOPE_QUERY, build_demo, ensure_demo_store
from inspector.core.stores.opening import open_store


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return open_store(str(build_demo(tmp_path_factory.mktemp("demo") / "store")))


def test_demo_is_large_varied_and_records_its_embedder(demo):
    assert 2000 <= demo.rows <= 5000
    assert len(demo.distinct("repo")) >= 12
    assert set(demo.distinct("category")) == {"preference", "fact", "decision", "entity", "other"}
    assert demo.embedder == {"name": "hash-v1", "dim": 256}
    assert demo.fts_index_column() == "text"
    assert [q["name"] for q in demo.suggested_queries][:2] == [
        "Scoped miss: key rotation in vault-agent", "Importance: editor theme preference"]


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_scoped_miss_story(demo, mode):
    q = build_query(demo, mode, text=SCOPE_QUERY)
    before = run(demo, q, build_params(preset="docs-before-fix", scope="vault-agent", limit=10,
                                       mode=mode))
    assert before.counters["scopedCandidates"] == 0
    assert before.diagnosis.code == "scope_starvation"
    at = {f: run(demo, q, before.params.with_(overfetch=f)).counters["returned"]
          for f in (1.0, 2.0, 2.5, 3.0)}
    assert at[1.0] == 0 and at[2.0] == 0 and at[2.5] >= 1 and at[3.0] >= 1
    pushed = run(demo, q, before.params.with_(filter="pushdown"))
    assert pushed.depths.pool == 10 and pushed.counters["returned"] == 10


def test_importance_story(demo):
    q = build_query(demo, "vector", text=BLEND_QUERY)
    p = build_params(preset="importance-blend", limit=5, min_score=0.0)
    plain = run(demo, q, p.with_(blend=0.0)).ids("final")
    blended = run(demo, q, p.with_(blend=0.5)).ids("final")
    assert plain[:2] == ["agent-memory-theme-close", "agent-memory-theme-far"]
    assert blended[0] == "agent-memory-theme-far"
    assert blended.index("agent-memory-theme-close") > 0


def test_demo_is_deterministic_and_refuses_to_overwrite(tmp_path):
    a = open_store(str(build_demo(tmp_path / "a"))).table.to_arrow()
    b = open_store(str(build_demo(tmp_path / "b"))).table.to_arrow()
    assert a.equals(b)
    with pytest.raises(InspectorError, match="already exists and is not empty"):
        build_demo(tmp_path / "a")


def test_ensure_demo_store_builds_once_in_the_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    first = ensure_demo_store()
    assert first.parent == tmp_path / "data"
    mtime = (first / "memories.lance").stat().st_mtime_ns
    assert ensure_demo_store() == first
    assert (first / "memories.lance").stat().st_mtime_ns == mtime


def test_the_demo_store_is_not_mistaken_for_a_real_system(demo):
    from inspector.core.stores.shapes import detect_shape

    shape = detect_shape(demo)
    assert shape.preset is None and "demo" in shape.title
