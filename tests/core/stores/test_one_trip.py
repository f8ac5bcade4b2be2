"""A leg's LanceDB search in one trip to LanceDB's event loop (store.search_builder and
store.run_search): the same table as LanceDB's own `search(...).to_arrow()`, on flat and
IVF_PQ tables, with every knob and filter the engine's legs give, in one hand-over where the
synchronous API makes five; anything else runs LanceDB's own `to_arrow`."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pytest

from inspector.core.stores.opening import open_store
from inspector.core.stores.store import StoreDamagedError, run_search, search_builder
from tests.storekit import write_random_store

DIM = 16


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A flat table and an IVF_PQ one (same rows), each with a full-text index."""
    from lancedb.index import FTS, IvfPq

    out = {}
    for kind in ("flat", "ivf_pq"):
        path = write_random_store(tmp_path_factory.mktemp(kind) / "s", n=600, dim=DIM, seed=3)
        tbl = lancedb.connect(str(path)).open_table("memories")
        tbl.create_index("text", config=FTS())
        if kind == "ivf_pq":
            tbl.create_index("vector", config=IvfPq(num_partitions=4, num_sub_vectors=4))
        out[kind] = path
    return out


@contextlib.contextmanager
def trips() -> Any:
    """Counts LanceDB's hand-overs to its event loop (LOOP.run) inside the block."""
    from lancedb.background_loop import LOOP

    count = [0]
    real = LOOP.run

    def counted(coro: Any) -> Any:
        count[0] += 1
        return real(coro)

    LOOP.run = counted  # type: ignore[method-assign]
    try:
        yield count
    finally:
        LOOP.run = real  # type: ignore[method-assign]


VECTOR_CASES = {
    "plain": lambda q: q,
    "cosine": lambda q: q.distance_type("cosine"),
    "prefilter": lambda q: q.where("repo = 'repo1'", prefilter=True),
    "postfilter": lambda q: q.where("repo = 'repo2'", prefilter=False),
    "nprobes": lambda q: q.nprobes(2).refine_factor(3),
    "min_max_nprobes": lambda q: q.minimum_nprobes(1).maximum_nprobes(3),
    "exact": lambda q: q.bypass_vector_index(),
}


@pytest.mark.parametrize("kind", ["flat", "ivf_pq"])
@pytest.mark.parametrize("case", sorted(VECTOR_CASES))
def test_a_vector_search_in_one_trip_returns_lancedbs_own_table(stores, kind, case):
    store = open_store(str(stores[kind]))
    rng = np.random.default_rng(len(case))
    for k in (1, 7, 50, 700):
        vec = rng.normal(size=DIM).astype(np.float32)

        def shaped(q: Any, k: int = k) -> Any:
            q = q.select(["id", "text", "repo", "importance", "_distance"]).with_row_id(True)
            return VECTOR_CASES[case](q.limit(k))

        want = shaped(store.table.search(vec, vector_column_name="vector")).to_arrow()
        with trips() as n:
            got = run_search(shaped(search_builder(store.table, vec, "vector",
                                                   vector_column="vector")))
        assert got.schema.equals(want.schema) and got.equals(want), (case, k)
        assert n[0] == 1, f"{n[0]} trips to LanceDB's loop: the one-trip path was not taken"


@pytest.mark.parametrize("where", [None, "repo = 'repo3'"])
def test_a_full_text_search_in_one_trip_returns_lancedbs_own_table(stores, where):
    store = open_store(str(stores["flat"]))
    for text, k in (("memory", 5), ("memory repo", 40), ("nothing-matches-this", 10)):
        def shaped(q: Any, k: int = k) -> Any:
            q = q.select(["id", "text", "_score"]).with_row_id(True).limit(k)
            return q if where is None else q.where(where, prefilter=True)

        want = shaped(store.table.search(text, query_type="fts", fts_columns="text")).to_arrow()
        with trips() as n:
            got = run_search(shaped(search_builder(store.table, text, "fts",
                                                   fts_columns="text")))
        assert got.schema.equals(want.schema) and got.equals(want), (text, k)
        assert n[0] == 1


def test_a_search_without_row_ids_runs_lancedbs_own_to_arrow(stores):
    """Without row ids the sync API may add them for blob columns and take them off again:
    that search is left to LanceDB's own `to_arrow` (and so are rerankers and other kinds)."""
    store = open_store(str(stores["flat"]))
    vec = np.ones(DIM, np.float32)
    q = search_builder(store.table, vec, "vector", vector_column="vector").limit(5)
    with trips() as n:
        got = run_search(q)
    assert n[0] > 1 and got.equals(store.table.search(vec).limit(5).to_arrow())


def test_a_search_without_row_ids_takes_one_trip_where_lancedb_would_add_none(stores,
                                                                            monkeypatch):
    """Given the table's schema (the store's, at its pinned version), a search without row
    ids takes one trip where LanceDB's own rule adds none for blob columns (the full-text
    order the classic fetch asks of LanceDB: pool.native_fts_ids); where the rule would add
    them, LanceDB's own `to_arrow` runs."""
    import lancedb._blob

    store = open_store(str(stores["flat"]))

    def q() -> Any:
        return search_builder(store.table, "memory", "fts", fts_columns="text") \
            .select(["id"]).limit(12)

    want = store.table.search("memory", query_type="fts", fts_columns="text") \
        .select(["id"]).limit(12).to_arrow()
    schema = store.schema  # read once a store (a trip of its own)
    with trips() as n:
        got = run_search(q(), schema)
    assert n[0] == 1 and got.schema.equals(want.schema) and got.equals(want)
    monkeypatch.setattr(lancedb._blob, "blob_auto_row_id_for_scan", lambda *a, **k: True)
    with trips() as n:
        got = run_search(q(), schema)
    assert n[0] > 1 and got.equals(want)


def test_a_failure_in_one_trip_is_translated_as_every_store_call_is(tmp_path):
    """A data file gone from under the pinned version: the one-trip search says what the
    store's guard says for LanceDB's own search (test_damage.py), not LanceDB's raw error."""
    path = write_random_store(tmp_path / "s", n=50, dim=DIM)
    store = open_store(str(path))
    for f in (path / "memories.lance" / "data").iterdir():
        f.unlink()
    vec = np.ones(DIM, np.float32)
    with pytest.raises(StoreDamagedError) as own:
        store.table.search(vec, vector_column_name="vector").with_row_id(True).limit(3) \
            .to_arrow()
    q = search_builder(store.table, vec, "vector", vector_column="vector")
    with pytest.raises(StoreDamagedError, match="is damaged") as got:
        run_search(q.with_row_id(True).limit(3))
    assert str(got.value) == str(own.value)
