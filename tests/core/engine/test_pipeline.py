"""The classic pipeline end to end on the one engine: fusion, depths, cached re-ranking,
diagnosis and expected rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine.flow.answer import to_json
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store
from tests.askkit import ask, final_ids


def _query(store, text="note about keys", seed=1):
    vec = np.random.default_rng(seed).normal(size=store.dim).astype(np.float32)
    return {"text": text, "vector": vec}


def _doc(store, cache, **given) -> dict:
    got = to_json(ask(store, cache=cache, **given))
    got.pop("runs"), got["params"].pop("now"), got["params"].pop("now_iso")
    return got


def test_hybrid_fusion_with_the_id_rule_matches_rrf_computed_independently(random_store):
    """The docs engine's fusion: float64 RRF, ties by id ascending (tie_rule "id")."""
    store = open_store(str(random_store(n=200)))
    q = _query(store, "tokens repo1")
    t = ask(store, **q, mode="hybrid", limit=10, fts_k=20, vec_k=20, cap=50,
            tie_rule="id").trace
    vec = store.table.search(q["vector"]).limit(20).to_arrow()["id"].to_pylist()
    from inspector.core.stores.fts import fts_table

    fts = (fts_table(store)[0].search(q["text"], query_type="fts").with_row_id(True)
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
    got = [(s.id, s.score) for s in t.stage("fetch").rows]
    assert [g[0] for g in got] == [w[0] for w in want]
    assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=0, rel=1e-15)


def test_full_text_search_never_indexes_the_users_store(random_store, tmp_path):
    from tests.storekit import snapshot

    path = random_store(n=100)
    before = snapshot(path)
    store = open_store(str(path))
    assert store.fts_index_column() is None
    t = ask(store, **_query(store, "keys"), mode="fts", limit=5).trace
    assert len(t.stage("fetch").rows) == 5
    assert all(0 < s.score < 1 for s in t.stage("fetch").rows)  # bm25 / (1 + bm25)
    assert snapshot(path) == before


def test_fts_and_hybrid_without_text_or_text_column_are_clear_errors(random_store):
    store = open_store(str(random_store(n=20)))
    with pytest.raises(InspectorError, match="need query text"):
        ask(store, vector=np.zeros(store.dim, np.float32), mode="hybrid")


# Candidate depths worked out by hand from REFERENCE.md for each limit: the memory plugin's
# min(limit * 3, 50), the other plugin's min(limit * 10, 200), the docs engine's legs of 20
# before its fix and its scoped pool min(50, max(limit * 5, fts_k, vec_k)) after it.
DEPTHS = {  # limit: (importance-blend, memory-plugin, other-plugin, docs fixed)
    1: (3, 1, 10, 20), 2: (6, 2, 20, 20), 3: (9, 3, 30, 20), 5: (15, 5, 50, 25),
    10: (30, 10, 100, 50), 17: (50, 17, 170, 50), 40: (50, 40, 200, 50),
}


@pytest.fixture(scope="module")
def wide_store(tmp_path_factory):
    from tests.storekit import write_random_store

    return open_store(str(write_random_store(tmp_path_factory.mktemp("depths") / "s", n=300)))


@pytest.mark.parametrize("limit", sorted(DEPTHS))
def test_presets_reproduce_the_real_candidate_depths(wide_store, limit):
    blend_pool, plain, other, fixed = DEPTHS[limit]
    q = _query(wide_store, "vault keys")

    def facts(preset, **given):
        return ask(wide_store, preset=preset, **q, limit=limit, **given).trace \
            .stage("fetch").facts

    assert facts("importance-blend")["depth"] == blend_pool
    assert facts("memory-plugin")["depth"] == plain
    assert facts("other-plugin")["depth"] == other
    before = facts("docs-before-fix", scope="vault")
    assert (before["fts_k"], before["vec_k"]) == (20, 20) and before["depth"] == min(limit, 50)
    for name in ("docs-overfetch", "docs-pushdown"):
        d = facts(name, scope="vault")
        assert (d["depth"], d["fts_k"], d["vec_k"]) == (fixed, fixed, fixed)
    # the over-fetch fix only applies with a scope
    assert facts("docs-overfetch")["depth"] == min(limit, 50)


def test_preset_values_can_be_overridden():
    from inspector.core.engine.flow.question import resolve
    from tests.askkit import question

    spec, _, _ = resolve(question("s", preset="importance-blend", limit=4, blend=0.2))
    st_ = {s.name: s.params for s in spec.routes[0].stages}
    assert st_["blend"]["weight"] == 0.2
    assert (st_["fetch"]["overfetch"], st_["fetch"].get("cap", 50)) == (3.0, 50)
    from inspector.core.engine.flow.spec import load_shipped

    for name in ("memory-plugin", "importance-blend", "docs-before-fix", "docs-overfetch",
                 "docs-pushdown", "other-plugin"):
        assert load_shipped(name).name == name


PARAMS = st.fixed_dictionaries({
    "limit": st.integers(1, 12), "overfetch": st.floats(1, 8),
    "blend": st.floats(0, 1), "min_score": st.floats(0, 0.6),
    "default_importance": st.floats(-0.5, 1.5), "fts_k": st.integers(0, 30),
    "vec_k": st.integers(0, 30), "cap": st.sampled_from([0, 20, 50]),
    "rrf_k": st.sampled_from([1, 60]),  # a shape of the fetch's candidates, as the depths
})


@pytest.mark.parametrize("mode,filt", [("vector", "post"), ("vector", "pushdown"),
                                       ("hybrid", "post"), ("hybrid", "pushdown"),
                                       ("fts", "post")])
def test_cached_pool_gives_exactly_what_a_fresh_run_gives(random_store, mode, filt):
    from inspector.core.engine import pools

    store = open_store(str(random_store(n=400, seed=7)))
    q = _query(store, "note about keys repo2", seed=5)
    base = {"mode": mode, "filter": filt, "scope": "repo2", "distance": "l2"}
    cache = PoolCache()
    _doc(store, cache, **q, **base, limit=12, overfetch=8, cap=0, fts_k=30, vec_k=30)

    @settings(max_examples=25, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(values=PARAMS)
    def check(values):
        cached = _doc(store, cache, **q, **base, **values)
        pools.SOURCE.clear()
        fresh = _doc(store, PoolCache(), **q, **base, **values)
        # BM25 ties included: both take LanceDB's own full-text order at the leg's k, and
        # both pools hold every row tied at its cut (test_lancedb_order.py)
        assert cached == fresh

    check()


def test_a_cached_pool_is_read_once_and_each_rows_scope_decided_once(random_store):
    """A live re-rank of a cached pool (a blend or min-score slider) passes on the rows and
    the fetch's candidates read the first time, and the scope filter's verdicts, instead of
    reading 1,000 rows again per tick (9 ms at pool 1,000 in bench/run.py's rerank figure);
    a new depth is another shape of the same rows; each answer equals a fresh run's."""
    from inspector.core.engine import pools

    store = open_store(str(random_store(n=400, seed=7)))
    q = _query(store, "note about keys repo2", seed=5)
    base = {**q, "mode": "vector", "filter": "post", "scope": "repo2", "limit": 8, "cap": 0}
    cache = PoolCache()

    def stages(**values):
        t = ask(store, cache=cache, **base, **values).trace
        return {s.name: s for s in t.stages}, t

    first, _ = stages(overfetch=8, blend=0.0)
    again, t = stages(overfetch=8, blend=0.7, min_score=0.2)
    assert [s.id for s in again["fetch"].rows] == [s.id for s in first["fetch"].rows]
    assert all(a is b for a, b in zip(again["fetch"].rows, first["fetch"].rows, strict=True))
    dropped = {d.id: d for d in first["scope"].dropped}
    assert dropped and all(d is dropped[d.id] for d in again["scope"].dropped)
    shallower, _ = stages(overfetch=6, blend=0.7)  # a flat search: the deeper pool answers
    rows = {id(s.row) for s in shallower["fetch"].rows}
    assert len(shallower["fetch"].rows) < len(first["fetch"].rows)
    assert rows <= {id(s.row) for s in first["fetch"].rows}  # the same rows, read once
    cached = [_doc(store, cache, **{**base, "scope": s}, overfetch=6, blend=0.7, min_score=0.2)
              for s in ("repo2", "repo1", "repo2")]  # another scope's verdicts on the rows
    pools.SOURCE.clear()
    assert cached == [_doc(store, PoolCache(), **{**base, "scope": s}, overfetch=6, blend=0.7,
                           min_score=0.2) for s in ("repo2", "repo1", "repo2")]
    assert t.final.rows and cached[0] != cached[1]


def test_a_hybrid_fetch_at_another_depth_passes_on_the_candidates_it_made(random_store):
    """A hybrid candidate is fixed by its row, its two leg ranks and its fused score: at
    another depth of the same cached pool, a candidate with the same inputs is the one made
    already (a sweep over over-fetch built each again: 14 % of the demo hybrid sweep's
    candidates), and the answer equals a fresh run's."""
    from inspector.core.engine import pools

    store = open_store(str(random_store(n=400, seed=7)))
    q = _query(store, "note about keys repo2", seed=5)
    base = {**q, "mode": "hybrid", "filter": "post", "scope": "repo2", "limit": 8, "cap": 0}
    cache = PoolCache()
    deep = ask(store, cache=cache, **base, overfetch=8).trace.stage("fetch").rows
    made = {(s.id, s.score, s.inputs): s for s in deep}
    shallow = ask(store, cache=cache, **base, overfetch=6).trace.stage("fetch").rows
    same = [s for s in shallow if (s.id, s.score, s.inputs) in made]
    assert same and all(s is made[(s.id, s.score, s.inputs)] for s in same)
    pools.SOURCE.clear()
    fresh = ask(store, cache=PoolCache(), **base, overfetch=6).trace.stage("fetch").rows
    assert [(s.id, s.score, s.inputs) for s in shallow] == \
        [(s.id, s.score, s.inputs) for s in fresh]


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


ORIGIN = np.zeros(4, np.float32)


def test_counters_and_diagnosis_on_a_starving_store(make_store):
    store = open_store(str(_starving_store(make_store)))
    a = ask(store, vector=ORIGIN, limit=10, scope="small", fixes=True)
    t, d = a.trace, a.diagnosis
    assert (len(t.stage("fetch").rows), len(t.stage("scope").rows), len(t.final.rows)) == \
        (10, 0, 0)
    assert len(t.stage("scope").dropped) == 10
    assert d.code == "filter_after_cut" and d.stage == "scope"
    assert d.first_at == 61 and d.page_at is None  # fewer than 10 in-scope rows
    assert "no depth up to 65 gives a full page" in d.message
    wide = ask(store, vector=ORIGIN, limit=10, scope="small", overfetch=6.5, cap=0,
               fixes=True)
    assert wide.diagnosis.code == "few_matches" and len(wide.trace.stage("scope").rows) == 5
    pushed = ask(store, vector=ORIGIN, limit=10, scope="small", filter="pushdown", fixes=True)
    assert pushed.diagnosis.code == "few_matches" and len(pushed.trace.final.rows) == 5
    nothing = ask(store, vector=ORIGIN, mode="vector", limit=5, scope="small",
                  filter="pushdown", scope_strategy="column", scope_column="repo")
    assert len(nothing.trace.final.rows) == 5


def test_query_or_index_diagnosis_when_nothing_matches(make_store):
    path = make_store({"id": ["a", "b"], "text": ["apple pie", "pear tart"],
                       "vector": np.eye(2, dtype=np.float32)})
    store = open_store(str(path))
    assert ask(store, text="zebra", mode="fts", fixes=True).diagnosis.code == "query_or_index"


def test_expected_row_reports_rank_drop_stage_and_smallest_depth(make_store):
    store = open_store(str(_starving_store(make_store)))
    given = {"vector": ORIGIN, "limit": 10, "scope": "small", "cap": 50}
    (e,) = ask(store, **given, expect=["small062"]).expected
    assert e["dropped_at"] == "fetch" and e["reason"] == "not_fetched"
    assert e["fix"]["rank"] == 3  # third-closest in-scope row
    deeper = [x for x in [e["fix"], *e["alternatives"]] if x["widen"]]
    assert deeper and deeper[0]["widen"]["fetch"] == 63  # the smallest depth that returns it
    # the claim holds: one row shallower it is missing, at that depth it is returned
    assert "small062" not in final_ids(store, **{**given, "cap": 0}, overfetch=6.2)
    assert "small062" in final_ids(store, **{**given, "cap": 0}, overfetch=6.3)


def test_expected_row_that_no_depth_returns_says_why(make_store):
    store = open_store(str(_starving_store(make_store)))
    e_out, e_low, e_none = ask(store, vector=ORIGIN, limit=2, scope="small",
                               expect=["big000", "small064", "ghost"]).expected
    assert e_out["dropped_at"] == "scope" and e_out["reason"] == "out_of_scope"
    assert e_out["fix"] is None and "no_fix" in e_out
    # small064 is the 5th in-scope row: only a longer list returns it
    assert e_low["fix"]["param"] == "limit" and e_low["fix"]["to"] == 5
    assert e_none["fix"] is None and e_none["reason"] == "not_fetched"
    (e_min,) = ask(store, vector=ORIGIN, limit=10, scope="small", min_score=0.3,
                   expect=["small064"]).expected  # score 1/(1+2.0**2) = 0.2
    assert e_min["fix"] is None and "no_fix" in e_min


def test_expected_row_in_hybrid_mode_is_checked_depth_by_depth(random_store):
    """Hybrid fused scores move with depth: the depths are tried one by one, the first that
    returns a row is a real boundary (one shallower does not), and the expected-row search
    finds a change that returns it."""
    store = open_store(str(random_store(n=150, seed=2)))
    q = _query(store, "tokens about repo3", seed=9)
    given = {**q, "mode": "hybrid", "limit": 5, "scope": "repo3", "fts_k": 10, "vec_k": 10}
    cache = PoolCache()
    shallow = ask(store, **given, cache=cache).trace.final.ids
    deep = ask(store, **given, overfetch=30, cap=0, cache=cache).trace
    found = None
    for target in [i for i in deep.stage("blend").ids if i not in shallow][:10]:
        returns = [d for d in range(5, 151) if target in final_ids(
            store, **given, overfetch=d / 5, cap=0, cache=cache)]
        if returns:
            found = target, returns[0]
            break
    assert found, "some deeper row of the scope comes back at some depth"
    target, first = found
    if first > 5:
        assert target not in final_ids(store, **given, overfetch=(first - 1) / 5, cap=0,
                                       cache=cache)
    (e,) = ask(store, **given, expect=[target]).expected
    changes = [x for x in [e["fix"], *e["alternatives"]] if x]
    assert changes, {k: e[k] for k in ("no_fix", "tried") if k in e}
    for fix in changes:  # each change that was found returns the row when applied
        sets = {fix["stage"] + "." + fix["param"]: fix["to"]} if fix["stage"] else {}
        limit = fix["to"] if fix["param"] == "limit" else given["limit"]
        got = final_ids(store, **{**given, "limit": limit}, sets=sets, widen=fix["widen"])
        assert target in got, fix


def test_hybrid_scope_hint_names_the_depth_that_really_reaches_the_scope(tmp_path):
    from inspector.core.stores.demo import SCOPE_QUERY, build_demo

    store = open_store(str(build_demo(tmp_path / "demo")))
    given = {"preset": "docs-before-fix", "text": SCOPE_QUERY, "scope": "vault-agent",
             "limit": 10}
    d = ask(store, **given, fixes=True).diagnosis
    assert d.code == "filter_after_cut"
    cache = PoolCache()

    def at(depth):
        return len(ask(store, **given, overfetch=depth / 10, cap=0, cache=cache).trace
                   .stage("scope").rows)

    assert at(d.first_at) >= 1 and at(d.first_at - 1) == 0
    assert at(d.page_at) >= 10 and at(d.page_at - 1) < 10
