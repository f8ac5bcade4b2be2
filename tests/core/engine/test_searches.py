"""The legs' searches answered from a deeper search of the same query equal what LanceDB
returns when asked at each depth: a flat search's prefix, a prefilter's prefix, and a
post-filter's rows within the unfiltered top k (ties by row id at the cut included); through
an ANN index nothing is derived (each depth is searched)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> object:
    import lancedb

    from tests.storekit import vectors_column

    rng = np.random.default_rng(3)
    n = 600
    vecs = rng.normal(size=(n, 8)).astype(np.float32)
    vecs[100:140] = vecs[100]  # forty rows at one distance from any query: ties at every cut
    t = pa.table({"id": [f"r{i}" for i in range(n)], "vector": vectors_column(vecs),
                  "user": [f"u{i % 7}" for i in range(n)]})
    path = tmp_path_factory.mktemp("searches") / "s"
    return lancedb.connect(str(path)).create_table("m", t), vecs


def _fresh(tbl: object, q: np.ndarray, k: int, where: str | None, prefilter: bool) -> list:
    from inspector.core.engine.pools.searches import canonical

    s = tbl.search(q).with_row_id(True).limit(k)
    if where:
        s = s.where(where, prefilter=prefilter)
    return canonical(s.to_arrow()).column("id").to_pylist()


@pytest.mark.parametrize(("where", "prefilter"), [(None, True), ("user = 'u3'", True),
                                                   ("user = 'u3'", False),
                                                   ("user IN ('u1', 'u5')", False)])
def test_a_deeper_search_answers_every_shallower_depth_as_lancedb_does(
        table: tuple, where: str | None, prefilter: bool) -> None:
    from inspector.core.engine.pools.searches import Searches

    tbl, vecs = table
    for q in (vecs[100] + 0.01, vecs[7]):
        src = Searches()

        def run(n: int, flt: str | None = where, q: np.ndarray = q) -> pa.Table:
            s = tbl.search(q).with_row_id(True).limit(n)
            return s.where(flt, prefilter=prefilter).to_arrow() if flt else s.to_arrow()

        key = ("t", q.tobytes(), where, prefilter)
        post = (("t", q.tobytes(), None, True), lambda n: run(n, None)) \
            if where and not prefilter else None
        src.search(key, 300, run, True, post)
        for k in (1, 2, 5, 17, 40, 41, 99, 100, 139, 140, 141, 299):
            got = src.search(key, k, run, True, post).column("id").to_pylist()
            assert got == _fresh(tbl, q, k, where, prefilter), (k, where, prefilter)
        assert src.runs == (2 if post else 1)


def test_nothing_is_derived_through_an_index(table: tuple) -> None:
    from inspector.core.engine.pools.searches import Searches

    tbl, vecs = table
    src = Searches()
    calls: list[int] = []

    def run(n: int) -> pa.Table:
        calls.append(n)
        return tbl.search(vecs[3]).with_row_id(True).limit(n).to_arrow()

    for k in (50, 10, 50, 20):
        src.search(("i",), k, run, prefix=False)
    assert calls == [50, 10, 20]


def test_the_diagnosis_asks_lancedb_a_few_times_not_once_per_depth(tmp_path: Path) -> None:
    """A post-filter's diagnosis tries many depths; on a flat table they come from one deep
    post-filtered search and one unfiltered search as deep."""
    from inspector.core.engine.flow.question import Question, answer
    from inspector.core.engine.pools.searches import SEARCHES
    from inspector.core.stores.opening import open_store
    from tests.storekit import write_table

    rng = np.random.default_rng(1)
    n = 400
    path = write_table(tmp_path / "s", {
        "id": [f"m{i}" for i in range(n)], "text": ["t"] * n,
        "vector": rng.normal(size=(n, 8)).astype(np.float32),
        "metadata": pa.array([{"user_id": f"u{i % 9}"} for i in range(n)])}, "vectorstore")
    store = open_store(str(path), "vectorstore")
    before = SEARCHES.runs
    got = answer(Question(store=store.uri, preset="langchain-lancedb",
                          vector=rng.normal(size=8).tolist(), limit=4,
                          set={"where": "metadata.user_id = 'u3'"}), store)
    assert got.diagnosis.code == "filter_after_cut" and got.diagnosis.page_at is not None
    assert got.runs > 20 and SEARCHES.runs - before <= 8
