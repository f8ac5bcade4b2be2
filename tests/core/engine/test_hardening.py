"""Awkward stores and inputs each have a defined outcome: a clear message, never a crash."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.inputs import build_query
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.engine.pool import Query
from inspector.core.errors import InspectorError
from inspector.core.stores.embed import HashEmbedder
from inspector.core.stores.opening import open_store

ORIGIN = Query(vector=np.zeros(2, np.float32), source="vector")


def _store(make_store, importance, n=None, **extra):
    n = n or len(importance)
    vec = np.zeros((n, 2), np.float32)
    vec[:, 0] = np.linspace(0.1, 1.0, n)
    return open_store(str(make_store({"id": [f"r{i}" for i in range(n)], "text": ["t"] * n,
                                      "vector": vec, "importance": importance, **extra})))


def test_nan_importance_gets_a_nan_score_as_the_real_formula_does(make_store):
    store = _store(make_store, pa.array([0.9, float("nan"), None], pa.float64()))
    t = run(store, ORIGIN, Params(limit=3, blend=0.5))
    assert t.ids("final") == ["r0", "r2"]  # r2 is NULL: the default 0.7 applies
    assert t.counters["belowMinScore"] == 1
    assert any("NaN importance" in w for w in t.warnings)
    assert t.multiplier[t.row_of("r2")] == 0.85
    today = run(store, ORIGIN, Params(limit=3, blend=0.0))  # w = 0 never reads importance
    assert today.ids("final") == ["r0", "r1", "r2"]


def test_out_of_range_and_infinite_importance_clamp(make_store):
    store = _store(make_store, pa.array([7.0, -2.0, float("inf"), float("-inf")], pa.float64()))
    t = run(store, ORIGIN, Params(limit=4, blend=0.5))
    assert [float(t.multiplier[t.row_of(f"r{i}")]) for i in range(4)] == [1.0, 0.5, 1.0, 0.5]


def test_text_importance_column_is_not_used_as_importance(make_store):
    store = _store(make_store, ["high", "low"])
    assert store.roles.importance is None
    t = run(store, ORIGIN, Params(limit=2, blend=0.5))
    assert list(t.multiplier[t.stage("final").rows]) == [0.85, 0.85]


def test_integer_importance_is_a_number(make_store):
    store = _store(make_store, pa.array([1, 0], pa.int32()))
    t = run(store, ORIGIN, Params(limit=2, blend=0.5))
    assert [float(t.multiplier[t.row_of(r)]) for r in ("r0", "r1")] == [1.0, 0.5]


def test_empty_table_and_one_row_table(make_store):
    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
                        pa.field("vector", pa.list_(pa.float32(), 2))])
    empty = open_store(str(make_store({"id": [], "text": [], "vector": pa.array(
        [], pa.list_(pa.float32(), 2))}, schema=schema)))
    t = run(empty, ORIGIN, Params(limit=5))
    assert t.counters["rawCandidates"] == 0 and t.diagnosis.code == "query_or_index"
    assert t.diagnosis.message == "The table is empty: there is nothing to retrieve."
    with pytest.raises(InspectorError, match="is empty"):
        run(empty, Query(text="x"), Params(mode="fts"))
    one = _store(make_store, pa.array([0.5], pa.float64()))
    t = run(one, ORIGIN, Params(limit=5, overfetch=4))
    assert t.ids("final") == ["r0"]


def test_huge_and_non_latin_text(make_store):
    texts = ["ключи ротация токенов", "鍵のローテーション", "x" * 200_000, "plain keys"]
    n = len(texts)
    emb = HashEmbedder(dim=16)
    path = make_store({"id": [f"r{i}" for i in range(n)], "text": texts,
                       "vector": emb.embed(texts)})
    store = open_store(str(path))
    q = Query(text="ротация", vector=emb.embed(["ротация"])[0])
    t = run(store, q, Params(mode="hybrid", limit=4))
    assert t.ids("final")[0] == "r0"
    assert t.candidate(t.row_of("r2"))["columns"]["text"] == "x" * 200_000
    with pytest.raises(InspectorError, match="no words it knows"):
        build_query(store, "vector", text="!!! ???", embedder="hash-v1")


def test_zero_query_vector_under_cosine_is_an_error(make_store):
    store = _store(make_store, pa.array([0.5, 0.5], pa.float64()))
    with pytest.raises(InspectorError, match="all zeros"):
        run(store, ORIGIN, Params(distance="cosine"))
    assert run(store, ORIGIN, Params(distance="l2")).counters["returned"] == 2


def test_null_vectors_are_skipped_by_the_search(tmp_path):
    import lancedb

    vec = np.array([[0, 0], [np.nan, 1], [1, 1]], np.float32)
    table = pa.table({"id": ["a", "b", "c"], "text": ["t"] * 3,
                      "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), 2)})
    lancedb.connect(str(tmp_path / "s")).create_table("m", table, on_bad_vectors="null")
    t = run(open_store(str(tmp_path / "s")), ORIGIN, Params(limit=3))
    assert t.ids("final") == ["a", "c"]


@pytest.mark.parametrize("scope", ["it's", "100%", "a_b", "back\\slash", "' OR 1=1 --", ""])
def test_awkward_scope_names_compare_literally(make_store, scope):
    repos = [scope, "it", "100", "aXb", "back", "other"]
    n = len(repos)
    store = _store(make_store, pa.array([0.5] * n, pa.float64()), n=n, repo=repos,
                   path=[f"{r}/x" for r in repos])
    for filt in ("post", "pushdown"):
        t = run(store, ORIGIN, Params(limit=n, scope=scope, scope_strategy="column",
                                      scope_column="repo", filter=filt))
        assert t.ids("final") == ["r0"], filt


@pytest.mark.parametrize("mode", ["vector", "fts", "hybrid"])
def test_an_overfetch_whose_depth_overflows_asks_for_every_row(make_store, mode):
    """F = 1e308 is finite but limit x F is not: the pool is every row (or the cap)."""
    store = _store(make_store, pa.array([0.2, 0.9, 0.5], pa.float64()),
                   text=["apple pie", "apple tart", "apple cake"])
    q = build_query(store, mode, text="apple", vector=[0.0, 0.0])
    whole = run(store, q, Params(mode=mode, limit=2, overfetch=1e308, cap=0))
    assert whole.depths.pool == 2**31 - 1
    assert len(whole.stage("raw").rows) == 3
    capped = run(store, q, Params(mode=mode, limit=2, overfetch=1e308, cap=2))
    assert capped.depths.pool == 2 and capped.ids("final") == whole.ids("final")[:2]
