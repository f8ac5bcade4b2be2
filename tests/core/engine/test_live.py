"""The live session answers every parameter set exactly as a fresh `pipeline.run` would, over
random sequences of slider moves and other changes; it refetches when its pools cannot."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine import pools
from inspector.core.engine.live import LIVE_KEYS, LiveSession, fetch_key
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.engine.pool import Query
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from tests.storekit import write_tuning_store

    path = write_tuning_store(tmp_path_factory.mktemp("live") / "s", n=400)
    return open_store(str(path))


def _query(store, mode: str) -> Query:
    vec = np.random.default_rng(7).normal(size=store.dim).astype(np.float32)
    return Query(text="rotate keys tokens" if mode != "vector" else None,
                 vector=None if mode == "fts" else vec, source="vector")


STEP = st.one_of(
    st.tuples(st.just("overfetch"), st.sampled_from([1.0, 1.3, 2.0, 2.5, 4.0, 7.5, 20.0])),
    st.tuples(st.just("blend"), st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.77, 1.0])),
    st.tuples(st.just("min_score"), st.sampled_from([0.0, 0.01, 0.02, 0.1, 0.3, 0.5])),
    st.tuples(st.just("limit"), st.sampled_from([1, 3, 10, 25])),
    st.tuples(st.just("filter"), st.sampled_from(["post", "pushdown"])),
    st.tuples(st.just("scope"), st.sampled_from([None, "repo0", "repo3"])),
)


def _fresh(store, query: Query, p: Params):
    """`pipeline.run` with nothing cached: its own searches, not the session's pools."""
    pools.SOURCE.clear()
    return run(store, query, p)


def _same(a, b) -> None:
    ja, jb = a.to_json(), b.to_json()
    assert ja == jb


@pytest.mark.parametrize("mode", ["vector", "fts", "hybrid"])
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=8))
def test_every_answer_equals_a_fresh_run(store, mode: str, steps) -> None:
    p = Params(mode=mode, limit=10, scope="repo0", cap=0)
    query = _query(store, mode)
    session = LiveSession.fetch(store, query, p)
    for key, value in steps:
        p = p.with_(**{key: value})
        if not session.answers(p):
            assert key not in LIVE_KEYS or key == "overfetch"  # only depth can outgrow a pool
            session = session.refetched(p)
        (trace,) = session.traces(p)
        _same(trace, _fresh(store, query, p))


def test_both_placements_side_by_side_equal_their_fresh_runs(store) -> None:
    p = Params(mode="vector", limit=10, scope="repo0")
    query = _query(store, "vector")
    session = LiveSession.fetch(store, query, p, placements=("post", "pushdown"))
    for f in (1.0, 2.5, 5.0):
        for n, trace in enumerate(session.traces(p.with_(overfetch=f))):
            _same(trace, _fresh(store, query,
                                p.with_(overfetch=f, filter=session.placements[n])))


def test_a_changed_fetch_parameter_needs_a_new_query(store) -> None:
    p = Params(mode="vector", limit=10, scope="repo0")
    session = LiveSession.fetch(store, _query(store, "vector"), p)
    assert session.answers(p.with_(blend=0.6, min_score=0.2, overfetch=3.0))
    for change in ({"scope": "repo1"}, {"distance": "cosine"}, {"filter": "pushdown"}):
        assert not session.answers(p.with_(**change))
        with pytest.raises(InspectorError, match="new query"):
            session.traces(p.with_(**change))
    assert fetch_key(p.with_(blend=0.9)) == fetch_key(p)


def test_a_pool_too_shallow_for_a_deeper_cap_is_refetched(store) -> None:
    p = Params(mode="vector", limit=10, cap=50)
    query = _query(store, "vector")
    session = LiveSession.fetch(store, query, p, max_overfetch=2.0)
    deeper = p.with_(cap=0, overfetch=10.0)
    assert "deeper than the cached pool" in (session.why_not(deeper) or "")
    fresh = session.refetched(deeper)
    assert fresh is not session and fresh.answers(deeper)
    _same(fresh.traces(deeper)[0], run(store, query, deeper))


def test_a_pool_without_its_store_says_it_cannot_refetch(store) -> None:
    p = Params(mode="vector", limit=10, scope="repo0")
    query = _query(store, "vector")
    pool = LiveSession.fetch(store, query, p).lanes[0].pool
    offline = LiveSession.of_pool(pool, p)
    assert offline.traces(p.with_(blend=0.5))[0].counters["rawCandidates"] == 10
    with pytest.raises(InspectorError, match="without its store"):
        offline.refetched(p.with_(scope="repo2"))


def test_outcomes_follow_the_stages(store) -> None:
    """Every pool row's outcome, checked against the stages independently of the trace."""
    p = Params(mode="vector", limit=1, scope="repo0", blend=0.5, overfetch=200.0, cap=0)
    session = LiveSession.fetch(store, _query(store, "vector"), p)
    p = p.with_(overfetch=100.0)  # half the cached pool: the rest is not fetched
    (t,) = session.traces(p)
    cut = float(t.score[t.stage("blended").rows[2]])  # keep the top two of the scoped rows
    p = p.with_(min_score=cut - 1e-12)
    (t,) = session.traces(p)
    final = set(t.stage("final").rows.tolist())
    blended = set(t.stage("blended").rows.tolist())
    raw = set(t.stage("raw").rows.tolist())
    seen = set()
    for i in range(t.pool.size):
        want = ("returned" if i in final else
                "below_min_score" if i in blended and not t.score[i] >= p.min_score else
                "past_limit" if i in blended else
                "out_of_scope" if i in raw else "not_fetched")
        assert t.outcome(i) == want
        seen.add(want)
    assert seen == {"returned", "past_limit", "below_min_score", "out_of_scope", "not_fetched"}
