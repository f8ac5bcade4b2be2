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

from inspector.core.engine.flow.runner import PoolCache
from inspector.core.stores.opening import open_store
from tests.askkit import ask
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


def _fts_ranks(t) -> dict[str, int]:
    """The inspector's full-text leg, as far as the run shows it: each fetched row's rank in
    that leg (rows the fused cut left out are not shown)."""
    return {s.id: int(dict(s.inputs)["fts_rank"]) for s in t.stage("fetch").rows
            if "fts_rank" in dict(s.inputs)}


def _fts_agrees(tbl, text: str, k: int, t, where: str | None = None) -> bool:
    """LanceDB's full-text leg at depth k gives every row the inspector's leg ranked (within
    k) the same rank."""
    s = tbl.search(text, query_type="fts")
    if where:
        s = s.where(where, prefilter=True)
    theirs = s.limit(k).to_arrow()["id"].to_pylist()
    return all(r <= len(theirs) and theirs[r - 1] == i
               for i, r in _fts_ranks(t).items() if r <= k)


def _fused(t) -> list[float]:
    return [float(dict(s.inputs)["fused"]) for s in t.final.rows]


def _compare(path: Path, words: list[str], query_vec, seed: int) -> tuple[int, int]:
    """Compare every (query, limit); returns (pairs compared, pairs in all)."""
    store = open_store(str(path))
    assert store.fts_index_column() == "text"  # both sides search the table's own index
    rng = random.Random(seed)
    compared = total = 0
    for _ in range(QUERIES):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(3, 6)))
        q = {"text": text, "vector": query_vec(rng), "mode": "hybrid", "cap": 0}
        cache = PoolCache()
        deep = ask(store, **q, limit=max(LIMITS), cache=cache).trace
        for k in LIMITS:
            total += 1
            if not _fts_agrees(store.table, text, k, deep):
                continue
            compared += 1
            want_ids, want_scores = _native(store.table, q["vector"], text, k)
            for c in (PoolCache(), cache):  # fresh, and from the deeper cached fetch
                t = ask(store, **q, limit=k, cache=c).trace
                assert t.final.ids == want_ids, (text, k)
                assert _fused(t) == want_scores  # float32 _relevance_score, bit for bit
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
        t = ask(store, text=text, vector=vec, mode="hybrid", limit=10, tie_rule=rule).trace
        if not _fts_agrees(store.table, text, 10, t):
            continue
        differs += t.final.ids != _native(store.table, vec, text, 10)[0]
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
            t = ask(store, text=text, vector=vec, mode="hybrid", limit=k, cap=0, scope="r1",
                    scope_strategy="column", scope_column="repo", filter="pushdown").trace
            if not _fts_agrees(tbl, text, k, t, "repo = 'r1'"):
                continue
            compared += 1
            got = (tbl.search(query_type="hybrid").vector(vec).text(text)
                   .where("repo = 'r1'", prefilter=True).rerank(RRFReranker()).limit(k)
                   .to_arrow())
            assert t.final.ids == got["id"].to_pylist()
            assert _fused(t) == got["_relevance_score"].to_pylist()
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
        t = ask(store, text=text, vector=np.asarray(vec, np.float32), mode="hybrid").trace
        if not _fts_agrees(tbl, text, 10, t):
            continue  # LanceDB ordered equal BM25 scores its own way
        assert main(["query", str(path), "--mode", "hybrid", "--text", text,
                     "--vector", json.dumps(vec), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        checked += 1
        want, _ = _native(tbl, np.asarray(vec, np.float32), text, 10)
        assert [c["id"] for c in doc["stages"][-1]["candidates"]] == want
        assert doc["params"]["settings"]["tie_rule"] == "lancedb"
    assert checked >= 3


def test_no_tie_in_the_full_text_leg_needs_no_search_of_lancedbs_order(tmp_path, monkeypatch):
    """LanceDB's own full-text order at k is searched only where BM25 scores tie within the
    leg's first k rows or across its cut: without a tie that order is the pool's. Each such
    query still equals LanceDB's own hybrid search, none excused; a query with a tie still
    searches it."""
    from inspector.core.engine import pool as P

    calls: list[int] = []
    real = P.native_fts_ids

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(P, "native_fts_ids", counted)
    rng = np.random.default_rng(14)
    vecs = rng.normal(size=(3000, 16)).astype(np.float32)
    path, words = _write(tmp_path / "free", vecs, seed=14)
    store = open_store(str(path))
    r = random.Random(142)
    free = tied = 0
    for _ in range(QUERIES):
        text = " ".join(r.choice(words) for _ in range(r.randint(3, 6)))
        vec = np.asarray([r.gauss(0, 1) for _ in range(16)], np.float32)
        for k in (3, 10, 25):
            scores = (store.table.search(text, query_type="fts").limit(k + 1).to_arrow()
                      ["_score"].to_pylist())
            has_tie = len(set(scores)) < len(scores)
            calls.clear()
            t = ask(store, text=text, vector=vec, mode="hybrid", cap=0, limit=k,
                    cache=PoolCache()).trace
            if has_tie:
                tied += 1
                assert calls, (text, k)
            else:
                free += 1
                assert not calls, (text, k)
                assert t.final.ids == _native(store.table, vec, text, k)[0], (text, k)
                assert _fused(t) == _native(store.table, vec, text, k)[1]
    assert free >= 30 and tied >= 5, (free, tied)


def _tied_store(path: Path, tied: int = 60, others: int = 400) -> Path:
    """`tied` rows of one text (equal BM25 scores for any query of its words) among `others`
    rows of other texts that share a word with it, each row its own vector."""
    import pyarrow as pa

    rng = np.random.default_rng(23)
    n = tied + others
    texts = ["rotate signing keys"] * tied + [f"rotate note {i} about item {i % 37}"
                                              for i in range(others)]
    order = rng.permutation(n)
    tbl = lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": [f"m{i:04d}" for i in range(n)], "text": [texts[i] for i in order],
        "vector": vectors_column(rng.normal(size=(n, 8)).astype(np.float32))}))
    tbl.create_index("text", config=FTS())
    return path


def test_a_bm25_tie_past_the_cut_is_fetched_whole_by_the_first_search(tmp_path, monkeypatch):
    """The full-text leg is first searched FTS_MARGIN_MIN rows past its k at least: a tie of 60
    rows straddling k = 10 ends inside that first search, so the leg is searched once (at half
    its k past the cut, it took four searches, 15, 30, 60 and 120 deep), and the pool holds
    the whole tie at the cut."""
    from inspector.core.engine import pool as P
    from inspector.core.engine import pools

    depths: list[int] = []
    real = P._fts_leg
    monkeypatch.setattr(P, "_fts_leg", lambda s, text, k, *a: depths.append(k) or
                        real(s, text, k, *a))
    fetched: list[P.Pool] = []
    real_pool = pools.fetch_pool
    monkeypatch.setattr(pools, "fetch_pool", lambda *a, **k: fetched.append(
        real_pool(*a, **k)) or fetched[-1])
    store = open_store(str(_tied_store(tmp_path / "tied")))
    pools.SOURCE.clear()
    t = ask(store, text="rotate signing keys", vector=np.zeros(8, np.float32), mode="fts",
            limit=10, cap=0, cache=PoolCache()).trace
    assert depths == [10 + P.FTS_MARGIN_MIN]
    leg = [s for s in t.stage("fetch").rows if "fts_rank" in dict(s.inputs)]
    assert len(leg) == 10 and {s.row.text for s in leg} == {"rotate signing keys"}
    assert len(fetched) == 1 and len(fetched[0].fts_leg.rows) == 60  # the whole tie


def test_lancedbs_order_at_k_is_searched_beside_the_vector_leg(tmp_path, monkeypatch):
    """Where the full-text leg ties at k, LanceDB's own order at k (which the fetch stage
    needs) is searched by the fetch in the full-text leg's thread, once, not by the stage
    after both legs are in; the answer is the one the stage's own search gives."""
    import threading

    from inspector.core.engine import pool as P
    from inspector.core.engine.pools import SOURCE

    store = open_store(str(_tied_store(tmp_path / "tied")))
    rng = np.random.default_rng(5)
    vecs = [rng.normal(size=8).astype(np.float32) for _ in range(4)]

    def answers() -> list[tuple[list[str], list[float]]]:
        out = []
        for v in vecs:
            SOURCE.clear()
            t = ask(store, text="rotate signing keys", vector=v, mode="hybrid", limit=10,
                    cap=0, cache=PoolCache()).trace
            out.append((t.final.ids, _fused(t)))
        return out

    threads: list[str] = []
    real = P.native_fts_ids
    monkeypatch.setattr(P, "native_fts_ids", lambda *a, **k: threads.append(
        threading.current_thread().name) or real(*a, **k))
    ahead = answers()
    assert len(threads) == len(vecs)  # one search a query: the stage found it searched
    assert threading.main_thread().name not in threads
    threads.clear()
    monkeypatch.setattr(P, "tied_at", lambda *a: False)  # the fetch sees no tie: none ahead
    behind = answers()
    assert threads == [threading.main_thread().name] * len(vecs)  # the stage's own search
    assert ahead == behind


@pytest.mark.parametrize("seed", range(6))
def test_tied_at_says_what_the_runs_of_equal_values_say(seed):
    """`pool.tied_at` (does a leg tie within its first k or across its cut) against the
    engine's runs of equal values (ties.tied_runs), on values with ties, NaNs and a
    known or unknown value past the leg."""
    from inspector.core.engine.pool import tied_at
    from inspector.core.engine.ties import tied_runs

    rng = np.random.default_rng(seed)
    for _ in range(300):
        n = int(rng.integers(0, 12))
        values = np.sort(rng.integers(0, 6, size=n).astype(np.float64))[::-1]
        if n and rng.random() < 0.2:
            values[rng.integers(0, n)] = np.nan
        after = float(rng.choice([np.nan, *values[-1:], -1.0])) if n else np.nan
        k = int(rng.integers(0, n + 3))
        c = min(k, n)
        cut = values[:c + 1] if c < n else (values if np.isnan(after) else
                                            np.append(values, after))
        assert tied_at(values, after, k) == bool(tied_runs(cut, c, c)), (values, after, k)


@pytest.mark.parametrize("seed", range(4))
def test_the_runs_of_equal_values_are_those_counted_one_by_one(seed):
    """ties.tied_runs (a stage's ties: runs of two or more inside its first n, or one
    across its cut) against a walk over the values, with and without any tie, and NaNs."""
    from inspector.core.engine.ties import tied_runs

    def walk(v: list[float], n: int, cut: int) -> list[tuple[int, int, int]]:
        out, s = [], 0
        while s < min(n, len(v)):
            end = s + 1
            while end < len(v) and v[end] == v[s]:
                end += 1
            inside = min(end, n)
            if inside - s >= 2 or s < cut < end:
                out.append((s, inside, end))
            s = end
        return out

    rng = np.random.default_rng(seed)
    for _ in range(400):
        size = int(rng.integers(0, 14))
        pool = rng.integers(0, 40 if rng.random() < 0.5 else 4, size=size).astype(np.float64)
        values = np.sort(pool)[::-1]
        if size and rng.random() < 0.2:
            values[rng.integers(0, size)] = np.nan
        n = int(rng.integers(0, size + 2))
        cut = int(rng.integers(0, n + 2))
        assert tied_runs(values, n, cut) == walk(values.tolist(), n, cut), (values, n, cut)
