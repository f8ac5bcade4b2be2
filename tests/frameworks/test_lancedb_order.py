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
