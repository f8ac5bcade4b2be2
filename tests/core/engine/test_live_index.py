"""On indexed tables the live session never answers with a derived trace that a fresh run
would not give: where the index's deep prefix is not exact (HNSW, refine factor) it re-queries
per depth and knob, and caches what it fetched."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    assert second.refetched(deep) is session  # back at depth 20: the cached fetch, no search
