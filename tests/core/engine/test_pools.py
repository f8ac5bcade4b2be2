"""One pool source (issue 18 item 4): only `pools` fetches a fixed-pipeline pool, every depth
constant lives there, pools are shared between the sweep, expected rows, receipts and compare
of one open store, and the one cache keeps its one eviction rule."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import numpy as np
import pytest

from inspector.core.engine import pools
from inspector.core.engine.flow.answer import to_json
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Query, fetch_pool
from inspector.core.engine.pools import Lru, PoolSource
from inspector.core.stores.opening import open_store
from tests.askkit import ask
from tests.storekit import CountingTable, snapshot, write_tuning_store

PACKAGE = Path(__file__).resolve().parents[3] / "inspector"
SOURCE_MODULE = "inspector/core/engine/pools/__init__.py"  # the pool source
DEPTH_CONSTANTS = {"MAX_OVERFETCH", "EXHAUSTIVE_MAX", "PROBE_DEPTH"}


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(f.relative_to(PACKAGE.parent)), ast.parse(f.read_text()))
            for f in sorted(PACKAGE.rglob("*.py"))]


def _calls(names: set[str]) -> list[tuple[str, str, int]]:
    """(module, name, line) of every call in the package of a function or class in `names`,
    by plain name or attribute."""
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.id if isinstance(f, ast.Name) else \
                    f.attr if isinstance(f, ast.Attribute) else None
                if called in names:
                    found.append((name, called, node.lineno))
    return found


def test_only_the_pool_source_calls_fetch_pool() -> None:
    """Nothing else fetches: the one call of `pool.fetch_pool` in the package is the pool
    source's (the window, sweeps, receipts, map, compare and expected rows ask `pools`)."""
    callers = _calls({"fetch_pool"})
    assert len(callers) == 1 and callers[0][0] == SOURCE_MODULE, callers


def test_only_the_pool_source_starts_a_batched_scan() -> None:
    """Many queries' vector legs (a sweep's, an audit's probes) come from one scan that the
    pool source starts (`pools.vector_legs`); no sweep, audit or window module scans or
    searches for legs of its own."""
    callers = sorted({f"{m}:{c}" for m, c, _ in _calls({"scan_legs", "run_scan", "Legs"})})
    assert callers == [f"{SOURCE_MODULE}:scan_legs",
                       "inspector/core/engine/pools/batched.py:Legs",
                       "inspector/core/engine/pools/batched.py:run_scan"], callers


def test_every_depth_constant_is_set_in_the_pool_source_alone() -> None:
    """One depth policy: the over-fetch slider's top, the exhaustive and hybrid-scan depths and
    the probe depth are assigned in pools (its __init__) and nowhere else."""
    where: dict[str, list[str]] = {}
    for name, tree in _modules():
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Name) and t.id in DEPTH_CONSTANTS:
                    where.setdefault(t.id, []).append(name)
    assert where == {c: [SOURCE_MODULE] for c in DEPTH_CONSTANTS}


@pytest.fixture
def counted(tmp_path):
    path = write_tuning_store(tmp_path / "s", n=300)
    before = snapshot(path)
    store = open_store(str(path))
    store.table = CountingTable(store.table)
    yield store, store.table
    assert snapshot(path) == before  # read-only, always


def _query(store) -> Query:
    vec = np.random.default_rng(11).normal(size=store.dim).astype(np.float32)
    return Query(text="rotate keys tokens", vector=vec, source="vector")


def _answer(store, **given) -> dict:
    """A question asked afresh (its own fetch-stage cache): only the pool source may hold
    what an earlier question fetched."""
    query = _query(store)
    got = to_json(ask(store, text=query.text, vector=query.vector, cache=PoolCache(), **given))
    got.pop("runs"), got["params"].pop("now"), got["params"].pop("now_iso")
    return got


def test_a_repeated_run_searches_once_and_equals_a_fresh_one(counted) -> None:
    store, table = counted
    given = {"limit": 10, "scope": "repo0", "scope_strategy": "column", "scope_column": "repo"}
    first = _answer(store, **given)
    searched = table.searches
    assert _answer(store, **given, blend=0.4) != first
    assert table.searches == searched
    pools.SOURCE.clear()
    assert _answer(store, **given) == first
    assert table.searches > searched


def test_pools_are_keyed_by_the_store_object_its_query_and_what_shapes_the_fetch(tmp_path
                                                                                ) -> None:
    path = write_tuning_store(tmp_path / "s", n=120)
    a, b = open_store(str(path)), open_store(str(path))
    src = PoolSource()
    q = _query(a)
    p = Params(limit=5)
    pool = src.pool(a, q, p, 5, 0)
    assert src.pool(a, q, p.with_(blend=0.5, min_score=0.1, limit=3), 5, 0) is pool
    assert src.fetches == 1
    for other in (src.pool(b, q, p, 5, 0),  # another open store
                  src.pool(a, Query(vector=-q.vector, source="vector"), p, 5, 0),
                  src.pool(a, q, p.with_(scope="repo1"), 5, 0),
                  src.pool(a, q, p.with_(filter="pushdown", scope="repo1"), 5, 0),
                  src.pool(a, q, p.with_(distance="cosine"), 5, 0),
                  src.pool(a, q, p, 6, 0)):
        assert other is not pool
    assert src.fetches == 7
    del b
    gc.collect()
    src.pool(a, q, p, 5, 0)  # the next ask forgets the pools of a store that is gone
    assert len(src.cache.entries) == 6 and src.fetches == 7


def test_a_deeper_flat_pool_answers_a_shallower_cell_from_the_cache(counted) -> None:
    """`answering`: the one rule (`cannot_answer`) lets a deeper flat pool answer a shallower
    depth, so a sweep cell asks no search of its own."""
    store, table = counted
    query = _query(store)
    p = Params(limit=10, cap=0)
    deep = pools.fetch_for(store, query, p, max_overfetch=5)
    searched = table.searches
    assert pools.answering(store, query, p.with_(overfetch=2.0)) is deep
    assert table.searches == searched
    got = pools.answering(store, query, p.with_(overfetch=8.0))  # deeper than the cache
    assert got is not deep and table.searches == searched + 1


def test_cached_only_answers_from_the_cache_and_never_searches(counted) -> None:
    """A window's tick is answered in the tick only from what was fetched: inside
    `cached_only` a pool or full-text order not cached raises WouldSearch and LanceDB is not
    searched; on another thread, and after the block, searches run as ever."""
    import threading

    store, table = counted
    query = _query(store)
    p = Params(limit=10, cap=0)
    deep = pools.fetch_for(store, query, p, max_overfetch=5)
    searched = table.searches
    with pools.cached_only():
        assert pools.answering(store, query, p.with_(overfetch=2.0)) is deep
        with pytest.raises(pools.WouldSearch):
            pools.answering(store, query, p.with_(overfetch=8.0))
        with pytest.raises(pools.WouldSearch):
            pools.fts_order(store, "rotate keys", 7, p)
        elsewhere: list = []
        worker = threading.Thread(target=lambda: elsewhere.append(
            pools.answering(store, query, p.with_(overfetch=9.0))))
        worker.start()
        worker.join()
    assert table.searches == searched + 1 and elsewhere[0].size > deep.size  # the thread's
    assert pools.answering(store, query, p.with_(overfetch=12.0)).size > elsewhere[0].size
    assert table.searches == searched + 2


def test_the_cache_evicts_the_least_recently_used_past_its_bounds() -> None:
    lru = Lru(max_entries=3, max_rows=10, weigh=len)
    for k in "abc":
        lru.put(k, [0])
    assert lru.get("a") == [0]  # a is now the most recently used
    lru.put("d", [0])
    assert list(lru.entries) == ["c", "a", "d"]  # b, the least recently used, went first
    lru.put("e", [0] * 9)  # 12 rows: over the row bound, the oldest go until it fits
    assert list(lru.entries) == ["d", "e"] and lru.rows == 10
    lru.put("f", [0] * 20)  # alone over the bound: the newest always stays
    assert list(lru.entries) == ["f"]


def test_a_cache_s_groups_list_what_a_scan_of_every_key_would_in_its_order() -> None:
    """`Lru.in_group` (what `answering` reads) lists one group's values most recent first,
    exactly as filtering `values()` by the group would, through gets, puts of a key again,
    evictions by either bound, drops and a clear."""
    import random

    rng = random.Random(34)
    lru = Lru(max_entries=6, max_rows=25, weigh=len, group=lambda k: k[0])
    for step in range(3_000):
        key = (rng.choice("abc"), rng.randrange(5))
        act = rng.random()
        if act < 0.5:
            lru.put(key, [step] * rng.randrange(1, 9))
        elif act < 0.9:
            lru.get(key)
        elif act < 0.98:
            gone = (rng.choice("abc"), rng.randrange(5))
            lru.drop(lambda k, gone=gone: k != gone)
        else:
            lru.clear()
        for g in "abcd":
            scanned = [lru.entries[k] for k in reversed(lru.entries) if k[0] == g]
            assert lru.in_group(g) == scanned, step
        assert set(lru.groups) == {k[0] for k in lru.entries}
        assert lru.rows == sum(map(len, lru.entries.values()))


def test_answering_takes_the_deepest_of_the_question_s_own_pools_among_many(
        counted, monkeypatch) -> None:
    """With the cache full of other questions' pools, `answering` asks the one rule of the
    asked question's pools alone and takes the deepest that answers, however recently a
    shallower one was used."""
    store, _ = counted
    src = PoolSource()
    p = Params(limit=10, cap=0)
    rng = np.random.default_rng(5)
    for i in range(20):  # other questions' pools: other vectors
        src.pool(store, Query(vector=rng.normal(size=store.dim).astype(np.float32)), p,
                 10 + i, 10)
    query = _query(store)
    shallow = src.pool(store, query, p, 20, 20)
    deep = src.pool(store, query, p, 40, 40)
    asked: list[int] = []
    real = pools.answers

    def counted_answers(pool, params):  # noqa: ANN001, ANN202
        asked.append(pool.size)
        return real(pool, params)

    monkeypatch.setattr(pools, "answers", counted_answers)
    assert src.answering(store, query, p.with_(overfetch=2.0)) is deep
    assert sorted(asked) == sorted([shallow.size, deep.size])
    src.cache.get(next(k for k, (_, v) in src.cache.entries.items() if v is shallow))
    assert src.answering(store, query, p.with_(overfetch=2.0)) is deep  # deepest first


def test_the_depth_policy_names_each_purpose(counted) -> None:
    store, _ = counted
    p = Params(limit=10, cap=0)
    assert pools.depth_for("params", store, p) == (10, 0)
    assert pools.depth_for("live", store, p) == (200, 0)  # MAX_OVERFETCH: 10 x 20
    # past MAX_OVERFETCH twice the asked over-fetch: the next ticks need no search
    assert pools.depth_for("live", store, p.with_(overfetch=20.1)) == (402, 0)
    assert pools.depth_for("exhaustive", store, p) == (300, 300)  # the whole table
    assert pools.depth_for("sweep", store, p, max_overfetch=4, depth=25) == (40, 40)
    with pytest.raises(ValueError):
        pools.depth_for("guess", store, p)


def test_the_source_returns_what_fetch_pool_returns(counted) -> None:
    store, _ = counted
    query = _query(store)
    p = Params(mode="hybrid", limit=10, scope="repo2")
    got = pools.fetch(store, query, p, 30, 30)
    want = fetch_pool(store, query, p, vec_k=30, fts_k=30)
    assert list(got.ids) == list(want.ids)
    assert got.vec_leg.depth == want.vec_leg.depth and got.fts_leg.depth == want.fts_leg.depth


def test_a_live_over_fetch_past_the_top_searches_once_per_doubling(counted, tmp_path) -> None:
    """Issue 34: a slider moved past MAX_OVERFETCH searched LanceDB on every tick (~16 ms of a
    demo tick at pool 1,000); the live fetch goes to twice the asked over-fetch, so the ticks
    after it re-rank the cached pool, each equal to a fresh run."""
    from inspector.core.engine.flow.live import LiveFlow
    from inspector.core.engine.flow.question import Question, answer

    store, table = counted
    q = Question(store=store.uri, preset="memory-plugin", limit=3,
                 vector=[float(x) for x in _query(store).vector])
    steps = [20.1, 20.2, 20.7, 21.5, 23.3, 26.0, 29.9, 40.2]  # 61 ... 121 rows
    other = open_store(store.uri)  # fresh runs on another store object: none of its pools
    want = {f: [s.id for s in answer(q.model_copy(update={"set": {"fetch.overfetch": f}}),
                                     other).trace.final.rows] for f in steps}
    pools.SOURCE.clear()
    live = LiveFlow(store, q, 1.8e12)
    live.sets = {"fetch.overfetch": 20.0}
    live.answer()
    searched = table.searches
    for f in steps:
        live.sets = {"fetch.overfetch": f}
        assert [s.id for s in live.answer().final.rows] == want[f], f
    assert table.searches == searched + 1  # one search, 121 rows deep (over-fetch 40.2)


def test_a_scoped_miss_s_diagnosis_answers_its_fix_search_from_its_deep_probe(tmp_path: Path
                                                                               ) -> None:
    """A post-filtered scoped miss on a flat table deeper than the deepest probe: the question's
    pool, the diagnosis's deep probe (an exhaustive pool) and the pushed-down fix's pool are
    three searches, and every depth the fix search tries is answered from the deep probe. The
    cache's row bound held one deep pool: the third put evicted it, and the fix search made a
    LanceDB search per depth tried (12 searches on this table)."""
    from inspector.core.engine.flow.question import answer, make_question
    from tests.storekit import write_random_store

    path = write_random_store(tmp_path / "db", n=pools.EXHAUSTIVE_MAX + 2_000, repos=40)
    store = open_store(str(path))
    v = np.random.default_rng(0).normal(size=8).astype(np.float32)
    q = make_question(store=str(path), preset="lancedb", vector=[float(x) for x in v],
                      limit=10, scopes=["repo3"], set={"fetch.overfetch": 5})
    pools.SOURCE.clear()
    before = pools.SOURCE.fetches
    got = answer(q, store)
    assert got.diagnosis.code == "filter_after_cut"
    assert got.diagnosis.fixes, "the fix search found the smallest change"
    assert pools.SOURCE.fetches - before <= 3
    pools.SOURCE.clear()


def test_a_hybrid_query_starts_no_thread_of_its_own(counted, monkeypatch) -> None:
    """Issue 34: a hybrid fetch ran its two legs in a pool of threads made for the query, so
    each query started two threads and waited for each to start (~0.1 of a hybrid query's
    time at 10,000 rows). The second leg now runs on threads made once a process, beside the
    first on the caller's thread: the same pool, and no thread started."""
    import threading

    store, _ = counted
    query = _query(store)
    p = Params(mode="hybrid", limit=10, scope="repo2")
    first = fetch_pool(store, query, p, vec_k=30, fts_k=30)  # the side threads made once
    started: list[str] = []
    real_start = threading.Thread.start

    def counted_start(self: threading.Thread) -> None:
        started.append(self.name)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", counted_start)
    for _ in range(3):
        again = fetch_pool(store, query, p, vec_k=30, fts_k=30)
        assert list(again.ids) == list(first.ids)
    assert started == []


def test_hybrid_fetches_from_many_threads_at_once_are_each_their_own(counted) -> None:
    """Callers on several threads at once (a window's re-rank jobs, an audit) share the side
    threads: more hybrid fetches than side threads at once each get the pool a lone fetch
    gets, and none waits forever."""
    from concurrent.futures import ThreadPoolExecutor

    from inspector.core.engine import pool as pool_module

    store, _ = counted
    rng = np.random.default_rng(5)
    queries = [Query(text="rotate keys tokens", source="vector",
                     vector=rng.normal(size=store.dim).astype(np.float32))
               for _ in range(3 * pool_module.SIDE_THREADS)]
    p = Params(mode="hybrid", limit=10)
    want = [list(fetch_pool(store, q, p, vec_k=20, fts_k=20).ids) for q in queries]
    with ThreadPoolExecutor(len(queries)) as callers:
        got = list(callers.map(lambda q: list(fetch_pool(store, q, p, vec_k=20, fts_k=20).ids),
                               queries, timeout=120))
    assert got == want


def test_a_failing_leg_is_said_once_both_legs_have_ended(counted, monkeypatch) -> None:
    """The vector leg runs on the caller's thread and the full-text leg on a side thread: a
    failure of the first reaches the caller as the engine's own error (not a traceback), and
    only once the leg beside it has ended (nothing of the query runs on after it answered)."""
    import time

    from inspector.core.engine import pool as pool_module
    from inspector.core.errors import InspectorError

    store, _ = counted
    ended: list[str] = []
    real_fts = pool_module._fts_leg

    def slow_fts(*a, **k):  # noqa: ANN002, ANN003, ANN202
        time.sleep(0.3)
        got = real_fts(*a, **k)
        ended.append("fts")
        return got

    def broken_vec(*a, **k):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("the vector column is gone")

    monkeypatch.setattr(pool_module, "_fts_leg", slow_fts)
    monkeypatch.setattr(pool_module, "_vector_leg", broken_vec)
    with pytest.raises(InspectorError, match="the vector column is gone"):
        fetch_pool(store, _query(store), Params(mode="hybrid", limit=10), vec_k=20, fts_k=20)
    assert "fts" in ended  # (a tie at its cut fetches it twice)


@pytest.mark.parametrize("intid", [False, True])
def test_a_pools_id_order_is_its_ids_in_ascending_order(tmp_path: Path, intid: bool) -> None:
    """`Pool.id_order` (the docs engine's and RRF's tie-break) is each row's place among the
    pool's ids in ascending order: text compared as Python compares it (code points: "" first,
    "B" before "a", "a" before "a\\x00" before "ä"), whole numbers numerically. A sweep builds
    one 10,000-row pool a query, so how the order is made matters; what it is must not
    change."""
    from tests.storekit import write_table

    rng = np.random.default_rng(8)
    n = 64
    if intid:
        ids = [int(x) for x in rng.permutation(10 ** 6)[:n]]
    else:
        stems = ["a", "B", "ä", "a\x00", "Zz", "é", "10", "9", "", "a b"]
        ids = [f"{stems[i % len(stems)]}{i // len(stems)}" if i >= len(stems) else stems[i]
               for i in range(n)]
    vecs = rng.normal(size=(n, 4)).astype(np.float32)
    path = write_table(tmp_path / "ids", {
        "id": ids, "text": [f"row {i}" for i in range(n)],
        "vector": vecs})
    store = open_store(str(path))
    pool = fetch_pool(store, Query(text=None, vector=vecs[0], source="vector"),
                      Params(mode="vector", limit=10), vec_k=n, fts_k=0)
    got = list(pool.ids)
    assert sorted(got) == sorted(ids)
    want = np.empty(n, np.int64)
    want[sorted(range(n), key=got.__getitem__)] = np.arange(n)
    assert pool.id_order.tolist() == want.tolist()


@pytest.fixture
def wide(tmp_path: Path):
    """A flat table the batched scan takes (32 dimensions), deeper than a scanned leg."""
    from tests.storekit import write_random_store

    path = write_random_store(tmp_path / "w", n=pools.SCAN_LEG_MIN + 700, dim=32, repos=8)
    before = snapshot(path)
    yield open_store(str(path))
    assert snapshot(path) == before  # read-only, always


@pytest.fixture
def vector_searches(monkeypatch) -> list[int]:
    """The depth of every vector search LanceDB is asked (`pool._vector_leg`)."""
    import inspector.core.engine.pool as P

    asked: list[int] = []
    real = P._vector_leg

    def counted(store, vec, k, *rest):
        asked.append(k)
        return real(store, vec, k, *rest)

    monkeypatch.setattr(P, "_vector_leg", counted)
    return asked


def _same_pool(got, want) -> None:
    assert list(got.ids) == list(want.ids)
    for name in ("vec_rank", "vec_dist", "importance", "in_scope", "rowids", "id_order"):
        assert np.array_equal(getattr(got, name), getattr(want, name), equal_nan=True), name
    assert got.columns == want.columns
    assert np.array_equal(got.vec_leg.rows, want.vec_leg.rows)
    assert np.array_equal(got.vec_leg.values, want.vec_leg.values)
    assert (got.vec_leg.depth, got.vec_leg.exhausted) == \
        (want.vec_leg.depth, want.vec_leg.exhausted)
    assert got.vec_leg.next_value == want.vec_leg.next_value or \
        np.isnan(got.vec_leg.next_value) and np.isnan(want.vec_leg.next_value)


def test_a_deep_leg_is_scanned_once_the_querys_own_search_can_check_it(wide, vector_searches
                                                                       ) -> None:
    """Issue 34 (memory at 1M rows): the diagnosis's 10,000-deep probe was a LanceDB flat
    search, which peaked ~640 MB above the answer's other searches on 1M x 384 rows. A vector
    leg at least SCAN_LEG_MIN deep, where a pool of the same query and parameters holds
    LanceDB's own leg, comes from the batched scan, checked against that leg: no vector
    search, and the very pool LanceDB's search gives."""
    store = wide
    src = PoolSource()
    q = Query(vector=np.random.default_rng(5).normal(size=32).astype(np.float32),
              source="vector")
    p = Params(limit=10, scope="repo3")  # post-filtered: the deep probe's case
    src.pool(store, q, p, 50, 0)
    assert vector_searches == [51]  # one past the cut: LanceDB's own leg
    deep = src.pool(store, q, p, pools.SCAN_LEG_MIN + 300, 0)
    assert vector_searches == [51] and src.scanned == 1
    _same_pool(deep, fetch_pool(store, q, p, vec_k=pools.SCAN_LEG_MIN + 300, fts_k=0))
    # past the table: the scanned leg says it is exhausted, as the search does
    whole = src.pool(store, q, p, store.rows + 5, 0)
    assert src.scanned == 2 and whole.vec_leg.exhausted
    _same_pool(whole, fetch_pool(store, q, p, vec_k=store.rows + 5, fts_k=0))


def test_a_deep_leg_is_searched_where_no_search_of_the_query_can_check_a_scan(
        wide, vector_searches) -> None:
    """No pool of this query and parameters with LanceDB's own leg (a first fetch, another
    scope, a shallower depth than the scan pays for): LanceDB searches, as before."""
    store = wide
    src = PoolSource()
    q = Query(vector=np.random.default_rng(6).normal(size=32).astype(np.float32),
              source="vector")
    p = Params(limit=10, scope="repo3")
    deep = pools.SCAN_LEG_MIN + 300
    src.pool(store, q, p, deep, 0)  # nothing to check a scan against
    src.pool(store, q, p.with_(scope="repo4"), 50, 0)
    src.pool(store, q, p.with_(scope="repo5"), deep, 0)  # repo4's leg is another query's
    src.pool(store, q, p.with_(scope="repo4"), pools.SCAN_LEG_MIN - 1, 0)  # too shallow
    assert vector_searches == [deep + 1, 51, deep + 1, pools.SCAN_LEG_MIN]
    assert src.scanned == 0
    with pools.searched_only():  # a caller with its scan off (an audit's --no-scan)
        src.pool(store, q, p.with_(scope="repo4"), deep, 0)  # repo4's leg is at hand
    assert vector_searches[-1] == deep + 1 and src.scanned == 0
    src.pool(store, q, p.with_(scope="repo4"), deep + 1, 0)
    assert vector_searches[-1] == deep + 1 and src.scanned == 1  # after the block: scanned


def test_an_audit_with_its_scan_off_scans_no_deep_leg() -> None:
    """`--no-scan` searches each probe on its own: every public step of a prober with its
    scan off runs inside `pools.searched_only`, so no deep leg (a fix's) is scanned."""
    from inspector.core.analysis.audit import probes

    seen: list[bool] = []

    class Asked:
        scan = False

        @probes._own_searches
        def step(self) -> None:
            seen.append(getattr(pools._searched_only, "on", False))

    Asked().step()
    Asked.scan = True
    Asked().step()
    assert seen == [True, False]
    for name in ("prepare", "ask", "fix", "diagnosis"):
        assert getattr(probes.Prober, name).__wrapped__, name


def test_a_scan_that_differs_from_the_querys_own_search_is_not_used(wide, vector_searches,
                                                                    monkeypatch) -> None:
    """The check is real: a scan whose distance differs from LanceDB's leg by one float32
    step, or whose row ids differ, is thrown away and LanceDB searches the deep leg."""
    from inspector.core.engine.pools import batched

    store = wide
    real = batched.run_scan
    q = Query(vector=np.random.default_rng(7).normal(size=32).astype(np.float32),
              source="vector")
    p = Params(limit=10, scope="repo3")
    deep = pools.SCAN_LEG_MIN + 300
    for spoil in ("distance", "rowid"):
        def spoiled(*a, _how=spoil, **k):
            got = real(*a, **k)
            if _how == "distance":
                d = got.distances[0]
                d[7] = np.nextafter(d[7], np.float32(np.inf))
            else:
                ids = got.rowids[0]
                ids[[3, 4]] = ids[[4, 3]]
            return got

        monkeypatch.setattr(batched, "run_scan", spoiled)
        src = PoolSource()
        src.pool(store, q, p, 50, 0)
        got = src.pool(store, q, p, deep, 0)
        assert vector_searches[-2:] == [51, deep + 1] and src.scanned == 0, spoil
        _same_pool(got, fetch_pool(store, q, p, vec_k=deep, fts_k=0))


def test_a_scoped_miss_answers_the_same_with_its_deep_probe_scanned(wide, monkeypatch) -> None:
    """The whole answer (its diagnosis, fixes and every number) is the same whether the deep
    probe is scanned or searched."""
    from inspector.core.engine.flow.question import answer, make_question

    store = wide
    v = np.random.default_rng(8).normal(size=32).astype(np.float32)
    q = make_question(store=store.uri, preset="lancedb", vector=[float(x) for x in v],
                      limit=10, scopes=["repo3"], set={"fetch.overfetch": 2})

    def asked() -> dict:
        pools.SOURCE.clear()
        got = to_json(answer(q, store))
        got.pop("runs", None), got["params"].pop("now"), got["params"].pop("now_iso")
        return got

    before = pools.SOURCE.scanned
    scanned = asked()
    assert pools.SOURCE.scanned > before
    assert scanned["diagnosis"]["code"] == "filter_after_cut"
    monkeypatch.setattr(pools, "SCAN_LEG_MIN", 10**9)
    before = pools.SOURCE.scanned
    assert asked() == scanned
    assert pools.SOURCE.scanned == before
    pools.SOURCE.clear()


def test_a_deeper_search_of_the_query_checks_a_shallower_scan_by_its_prefix(
        wide, vector_searches) -> None:
    """A flat leg's prefix is its search at that depth: a LanceDB leg deeper than the one asked
    checks the scan over the asked depth (compared whole, the scan had fewer rows than the
    reference and was thrown away after it ran)."""
    store = wide
    src = PoolSource()
    q = Query(vector=np.random.default_rng(9).normal(size=32).astype(np.float32),
              source="vector")
    p = Params(limit=10, scope="repo2")
    src.pool(store, q, p, pools.SCAN_LEG_MIN + 500, 0)  # nothing to check a scan against
    got = src.pool(store, q, p, pools.SCAN_LEG_MIN + 100, 0)
    assert vector_searches == [pools.SCAN_LEG_MIN + 501] and src.scanned == 1
    _same_pool(got, fetch_pool(store, q, p, vec_k=pools.SCAN_LEG_MIN + 100, fts_k=0))
