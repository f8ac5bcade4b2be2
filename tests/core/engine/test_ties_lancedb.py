"""`--mode hybrid` equals LanceDB's own hybrid search (RRFReranker, k = 60) in order, bit for bit.

Each store is a real LanceDB table with its own full-text index, so LanceDB and the inspector
search the same index. LanceDB's full-text search orders equal BM25 scores arbitrarily (even
inside the top k), so a (query, limit) pair is compared only where LanceDB's own full-text leg
(the search its hybrid runs: same text, same limit) lists the rows the inspector's leg lists, in
the same order; the vector leg is never excused. Every test requires most pairs to qualify.
"""

from __future__ import annotations

import random
from pathlib import Path

import lancedb
import numpy as np
import pytest
from lancedb.index import FTS
from lancedb.rerankers import RRFReranker

from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive, run
from inspector.core.engine.pool import Query
from inspector.core.engine.pools import fetch_for
from inspector.core.stores.opening import open_store
from tests.storekit import vectors_column

LIMITS = (1, 3, 7, 10, 16, 25, 40, 60)
QUERIES = 30


def _words(rng: random.Random, n: int = 400) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 8))))
    return sorted(out)


def _write(path: Path, vecs: np.ndarray, seed: int) -> tuple[Path, list[str]]:
    """A table of len(vecs) rows, texts of 4-30 words from 400, shuffled string ids, a repo
    (r1 or r2) and a full-text index."""
    rng = random.Random(seed)
    words = _words(rng)
    n = len(vecs)
    ids = [f"row-{i:05d}" for i in rng.sample(range(n), n)]  # id order is not row id order
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(4, 30))) for _ in range(n)]
    import pyarrow as pa

    tbl = lancedb.connect(str(path)).create_table(
        "memories", pa.table({"id": ids, "text": texts, "vector": vectors_column(vecs),
                              "repo": [rng.choice(("r1", "r2")) for _ in range(n)]}))
    tbl.create_index("text", config=FTS())
    return path, words


def _native(tbl, vec: np.ndarray, text: str, k: int) -> tuple[list[str], list[float]]:
    got = (tbl.search(query_type="hybrid").vector(vec).text(text)
           .rerank(RRFReranker()).limit(k).to_arrow())
    return got["id"].to_pylist(), got["_relevance_score"].to_pylist()


def _fts_agrees(tbl, text: str, k: int, pool) -> bool:
    """LanceDB's full-text leg at depth k lists the inspector's leg, in the same order."""
    theirs = tbl.search(text, query_type="fts").limit(k).to_arrow()["id"].to_pylist()
    return theirs == [pool.ids[i] for i in pool.fts_leg.rows[:k]]


def _compare(path: Path, words: list[str], query_vec, seed: int) -> tuple[int, int]:
    """Compare every (query, limit); returns (pairs compared, pairs in all)."""
    store = open_store(str(path))
    assert store.fts_index_column() == "text"  # both sides search the table's own index
    rng = random.Random(seed)
    compared = total = 0
    for _ in range(QUERIES):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(3, 6)))
        q = Query(text=text, vector=query_vec(rng), source="text")
        deep = fetch_for(store, q, Params(mode="hybrid", limit=max(LIMITS), cap=0))
        for k in LIMITS:
            total += 1
            if not _fts_agrees(store.table, text, k, deep):
                continue
            compared += 1
            want_ids, want_scores = _native(store.table, q.vector, text, k)
            p = Params(mode="hybrid", limit=k, cap=0)
            for t in (run(store, q, p), derive(deep, p)):
                assert t.ids("final") == want_ids, (text, k)
                got = [float(t.fused[i]) for i in t.stage("final").rows]
                assert got == want_scores  # float32 _relevance_score, bit for bit
    print(f"compared {compared} of {total} (query, limit) pairs")
    return compared, total


def test_hybrid_equals_lancedb_native_hybrid_on_a_store_without_ties(tmp_path):
    rng = np.random.default_rng(14)
    vecs = rng.normal(size=(3000, 16)).astype(np.float32)
    path, words = _write(tmp_path / "free", vecs, seed=14)
    compared, total = _compare(
        path, words, lambda r: np.asarray([r.gauss(0, 1) for _ in range(16)], np.float32), 141)
    assert compared >= 0.5 * total, (compared, total)


def test_hybrid_equals_lancedb_native_hybrid_when_distances_tie_everywhere(tmp_path):
    """0/1 vectors in 6 dims: 64 distinct vectors over 1,500 rows, so equal distances are
    the rule (LanceDB orders them by row id) and fused scores tie all the time."""
    rng = np.random.default_rng(15)
    vecs = rng.integers(0, 2, size=(1500, 6)).astype(np.float32)
    path, words = _write(tmp_path / "ties", vecs, seed=15)
    compared, total = _compare(
        path, words, lambda r: np.asarray([r.randint(0, 1) for _ in range(6)], np.float32), 151)
    assert compared >= 0.5 * total, (compared, total)


@pytest.mark.parametrize("rule", ["id", "lancedb"])
def test_the_id_rule_differs_from_lancedb_where_fused_scores_tie(tmp_path, rule):
    """The tie rule is what decides: on a tie-heavy store the id rule's order differs from
    LanceDB's somewhere, while the lancedb rule never does."""
    rng = np.random.default_rng(16)
    vecs = rng.integers(0, 2, size=(600, 6)).astype(np.float32)
    path, words = _write(tmp_path / "rule", vecs, seed=16)
    store = open_store(str(path))
    r = random.Random(161)
    differs = 0
    for _ in range(12):
        text = " ".join(r.choice(words) for _ in range(3))
        vec = np.asarray([r.randint(0, 1) for _ in range(6)], np.float32)
        t = run(store, Query(text=text, vector=vec), Params(mode="hybrid", limit=10,
                                                           tie_rule=rule))
        if not _fts_agrees(store.table, text, 10, t.pool):
            continue
        differs += t.ids("final") != _native(store.table, vec, text, 10)[0]
    assert (differs > 0) == (rule == "id")


def test_pushdown_hybrid_equals_lancedb_native_hybrid_with_a_prefilter(tmp_path):
    """A scope pushed down filters both legs inside LanceDB, as its hybrid `.where()` does."""
    rng = np.random.default_rng(17)
    path, words = _write(tmp_path / "scoped", rng.normal(size=(1500, 8)).astype(np.float32), 17)
    tbl = lancedb.connect(str(path)).open_table("memories")
    store = open_store(str(path))
    r = random.Random(171)
    compared = 0
    for _ in range(12):
        text = " ".join(r.choice(words) for _ in range(4))
        vec = np.asarray([r.gauss(0, 1) for _ in range(8)], np.float32)
        for k in (5, 10, 30):
            p = Params(mode="hybrid", limit=k, cap=0, scope="r1", scope_strategy="column",
                       scope_column="repo", filter="pushdown")
            t = run(store, Query(text=text, vector=vec), p)
            theirs = (tbl.search(text, query_type="fts").where("repo = 'r1'", prefilter=True)
                      .limit(k).to_arrow()["id"].to_pylist())
            if theirs != [t.pool.ids[i] for i in t.pool.fts_leg.rows[:k]]:
                continue
            compared += 1
            got = (tbl.search(query_type="hybrid").vector(vec).text(text)
                   .where("repo = 'r1'", prefilter=True).rerank(RRFReranker()).limit(k)
                   .to_arrow())
            assert t.ids("final") == got["id"].to_pylist()
            assert [float(t.fused[i]) for i in t.stage("final").rows] == \
                got["_relevance_score"].to_pylist()
    assert compared >= 18


def test_the_query_command_prints_lancedbs_native_hybrid_order(tmp_path, capsys):
    import json

    from inspector.cli import main

    rng = np.random.default_rng(18)
    path, words = _write(tmp_path / "cli", rng.normal(size=(800, 8)).astype(np.float32), 18)
    tbl = lancedb.connect(str(path)).open_table("memories")
    store = open_store(str(path))
    r = random.Random(181)
    checked = 0
    for _ in range(6):
        text = " ".join(r.choice(words) for _ in range(4))
        vec = [round(r.gauss(0, 1), 3) for _ in range(8)]
        pool = fetch_for(store, Query(text=text, vector=np.asarray(vec, np.float32)),
                         Params(mode="hybrid"))
        if not _fts_agrees(tbl, text, 10, pool):
            continue  # LanceDB ordered equal BM25 scores its own way
        assert main(["query", str(path), "--mode", "hybrid", "--text", text,
                     "--vector", json.dumps(vec), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        checked += 1
        want, _ = _native(tbl, np.asarray(vec, np.float32), text, 10)
        assert [c["id"] for c in doc["stages"][3]["candidates"]] == want
        assert doc["params"]["tie_rule"] == "lancedb"
    assert checked >= 3
