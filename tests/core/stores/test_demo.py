"""The bundled demo store tells both stories it promises."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from inspector.core.engine.inputs import build_params, build_query
from inspector.core.engine.pipeline import derive, run
from inspector.core.engine.pool import Pool
from inspector.core.engine.pools import fetch_for
from inspector.core.errors import InspectorError
from inspector.core.stores.demo import (
    BLEND_QUERY,
    SCOPE_QUERY,
    TIE_QUERY,
    build_demo,
    ensure_demo_store,
)
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
    assert [q["name"] for q in demo.suggested_queries] == [
        "Scoped miss: key rotation in vault-agent", "Importance: editor theme preference",
        "Tie: one memory saved twice", "Lost to the index: an agent's memory IVF_PQ misses"]


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


def _reversed_ties(pool: Pool) -> Pool:
    """The pool with every run of equal leg values in reverse order: another order a real
    system could have returned (LanceDB's full-text order among equal scores is arbitrary)."""
    changes: dict[str, Any] = {}
    for name in ("vec", "fts"):
        leg = getattr(pool, f"{name}_leg")
        if leg is None:
            continue
        rows, s = leg.rows.copy(), 0
        while s < len(rows):
            e = s + 1
            while e < len(rows) and leg.values[e] == leg.values[s]:
                e += 1
            rows[s:e] = rows[s:e][::-1]
            s = e
        rank = np.full(pool.size, -1, np.int64)
        rank[rows] = np.arange(len(rows))
        changes |= {f"{name}_leg": replace(leg, rows=rows), f"{name}_rank": rank}
    return replace(pool, **changes)


def _outcomes(pool: Pool, p, facts) -> set:
    """The story's facts under four tie orders: as fetched or reversed, by either tie rule."""
    return {facts(pl, p.with_(tie_rule=rule)) for pl in (pool, _reversed_ties(pool))
            for rule in ("lancedb", "id")}


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_the_scoped_miss_story_does_not_depend_on_tie_order(demo, mode):
    q = build_query(demo, mode, text=SCOPE_QUERY)
    p = build_params(preset="docs-before-fix", scope="vault-agent", limit=10, mode=mode)
    pool = fetch_for(demo, q, p.with_(cap=0), max_overfetch=6)

    def facts(pl, pp):
        first = next(d for d in range(10, 60)
                     if derive(pl, pp.with_(overfetch=d / 10, cap=0)).counters["returned"])
        return (tuple(derive(pl, pp).ids("raw")), first,  # which rows each over-fetch returns
                tuple(frozenset(derive(pl, pp.with_(overfetch=f)).ids("final"))
                      for f in (2.0, 2.5, 3.0)))

    (got,) = _outcomes(pool, p, facts)
    assert got[1] == (25 if mode == "hybrid" else 24)  # the docs quote the hybrid figure
    for f in (1.0, 2.0, 2.4, 2.5, 3.0):  # no in-scope row is ever tied at a cut
        t = derive(pool, p.with_(overfetch=f))
        assert not any(g.at_cut and pool.in_scope[list(g.rows)].any() for g in t.ties())
    pushed = p.with_(filter="pushdown")
    assert len(_outcomes(fetch_for(demo, q, pushed), pushed,
                         lambda pl, pp: frozenset(derive(pl, pp).ids("final")))) == 1


def test_the_importance_story_does_not_depend_on_tie_order(demo):
    q = build_query(demo, "vector", text=BLEND_QUERY)
    p = build_params(preset="importance-blend", limit=5, min_score=0.0)
    pool = fetch_for(demo, q, p)
    for w in (0.0, 0.5):
        assert len(_outcomes(pool, p.with_(blend=w),
                             lambda pl, pp: tuple(derive(pl, pp).ids("final")))) == 1
        assert not any(g.at_cut for g in derive(pool, p.with_(blend=w)).ties())


def test_the_tie_story_ties_at_the_cut_and_importance_breaks_it(demo):
    q = build_query(demo, "vector", text=TIE_QUERY)
    plain = run(demo, q, build_params(preset="memory-plugin", limit=1))
    one, two = "agent-memory-timezone-1", "agent-memory-timezone-2"
    assert plain.ids("final") == [one]  # the lower row id, as LanceDB orders equal distances
    (cut,) = [g for g in plain.ties() if g.at_cut]
    assert cut.ids == (one,) and cut.beyond == 1 and not cut.arbitrary
    assert plain.pool.vec_leg.next_value == plain.pool.vec_dist[plain.row_of(one)]
    blended = run(demo, q, build_params(preset="importance-blend", limit=1))
    assert blended.ids("final") == [two]
    assert not any(g.at_cut for g in blended.ties())


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
