"""Awkward stores and inputs each have a defined outcome: a clear message, never a crash."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.params import pool_depth
from inspector.core.errors import InspectorError
from inspector.core.stores.embed import HashEmbedder
from inspector.core.stores.opening import open_store
from inspector.core.stores.safety.bounds import MAX_SEARCH_ROWS
from tests.askkit import ask

ORIGIN = np.zeros(2, np.float32)


def run(store, **given):
    return ask(store, vector=ORIGIN, **given).trace


def _mult(t, row: str) -> float:
    return next(dict(s.inputs)["multiplier"] for s in t.stage("blend").rows if s.id == row)


def _store(make_store, importance, n=None, **extra):
    n = n or len(importance)
    vec = np.zeros((n, 2), np.float32)
    vec[:, 0] = np.linspace(0.1, 1.0, n)
    return open_store(str(make_store({"id": [f"r{i}" for i in range(n)], "text": ["t"] * n,
                                      "vector": vec, "importance": importance, **extra})))


def test_nan_importance_gets_a_nan_score_as_the_real_formula_does(make_store):
    store = _store(make_store, pa.array([0.9, float("nan"), None], pa.float64()))
    t = run(store, limit=3, blend=0.5)
    assert t.final.ids == ["r0", "r2"]  # r2 is NULL: the default 0.7 applies
    assert [d.id for d in t.stage("min_score").dropped] == ["r1"]
    assert any("NaN importance" in w for w in t.warnings)
    assert _mult(t, "r2") == 0.85
    today = run(store, limit=3, blend=0.0)  # w = 0 never reads importance
    assert today.final.ids == ["r0", "r1", "r2"]


def test_out_of_range_and_infinite_importance_clamp(make_store):
    store = _store(make_store, pa.array([7.0, -2.0, float("inf"), float("-inf")], pa.float64()))
    t = run(store, limit=4, blend=0.5)
    assert [_mult(t, f"r{i}") for i in range(4)] == [1.0, 0.5, 1.0, 0.5]


def test_text_importance_column_is_not_used_as_importance(make_store):
    store = _store(make_store, ["high", "low"])
    assert store.roles.importance is None
    t = run(store, limit=2, blend=0.5)
    assert [dict(s.inputs)["multiplier"] for s in t.final.rows] == [0.85, 0.85]


def test_integer_importance_is_a_number(make_store):
    store = _store(make_store, pa.array([1, 0], pa.int32()))
    t = run(store, limit=2, blend=0.5)
    assert [_mult(t, r) for r in ("r0", "r1")] == [1.0, 0.5]


def test_empty_table_and_one_row_table(make_store):
    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
                        pa.field("vector", pa.list_(pa.float32(), 2))])
    empty = open_store(str(make_store({"id": [], "text": [], "vector": pa.array(
        [], pa.list_(pa.float32(), 2))}, schema=schema)))
    a = ask(empty, vector=ORIGIN, limit=5)
    assert a.trace.stage("fetch").rows == () and a.diagnosis.code == "empty_table"
    with pytest.raises(InspectorError, match="is empty"):
        ask(empty, text="x", mode="fts")
    one = _store(make_store, pa.array([0.5], pa.float64()))
    t = run(one, limit=5, overfetch=4)
    assert t.final.ids == ["r0"]


def test_huge_and_non_latin_text(make_store):
    texts = ["ключи ротация токенов", "鍵のローテーション", "x" * 200_000, "plain keys"]
    n = len(texts)
    emb = HashEmbedder(dim=16)
    path = make_store({"id": [f"r{i}" for i in range(n)], "text": texts,
                       "vector": emb.embed(texts)})
    store = open_store(str(path))
    t = ask(store, text="ротация", vector=emb.embed(["ротация"])[0], mode="hybrid",
            limit=4).trace
    assert t.final.ids[0] == "r0"
    (long,) = [s for s in t.final.rows if s.id == "r2"]
    assert long.row.text == "x" * 200_000
    with pytest.raises(InspectorError, match="no words it knows"):
        ask(store, text="!!! ???", embedder="hash-v1", mode="vector")


def test_zero_query_vector_under_cosine_is_an_error(make_store):
    store = _store(make_store, pa.array([0.5, 0.5], pa.float64()))
    with pytest.raises(InspectorError, match="all zeros"):
        run(store, distance="cosine")
    assert len(run(store, distance="l2").final.rows) == 2


def test_null_vectors_are_skipped_by_the_search(tmp_path):
    import lancedb

    vec = np.array([[0, 0], [np.nan, 1], [1, 1]], np.float32)
    table = pa.table({"id": ["a", "b", "c"], "text": ["t"] * 3,
                      "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), 2)})
    lancedb.connect(str(tmp_path / "s")).create_table("m", table, on_bad_vectors="null")
    t = run(open_store(str(tmp_path / "s")), limit=3)
    assert t.final.ids == ["a", "c"]


@pytest.mark.parametrize("scope", ["it's", "100%", "a_b", "back\\slash", "' OR 1=1 --", ""])
def test_awkward_scope_names_compare_literally(make_store, scope):
    repos = [scope, "it", "100", "aXb", "back", "other"]
    n = len(repos)
    store = _store(make_store, pa.array([0.5] * n, pa.float64()), n=n, repo=repos,
                   path=[f"{r}/x" for r in repos])
    for filt in ("post", "pushdown"):
        t = run(store, limit=n, scope=scope, scope_strategy="column",
                                      scope_column="repo", filter=filt)
        assert t.final.ids == ["r0"], filt


@pytest.mark.parametrize("mode", ["vector", "fts", "hybrid"])
def test_an_overfetch_whose_depth_overflows_asks_for_every_row(make_store, mode):
    """F = 1e308 is finite but limit x F is not: the pool depth saturates at every row (or
    the cap); the classic fetch stage takes over-fetch up to 1,000,000 and refuses more in
    one sentence, and at that bound a table smaller than the depth is fetched whole."""
    store = _store(make_store, pa.array([0.2, 0.9, 0.5], pa.float64()),
                   text=["apple pie", "apple tart", "apple cake"])
    assert pool_depth(2, 1e308, 0) == MAX_SEARCH_ROWS == 2**31 - 1
    assert pool_depth(2, 1e308, 2) == 2
    q = {"text": "apple", "vector": [0.0, 0.0], "mode": mode, "limit": 2}
    with pytest.raises(InspectorError, match=r"fetch.overfetch must be a finite number in "
                                             r"\[1, 1,000,000\], not 1e\+308"):
        ask(store, **q, overfetch=1e308, cap=0)
    q["overfetch"] = 1e6
    whole = ask(store, **q, cap=0).trace
    assert whole.stage("fetch").facts["depth"] == 2_000_000
    assert len(whole.stage("fetch").rows) == 3
    capped = ask(store, **q, cap=2).trace
    assert capped.stage("fetch").facts["depth"] == 2
    if mode == "vector":
        assert capped.final.ids == whole.final.ids[:2]
    else:  # the three rows tie in BM25: LanceDB's order among them is its own, and said so
        assert len(capped.final.ids) == 2 and set(capped.final.ids) < {"r0", "r1", "r2"}
        (tie,) = [g for g in whole.ties if g.measure == "bm25"]
        assert tie.arbitrary and set(tie.ids) == {"r0", "r1", "r2"}
