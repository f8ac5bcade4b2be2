"""LanceDB's own full-text order, wherever a pipeline asks LanceDB for a full-text or hybrid
search: equal BM25 scores come back in an order that changes with the limit asked, so the leg
runs at the system's own k (never cut back from a deeper fetch), and `--mode fts|hybrid` of
LanceDB's own search (pipeline `lancedb`) returns what LanceDB's native search returns, row
for row; the tie groups are still listed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

QUERIES = ("rotate deploy", "keys", "cache logs", "tokens rotate", "note deploy", "logs")
LIMITS = (1, 3, 5, 10, 20, 37)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from inspector.core.stores.opening import open_store
    from tests.storekit import write_mixed_store

    return open_store(str(write_mixed_store(tmp_path_factory.mktemp("order") / "s", 300,
                                            False, 3)), None)


def _run(store: Any, mode: str, text: str, limit: int) -> Any:
    from inspector.core.engine.flow.question import Question, ask

    q = Question(store=store.uri, preset="lancedb", text=text, vector_of="m0007", limit=limit,
                 set={"fetch.mode": mode})
    return ask(q, store)[0]


def _native(store: Any, mode: str, text: str, limit: int) -> list[str]:
    tbl = store.table
    if mode == "fts":
        q = tbl.search(text, query_type="fts")
    else:
        row = tbl.search().where("id = 'm0007'").limit(1).to_arrow()
        vec = np.asarray(row.column("vector")[0].as_py(), np.float32)
        q = tbl.search(query_type="hybrid").vector(vec).text(text)
    return [str(i) for i in q.limit(limit).to_arrow().column("id").to_pylist()]


@pytest.mark.parametrize("mode", ["fts", "hybrid"])
def test_lancedbs_own_search_returns_lancedbs_native_order(store: Any, mode: str) -> None:
    differ_from_row_ids = 0
    for text in QUERIES:
        for limit in LIMITS:
            t = _run(store, mode, text, limit)
            assert t.final.ids == _native(store, mode, text, limit), (mode, text, limit)
            if mode == "fts":  # ids follow row order here: by BM25, then row id
                rows = t.stage("fetch").rows
                by_row_id = sorted(rows, key=lambda s: (-(s.input("bm25") or 0.0), s.id))
                differ_from_row_ids += [s.id for s in rows] != [s.id for s in by_row_id]
                assert any(x.measure == "bm25" for x in t.ties) or limit == 1
    assert differ_from_row_ids or mode == "hybrid"  # ties LanceDB does not order by row id


def test_the_order_changes_with_k_and_each_k_is_lancedbs(store: Any) -> None:
    """The same query at two limits: each page is LanceDB's own at that limit, though the
    shorter is not a prefix of the longer (a cut of a deeper fetch could not give both)."""
    pages = {k: _run(store, "fts", "keys", k).final.ids for k in (5, 40)}
    assert pages[5] == _native(store, "fts", "keys", 5)
    assert pages[40] == _native(store, "fts", "keys", 40)
    assert pages[5] != pages[40][:5]


def test_the_classic_stage_keeps_the_pool_for_live_reranking(tmp_path: Path, store: Any) -> None:
    """The deep canonical pool still answers the live re-ranking (a cached pool is reused);
    only the order shown comes from the search at k."""
    from inspector.core.engine import pools

    before = pools.SOURCE.fetches
    _run(store, "fts", "cache logs", 7)
    _run(store, "fts", "cache logs", 7)
    assert pools.SOURCE.fetches - before <= 1


@pytest.fixture(scope="module")
def indexed_random(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A random store with its own full-text index, so LanceDB's native hybrid search runs on
    the very table the inspector reads."""
    from inspector.core.stores.opening import open_store
    from tests.storekit import write_random_store

    path = write_random_store(tmp_path_factory.mktemp("hyb") / "s", 400, 8, 7, 6)
    import lancedb

    db = lancedb.connect(str(path))
    db.open_table("memories").create_index("text", config=lancedb.index.FTS())
    return open_store(str(path), None)


@pytest.mark.parametrize("rrf_k", [1, 60])
def test_a_fresh_hybrid_fetch_keeps_the_tied_rows_lancedb_returns_past_the_row_id_cut(
        indexed_random: Any, rrf_k: int) -> None:
    """LanceDB's full-text search at k keeps any of the rows tied at its cut, not the lowest
    row ids: a fresh pool fetched to k (row-id order) must still hold the others, or the
    fused ranking loses a row LanceDB's own hybrid search returns (CI, run 4 on b2205bc: a
    fresh run lost m0262, LanceDB's 17th full-text row and the 42nd by row id, which a
    cached deeper pool kept). Each page equals LanceDB's native hybrid search, prefilter and
    RRF constant as given."""
    from lancedb.rerankers import RRFReranker

    from inspector.core.engine import pools
    from inspector.core.engine.flow.runner import PoolCache
    from tests.askkit import ask

    store = indexed_random
    vec = np.random.default_rng(5).normal(size=store.dim).astype(np.float32)
    where = "repo IN ('repo2')"
    past_the_cut = 0
    for text in ("note about keys repo2", "tokens and repo2", "keys"):
        for limit in (3, 5, 8):
            depth = limit * 8
            fts = store.table.search(text, query_type="fts").where(where, prefilter=True)
            got = fts.with_row_id(True).limit(1000).to_arrow()
            ranked = sorted(zip(got["_score"].to_pylist(), got["_rowid"].to_pylist(),
                                got["id"].to_pylist(), strict=True),
                            key=lambda x: (-x[0], x[1]))
            by_rowid = {i for _, _, i in ranked[:depth]}
            at_k = fts.limit(depth).to_arrow()["id"].to_pylist()
            past_the_cut += bool(set(at_k) - by_rowid)
            native = (store.table.search(query_type="hybrid").vector(vec).text(text)
                      .where(where, prefilter=True).rerank(RRFReranker(K=rrf_k))
                      .limit(depth).to_arrow()["id"].to_pylist())
            pools.SOURCE.clear()
            t = ask(store, cache=PoolCache(), text=text, vector=vec, mode="hybrid",
                    filter="pushdown", scope="repo2", distance="l2", limit=limit,
                    overfetch=8, cap=0, fts_k=0, vec_k=0, rrf_k=rrf_k).trace
            assert t.stage("fetch").ids == native, (text, limit)
    assert past_the_cut  # LanceDB kept a tied row past the row-id cut somewhere above


def test_a_tied_row_the_pool_lacks_is_said_not_hidden(indexed_random: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool holds a tie at the full-text cut up to TIE_FETCH_MAX rows, and LanceDB's
    subsets at k were nested in its deeper ones on every store tried; should its search at
    k ever name a row the pool lacks (here: a deep one swapped in), the answer warns that the
    fused ranking may differ, and stays silent otherwise."""
    from inspector.core.engine import pool as pool_mod
    from inspector.core.engine import pools
    from inspector.core.engine.flow.runner import PoolCache
    from tests.askkit import ask

    store = indexed_random
    text = "note about keys repo2"

    def warnings() -> tuple[list[str], list[str]]:
        pools.SOURCE.clear()
        t = ask(store, cache=PoolCache(), text=text, mode="fts", filter="pushdown",
                scope="repo2", limit=16, overfetch=1, cap=0).trace
        return ([w for w in t.warnings if "tied rows the fetched pool lacks" in w],
                t.stage("fetch").ids)

    said, ids = warnings()
    assert said == [] and len(ids) == 16
    deep = store.table.search(text, query_type="fts").where("repo IN ('repo2')",
                                                            prefilter=True).limit(200)
    far = [i for i in deep.to_arrow()["id"].to_pylist() if i not in ids][-1]
    real = pool_mod.native_fts_ids
    monkeypatch.setattr(pool_mod, "native_fts_ids",
                        lambda *a: (*real(*a)[:-1], far))
    said, ids = warnings()
    assert len(said) == 1 and far not in ids and len(ids) == 15
