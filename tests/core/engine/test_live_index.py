"""On indexed tables the live session never answers with a derived trace that a fresh run
would not give: where the index's deep prefix is not exact (HNSW, refine factor) it re-queries
per depth and knob, and caches what it fetched."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine import pools
from inspector.core.engine.ann.facet import attach
from inspector.core.engine.live import LiveSession
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.engine.pool import Query
from inspector.core.stores.opening import open_store
from tests import indexkit


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    base = tmp_path_factory.mktemp("live-index")
    return {kind: open_store(str(indexkit.build(base / kind.lower(), kind)))
            for kind in ("IVF_PQ", "IVF_HNSW_SQ")}


STEP = st.one_of(
    st.tuples(st.just("overfetch"), st.sampled_from([1.0, 1.5, 2.3, 4.0, 8.0])),
    st.tuples(st.just("blend"), st.sampled_from([0.0, 0.5, 1.0])),
    st.tuples(st.just("refine_factor"), st.sampled_from([None, 2])),
    st.tuples(st.just("nprobes"), st.sampled_from([None, 4, 40])),
    st.tuples(st.just("filter"), st.sampled_from(["post", "pushdown"])),
)


@pytest.mark.parametrize("kind", ["IVF_PQ", "IVF_HNSW_SQ"])
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=6), q=st.integers(0, 7))
def test_every_live_answer_equals_a_fresh_run(stores, kind, steps, q) -> None:
    store = stores[kind]
    query = Query(vector=indexkit.queries(8)[q], source="vector")
    p = Params(limit=10, scope="main", scope_strategy="column", scope_column="agentId")
    session = LiveSession.fetch(store, query, p)
    for key, value in steps:
        p = p.with_(**{key: value})
        session = session.refetched(p)
        (trace,) = session.traces(p)
        pools.SOURCE.clear()  # a fresh run searches: no pool the session asked for is reused
        want = attach(store, query, run(store, query, p))  # what `inspector query` prints
        assert trace.ids("raw") == want.ids("raw"), (kind, key, value)
        assert trace.to_json() == want.to_json()


def test_hnsw_depths_are_requeried_and_cached(stores) -> None:
    store = stores["IVF_HNSW_SQ"]
    query = Query(vector=indexkit.queries(1)[0], source="vector")
    deep = Params(limit=10, overfetch=2.0)
    session = LiveSession.fetch(store, query, deep)
    shallow = deep.with_(overfetch=1.0)
    assert "index answers depth 10 differently from the cached depth 20" in \
        (session.why_not(shallow) or "")
    second = session.refetched(shallow)
    assert second is not session and second.answers(shallow)
    fetched = pools.SOURCE.fetches
    back = second.refetched(deep)  # back at depth 20: the pool source's cached fetch
    assert pools.SOURCE.fetches == fetched  # no search
    assert [t.to_json() for t in back.traces(deep)] == [t.to_json() for t in session.traces(deep)]


# A pushed-down rare scope (~60 rows in a few clusters) asked 200 deep: LanceDB returns fewer
# rows than asked, so the pool's vector leg is exhausted. Knobs under which the explorer run
# for issue 21 found a shallower fresh search differing from the exhausted pool's prefix:
# refine_factor (a shallower search refines only k * R candidates by their full vectors) and
# min/max nprobes (a shallower search stops probing partitions once it has k rows).
EXHAUSTED = [("IVF_PQ", {"refine_factor": 4}), ("IVF_PQ", {"min_nprobes": 1, "max_nprobes": 0}),
             ("IVF_HNSW_SQ", {"min_nprobes": 1, "max_nprobes": 4}), ("IVF_PQ", {}),
             ("IVF_HNSW_SQ", {"refine_factor": 3})]


@pytest.mark.parametrize(("kind", "knobs"), EXHAUSTED)
def test_an_exhausted_index_search_answers_other_depths_as_a_fresh_query(stores, kind,
                                                                        knobs) -> None:
    """Issue 21: `cannot_answer` let an exhausted approximate search answer every depth from
    its pool. Shallower it is not exact (see EXHAUSTED), so such a cell runs its own query;
    deeper it is (every partition the search may probe was probed, every candidate refined),
    so the cached pool answers it. Each cell is checked against a fresh run, what
    `inspector query` runs."""
    from inspector.core.engine.live import CellPools
    from inspector.core.engine.pipeline import derive
    from inspector.core.engine.pools import fetch_for

    store = stores[kind]
    scoped = dict(scope=indexkit.RARE, scope_strategy="column", scope_column="agentId",
                  filter="pushdown", cap=0, **knobs)
    deep = Params(limit=200, **scoped)
    exhausted = 0
    for vec in indexkit.queries(12):
        query = Query(vector=vec, source="vector")
        pool = fetch_for(store, query, deep)
        exhausted += pool.vec_leg.exhausted
        cells = CellPools(store, query, pool)
        for limit in (1, 3, 5, 10, 30, 300):
            p = Params(limit=limit, **scoped)
            got, own = cells.pool_for(p)
            assert own == (limit < 200), limit  # shallower: its own query; deeper: the pool
            assert derive(got, p).to_json() == run(store, query, p).to_json(), (limit, knobs)
    assert exhausted == 12  # the story: every pool came back shorter than asked
