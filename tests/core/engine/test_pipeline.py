"""The pipeline end to end: fusion, depths, cached re-ranking, diagnosis and expected rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine.expect import analyse
from inspector.core.engine.inputs import build_params
from inspector.core.engine.params import Params, depths
from inspector.core.engine.pipeline import derive, run
from inspector.core.engine.pool import Query
from inspector.core.engine.pools import fetch_for
from inspector.core.engine.presets import PRESETS, get_preset
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store


def _query(store, text="note about keys", seed=1):
    vec = np.random.default_rng(seed).normal(size=store.dim).astype(np.float32)
    return Query(text=text, vector=vec, source="vector")


def _stages(trace):
    return {s.name: [(trace.pool.ids[i], float(trace.score[i]), float(trace.base[i]))
                     for i in s.rows] for s in trace.stages}


def test_hybrid_fusion_with_the_id_rule_matches_rrf_computed_independently(random_store):
    """The docs engine's fusion: float64 RRF, ties by id ascending (tie_rule "id")."""
    store = open_store(str(random_store(n=200)))
    q = _query(store, "tokens repo1")
    p = Params(mode="hybrid", limit=10, fts_k=20, vec_k=20, cap=50, tie_rule="id")
    t = run(store, q, p)
    vec = store.table.search(q.vector).limit(20).to_arrow()["id"].to_pylist()
    from inspector.core.stores.fts import fts_table

    fts = (fts_table(store)[0].search(q.text, query_type="fts").with_row_id(True)
           .limit(1000).to_arrow())
    # BM25 ties are ordered by row id: LanceDB keeps the lowest row ids at a tied cut
    by_score = sorted(zip(fts["_score"].to_pylist(), fts["_rowid"].to_pylist(),
                          fts["id"].to_pylist(), strict=True), key=lambda x: (-x[0], x[1]))
    fts_ids = [i for _, _, i in by_score][:20]
    fused: dict[str, float] = {}
    for ranking in (vec, fts_ids):
        for r, rid in enumerate(ranking):
            fused[rid] = fused.get(rid, 0.0) + 1 / (60 + r + 1)
    want = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    got = [(t.pool.ids[i], t.base[i]) for i in t.stage("raw").rows]
    assert [g[0] for g in got] == [w[0] for w in want]
    assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=0, rel=1e-15)


def test_full_text_search_never_indexes_the_users_store(random_store, tmp_path):
    from tests.storekit import snapshot

    path = random_store(n=100)
    before = snapshot(path)
    store = open_store(str(path))
    assert store.fts_index_column() is None
    t = run(store, _query(store, "keys"), Params(mode="fts", limit=5))
    assert t.counters["rawCandidates"] == 5
    assert all(0 < b < 1 for b in t.base[t.stage("raw").rows])
    assert snapshot(path) == before


def test_fts_and_hybrid_without_text_or_text_column_are_clear_errors(random_store):
    store = open_store(str(random_store(n=20)))
    with pytest.raises(InspectorError, match="need query text"):
        run(store, Query(vector=np.zeros(store.dim, np.float32)), Params(mode="hybrid"))


# Candidate depths worked out by hand from REFERENCE.md for each limit: the memory plugin's
# min(limit * 3, 50), the other plugin's min(limit * 10, 200), the docs engine's legs of 20
# before its fix and its scoped pool min(50, max(limit * 5, fts_k, vec_k)) after it.
DEPTHS = {  # limit: (importance-blend, memory-plugin, other-plugin, docs fixed)
    1: (3, 1, 10, 20), 2: (6, 2, 20, 20), 3: (9, 3, 30, 20), 5: (15, 5, 50, 25),
    10: (30, 10, 100, 50), 17: (50, 17, 170, 50), 40: (50, 40, 200, 50),
}


@pytest.mark.parametrize("limit", sorted(DEPTHS))
def test_presets_reproduce_the_real_candidate_depths(limit):
    blend_pool, plain, other, fixed = DEPTHS[limit]
    scoped = {"scope": "vault"}
    assert depths(get_preset("importance-blend").params(limit)).pool == blend_pool
    assert depths(get_preset("memory-plugin").params(limit)).pool == plain
    assert depths(get_preset("other-plugin").params(limit)).pool == other
    before = depths(get_preset("docs-before-fix").params(limit, **scoped))
    assert (before.fts_k, before.vec_k) == (20, 20) and before.pool == min(limit, 50)
    for name in ("docs-overfetch", "docs-pushdown"):
        d = depths(get_preset(name).params(limit, **scoped))
        assert (d.pool, d.fts_k, d.vec_k) == (fixed, fixed, fixed)
    unscoped = depths(get_preset("docs-overfetch").params(limit))
    assert unscoped.pool == min(limit, 50)  # the over-fetch fix only applies with a scope


def test_preset_values_can_be_overridden():
    p = build_params(preset="importance-blend", limit=4, blend=0.2, scope="x")
    assert (p.blend, p.limit, p.overfetch, p.cap, p.scope) == (0.2, 4, 3.0, 50, "x")
    assert set(PRESETS) >= {"memory-plugin", "importance-blend", "docs-before-fix",
                            "docs-overfetch", "docs-pushdown", "other-plugin"}


PARAMS = st.fixed_dictionaries({
    "limit": st.integers(1, 12), "overfetch": st.floats(1, 8),
    "blend": st.floats(0, 1), "min_score": st.floats(0, 0.6),
    "default_importance": st.floats(-0.5, 1.5), "fts_k": st.integers(0, 30),
    "vec_k": st.integers(0, 30), "cap": st.sampled_from([0, 20, 50]),
})


@pytest.mark.parametrize("mode,filt", [("vector", "post"), ("vector", "pushdown"),
                                       ("hybrid", "post"), ("hybrid", "pushdown"),
                                       ("fts", "post")])
def test_cached_pool_gives_exactly_what_a_fresh_run_gives(random_store, mode, filt):
    store = open_store(str(random_store(n=400, seed=7)))
    q = _query(store, "note about keys repo2", seed=5)
    base = Params(mode=mode, filter=filt, scope="repo2", distance="l2")
    pool = fetch_for(store, q, base.with_(limit=12, overfetch=8, cap=0, fts_k=30, vec_k=30))

    @settings(max_examples=25, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(values=PARAMS)
    def check(values):
        p = base.with_(**values)
        cached = derive(pool, p)
        fresh = run(store, q, p)
        assert _stages(cached) == _stages(fresh)
        assert cached.counters == fresh.counters
        assert cached.diagnosis.code == fresh.diagnosis.code
        assert cached.depths == fresh.depths

    check()


def test_a_too_shallow_pool_or_changed_query_needs_a_new_fetch(random_store):
    store = open_store(str(random_store(n=100)))
    q = _query(store)
    pool = fetch_for(store, q, Params(limit=5, overfetch=2))
    with pytest.raises(InspectorError, match="deeper than the cached pool"):
        derive(pool, Params(limit=5, overfetch=4))
    with pytest.raises(InspectorError, match="need a new query"):
        derive(pool, Params(limit=5, scope="repo1"))


def _starving_store(make_store, n_out=60, n_in=5, dim=4):
    """Out-of-scope rows all sit closer to the query than the in-scope ones."""
    rng = np.random.default_rng(0)
    n = n_out + n_in
    vec = np.zeros((n, dim), np.float32)
    vec[:, 0] = np.concatenate([np.linspace(0.1, 1.0, n_out), np.linspace(1.5, 2.0, n_in)])
    vec[:, 1:] = rng.normal(scale=0.01, size=(n, dim - 1))
    repo = ["big"] * n_out + ["small"] * n_in
    return make_store({"id": [f"{r}{i:03d}" for i, r in enumerate(repo)], "text": ["t"] * n,
                       "vector": vec, "repo": repo, "path": [f"{r}/x" for r in repo]})


def test_counters_and_diagnosis_on_a_starving_store(make_store):
    store = open_store(str(_starving_store(make_store)))
    q = Query(vector=np.zeros(4, np.float32), source="vector")
    t = run(store, q, Params(limit=10, scope="small"))
    assert t.counters == {"rawCandidates": 10, "scopedCandidates": 0, "filteredByScope": 10,
                          "belowMinScore": 0, "returned": 0}
    assert t.diagnosis.code == "scope_starvation"
    assert "first enters the pool at depth 61 (over-fetch 6.1)" in t.diagnosis.message
    assert "fewer than 10 in-scope rows" in t.diagnosis.message
    wide = run(store, q, Params(limit=10, scope="small", overfetch=6.5, cap=0))
    assert wide.diagnosis.code == "scope_dominated"
    assert wide.counters["scopedCandidates"] == 5
    pushed = run(store, q, Params(limit=10, scope="small", filter="pushdown"))
    assert pushed.diagnosis.code == "ok" and pushed.counters["returned"] == 5
    nothing = run(store, q, Params(mode="vector", limit=5, scope="small", filter="pushdown",
                                   scope_strategy="column", scope_column="repo"))
    assert nothing.counters["returned"] == 5


def test_query_or_index_diagnosis_when_nothing_matches(make_store):
    path = make_store({"id": ["a", "b"], "text": ["apple pie", "pear tart"],
                       "vector": np.eye(2, dtype=np.float32)})
    store = open_store(str(path))
    t = run(store, Query(text="zebra"), Params(mode="fts"))
    assert t.diagnosis.code == "query_or_index"


def test_expected_row_reports_rank_drop_stage_and_smallest_depth(make_store):
    store = open_store(str(_starving_store(make_store)))
    q = Query(vector=np.zeros(4, np.float32), source="vector")
    p = Params(limit=10, scope="small", cap=50)
    t = run(store, q, p)
    (e,) = analyse(store, q, t, ["small062"])
    assert e.exhaustive_rank == 3  # third-closest in-scope row
    assert e.dropped_at == "raw"
    assert e.min_depth == 63 and e.min_overfetch == 6.3
    assert "above the cap of 50" in e.reason
    # the claim holds: one row shallower it is missing, at that depth it is returned
    assert "small062" not in run(store, q, p.with_(overfetch=6.2, cap=0)).ids("final")
    assert "small062" in run(store, q, p.with_(overfetch=6.3, cap=0)).ids("final")


def test_expected_row_that_no_depth_returns_says_why(make_store):
    store = open_store(str(_starving_store(make_store)))
    q = Query(vector=np.zeros(4, np.float32), source="vector")
    t = run(store, q, Params(limit=2, scope="small"))
    e_out, e_low, e_none = analyse(store, q, t, ["big000", "small064", "ghost"])
    assert e_out.dropped_at == "scoped" and "out of scope" in e_out.reason
    assert e_out.min_depth is None
    # small064 is the 5th in-scope row: a limit of 2 never returns it
    assert e_low.min_depth is None and "4 in-scope rows outrank it (limit 2)" in e_low.reason
    assert "no row with id 'ghost'" in e_none.reason
    strict = run(store, q, Params(limit=10, scope="small", min_score=0.3))
    (e_min,) = analyse(store, q, strict, ["small064"])  # score 1/(1+2.0**2) = 0.2
    assert e_min.min_depth is None and "below min score 0.3 at every depth" in e_min.reason


def test_expected_row_in_hybrid_mode_is_checked_depth_by_depth(random_store):
    store = open_store(str(random_store(n=150, seed=2)))
    q = _query(store, "tokens about repo3", seed=9)
    p = Params(mode="hybrid", limit=5, scope="repo3", fts_k=10, vec_k=10)
    t = run(store, q, p)
    deep = run(store, q, p.with_(overfetch=30, cap=0))
    target = deep.ids("blended")[6]
    (e,) = analyse(store, q, t, [target])
    assert e.min_depth is not None
    assert target in run(store, q, p.with_(overfetch=e.min_depth / 5, cap=0)).ids("final")
    if e.min_depth > 5:
        shallower = p.with_(overfetch=(e.min_depth - 1) / 5, cap=0)
        assert target not in run(store, q, shallower).ids("final")


def test_hybrid_scope_hint_names_the_depth_that_really_reaches_the_scope(tmp_path):
    from inspector.core.engine.inputs import build_query
    from inspector.core.stores.demo import SCOPE_QUERY, build_demo

    store = open_store(str(build_demo(tmp_path / "demo")))
    q = build_query(store, "hybrid", text=SCOPE_QUERY)
    p = build_params(preset="docs-before-fix", scope="vault-agent", limit=10)
    t = run(store, q, p)
    assert t.diagnosis.code == "scope_starvation"
    import re

    first = int(re.search(r"enters the pool at depth (\d+)", t.diagnosis.message).group(1))
    page = int(re.search(r"a full page of 10 in scope needs over-fetch [0-9.]+ "
                         r"\(depth (\d+)\)", t.diagnosis.message).group(1))
    def at(d):
        return run(store, q, p.with_(overfetch=d / 10, cap=0)).counters["scopedCandidates"]
    assert at(first) >= 1 and at(first - 1) == 0
    assert at(page) >= 10 and at(page - 1) < 10
