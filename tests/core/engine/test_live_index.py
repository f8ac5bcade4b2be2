"""On indexed tables an answer from the cache is never one a fresh run would not give: where
the index's deep prefix is not exact (HNSW, refine factor) a shallower depth searches again,
and what was fetched is cached. Every answer is checked against a fresh run (nothing cached
anywhere), what `inspector query` runs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine import pools
from inspector.core.engine.flow.answer import to_json
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.stores.opening import open_store
from tests import indexkit
from tests.askkit import ask


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    base = tmp_path_factory.mktemp("live-index")
    return {kind: open_store(str(indexkit.build(base / kind.lower(), kind)))
            for kind in ("IVF_PQ", "IVF_HNSW_SQ")}


def _doc(store: Any, cache: Any, **given: Any) -> dict[str, Any]:
    got = to_json(ask(store, cache=cache, facet="on", **given))
    got.pop("runs")
    got["params"].pop("now"), got["params"].pop("now_iso")  # the clock the run read
    return got


def _fresh(store: Any, **given: Any) -> dict[str, Any]:
    pools.SOURCE.clear()  # a fresh run searches: no pool fetched before is reused
    return _doc(store, PoolCache(), **given)


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
def test_every_cached_answer_equals_a_fresh_run(stores, kind, steps, q) -> None:
    store = stores[kind]
    given_ = {"vector": indexkit.queries(8)[q], "limit": 10, "scope": "main",
              "scope_strategy": "column", "scope_column": "agentId"}
    cache = PoolCache()
    _doc(store, cache, **given_)
    for key, value in steps:
        if value is None:
            given_.pop(key, None)
        else:
            given_[key] = value
        got = _doc(store, cache, **given_)
        want = _fresh(store, **given_)
        assert got["stages"][1]["candidates"] == want["stages"][1]["candidates"], (kind, key)
        assert got == want


def test_hnsw_depths_are_requeried_and_cached(stores) -> None:
    store = stores["IVF_HNSW_SQ"]
    given_ = {"vector": indexkit.queries(1)[0], "limit": 10}
    want = _fresh(store, **given_, overfetch=1.0)
    cache = PoolCache()
    deep = _doc(store, cache, **given_, overfetch=2.0)
    shallow = _doc(store, cache, **given_, overfetch=1.0)  # the index answers 10 differently
    assert shallow == want
    fetched = pools.SOURCE.fetches
    back = _doc(store, cache, **given_, overfetch=2.0)  # back at depth 20: the cached fetch
    assert pools.SOURCE.fetches == fetched  # no search
    assert back == deep


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
    its pool. Shallower it is not exact (see EXHAUSTED), so such a depth runs its own query;
    deeper it is (every partition the search may probe was probed, every candidate refined),
    so the cached pool answers it. Each depth is checked against a fresh run."""
    store = stores[kind]
    scoped = dict(scope=indexkit.RARE, scope_strategy="column", scope_column="agentId",
                  filter="pushdown", cap=0, **knobs)
    exhausted = 0
    for vec in indexkit.queries(12):
        cache = PoolCache()
        deep = _doc(store, cache, vector=vec, limit=200, **scoped)
        exhausted += len(deep["stages"][1]["candidates"]) < 200
        for limit in (1, 3, 5, 10, 30, 300):
            got = _doc(store, cache, vector=vec, limit=limit, **scoped)
            assert got == _fresh(store, vector=vec, limit=limit, **scoped), (limit, knobs)
    assert exhausted == 12  # the story: every pool came back shorter than asked
