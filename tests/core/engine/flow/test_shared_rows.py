"""Pools of one table share its rows: a second question's pool takes the rows a first one
read (a sweep's or an audit's queries each fetch a pool of the same stored rows), by the
row's address in that store object's table, never by its id; and every answer is the one a
fresh process gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.flow.stages import classic, scoping
from inspector.core.stores.opening import open_store
from tests.core.engine.flow.test_live_flow import shape
from tests.storekit import vectors_column, write_mixed_store, write_table

SETS = {"scope_rule.strategy": "column", "scope_rule.column": "repo", "fetch.overfetch": 20}


def _ask(store, vector, **more):  # noqa: ANN001, ANN202 - a FlowTrace
    q = Question(store=store.uri, preset="lancedb", text="keys", vector=list(vector), limit=4,
                 scopes=["repo1"], set={**SETS, **more})
    runs, _, _ = runs_for(q, store, PoolCache())
    return runs.run()


def _fresh() -> None:
    for memo in (classic._SHARED, scoping._VERDICTS):
        memo.clear()
    scoping._FILTERED.clear()


def test_two_questions_on_one_store_share_the_rows_both_fetched(tmp_path: Path) -> None:
    path = write_mixed_store(tmp_path / "s", n=300)
    store = open_store(str(path))
    rng = np.random.default_rng(7)
    a, b = (rng.normal(size=16).tolist() for _ in range(2))
    _fresh()
    one, two = _ask(store, a), _ask(store, b)
    rows_one = {s.id: s.row for s in one.stage("fetch").rows}
    rows_two = {s.id: s.row for s in two.stage("fetch").rows}
    common = set(rows_one) & set(rows_two)
    assert len(common) >= 10
    assert all(rows_one[i] is rows_two[i] for i in common)
    # a store opened again is another reading: nothing is shared with it
    other = _ask(open_store(str(path)), a)
    assert all(s.row is not rows_one[s.id] for s in other.stage("fetch").rows)
    for vector, got in ((a, one), (b, two)):  # as a fresh process answers
        _fresh()
        want = _ask(open_store(str(path)), vector)
        assert shape(got) == shape(want)
        assert [repr(s.row) for s in got.stage("fetch").rows] == \
            [repr(s.row) for s in want.stage("fetch").rows]  # NaN importances: not ==
        assert got.stage("scope").facts == want.stage("scope").facts


def test_rows_sharing_an_id_are_each_read_as_stored(tmp_path: Path) -> None:
    """Two stored rows with one id (a memory saved twice, edited between): each pool keeps the
    first it fetched, with that row's own text, whichever pool read the other first."""
    vecs = np.zeros((40, 4), np.float32)
    vecs[:, 0] = np.arange(40)
    ids = [f"m{i:02d}" for i in range(40)]
    ids[39] = "m00"  # the far end's row has the near end's id
    texts = [f"note {i}" for i in range(40)]
    write_table(tmp_path / "s", {"id": ids, "text": texts, "vector": vectors_column(vecs),
                                 "importance": pa.array([0.5] * 40, pa.float64()),
                                 "repo": ["repo1"] * 40})
    store = open_store(str(tmp_path / "s"))
    _fresh()
    near, far = np.zeros(4), np.zeros(4)
    far[0] = 39.0
    texts_seen = {}
    for name, vector in (("far", far), ("near", near), ("far again", far)):
        t = _ask(store, vector, **{"fetch.overfetch": 100})
        texts_seen[name] = next(s.row.text for s in t.stage("fetch").rows if s.id == "m00")
    assert texts_seen == {"far": "note 39", "near": "note 0", "far again": "note 39"}


def test_past_the_bound_the_shared_rows_start_again(tmp_path: Path, monkeypatch) -> None:
    path = write_mixed_store(tmp_path / "s", n=300)
    store = open_store(str(path))
    monkeypatch.setattr(classic, "SHARED_ROWS_MAX", 50)
    _fresh()
    rng = np.random.default_rng(3)
    got = [_ask(store, rng.normal(size=16).tolist()) for _ in range(4)]
    assert sum(map(len, classic._SHARED.values())) <= 50 + 300
    for t in got:
        _fresh()
        assert shape(t) == shape(_ask(open_store(str(path)), t.vector))


def _addresses(store, ids) -> list[int]:  # noqa: ANN001 - each id's row address in the table
    got = store.table.search().select([store.roles.id]).with_row_id(True).limit(None).to_arrow()
    where = dict(zip(got.column(store.roles.id).to_pylist(),
                     got.column("_rowid").to_pylist(), strict=True))
    return [where[i] for i in ids]


def test_a_pool_names_its_stored_rows_only_where_every_leg_numbers_them_as_the_table(
        tmp_path: Path, random_store) -> None:
    """The vector leg and the table's own full-text index number rows as the table does; a
    private full-text copy (a table without its own index) and an SQLite docs store's FTS5
    table number them their own way, so such a pool shares nothing."""
    from inspector.core.engine.params import Params
    from inspector.core.engine.pool import Query, fetch_pool
    from tests.storekit import build_docs_db

    indexed = open_store(str(write_mixed_store(tmp_path / "s", n=300)))
    plain = open_store(str(random_store(n=300, dim=16)))
    (tmp_path / "docs").mkdir()
    build_docs_db(tmp_path / "docs" / "docs.sqlite")
    docs = open_store(str(tmp_path / "docs" / "docs.sqlite"))
    for store, mode, named in ((indexed, "vector", True), (indexed, "hybrid", True),
                               (plain, "vector", True), (plain, "hybrid", False),
                               (docs, "hybrid", False)):
        vec = np.random.default_rng(1).normal(size=store.dim)
        pool = fetch_pool(store, Query(text="note keys tokens deploy", vector=vec,
                                       source="vector"), Params(mode=mode, limit=10), 40, 40)
        assert (pool.rowids is not None) == named, (store.uri, mode)
        if named:
            assert pool.rowids.tolist() == _addresses(store, list(pool.ids))
