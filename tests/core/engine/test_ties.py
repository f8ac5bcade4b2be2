"""Tie groups: found where the scores are equal, marked where they straddle a cut, and told to
the user by the JSON, the text report and the expected-row analysis."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.expect import analyse
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive, run
from inspector.core.engine.pool import Query
from inspector.core.engine.pools import fetch_for
from inspector.core.evidence.report import format_trace
from inspector.core.stores.opening import open_store


def _grid_store(make_store, n: int = 400, seed: int = 5):
    """0/1 vectors in 4 dims (integer distances: ties everywhere), importance in three steps,
    ids not in row id order."""
    rng = np.random.default_rng(seed)
    ids = [f"g{i:04d}" for i in rng.permutation(n)]
    return make_store({
        "id": ids, "text": [f"note {i % 7} about keys {i % 5}" for i in range(n)],
        "vector": rng.integers(0, 2, size=(n, 4)).astype(np.float32),
        "importance": pa.array([(0.2, 0.6, 1.0)[i % 3] for i in range(n)], pa.float64()),
    })


def _expected_groups(order: list[tuple[object, float]], n: int, cut: int):
    """Runs of equal values in a sorted list, computed plainly: (ids inside the first n,
    value, straddles the cut)."""
    out, s = [], 0
    while s < n:
        e = s
        while e < len(order) and order[e][1] == order[s][1]:
            e += 1
        inside = [x[0] for x in order[s:min(e, n)]]
        if len(inside) >= 2 or s < cut < e:
            out.append((tuple(inside), order[s][1], s < cut < e))
        s = e
    return out


def _got(trace, stage):
    return [(g.ids, g.score, g.at_cut) for g in trace.ties() if g.stage == stage]


def test_vector_ties_match_lancedbs_own_ranking_at_every_depth(make_store):
    store = open_store(str(_grid_store(make_store)))
    r = random.Random(3)
    for _ in range(6):
        vec = np.asarray([r.randint(0, 1) for _ in range(4)], np.float32)
        full = store.table.search(vec).limit(store.rows).to_arrow()
        order = list(zip(full["id"].to_pylist(), full["_distance"].to_pylist(), strict=True))
        deep = fetch_for(store, Query(vector=vec), Params(limit=60, cap=0))
        for limit in (1, 4, 9, 25, 60):
            p = Params(limit=limit, cap=0)
            want = _expected_groups(order, limit, limit)
            assert _got(derive(deep, p), "raw") == want
            fresh = run(store, Query(vector=vec), p)  # knows only the next row past the cut
            assert [(g[1], g[2]) for g in _got(fresh, "raw")] == [(w[1], w[2]) for w in want]


def test_blended_ties_at_the_limit_are_marked_as_computed_plainly(make_store):
    store = open_store(str(_grid_store(make_store)))
    vec = np.zeros(4, np.float32)
    for w, limit in ((0.5, 5), (0.5, 12), (1.0, 7), (0.0, 3)):
        p = Params(limit=limit, overfetch=4, cap=0, blend=w)
        t = run(store, Query(vector=vec), p)
        rows = t.stage("raw").rows
        scored = [(t.pool.ids[i], (1 / (1 + float(t.pool.vec_dist[i])))
                   * ((1 - w) + w * float(t.pool.importance[i])) if w else
                   1 / (1 + float(t.pool.vec_dist[i]))) for i in rows]
        scored.sort(key=lambda x: -x[1])  # stable: the raw order among equal scores
        assert t.ids("blended") == [x[0] for x in scored]
        want = _expected_groups(scored, len(scored), limit)
        assert _got(t, "blended") == want
        assert any(g[2] for g in want)  # the store is built to tie at these cuts


def test_hybrid_fused_ties_match_a_plain_rrf_over_lancedbs_legs(make_store):
    store = open_store(str(_grid_store(make_store)))
    from inspector.core.stores.fts import fts_table

    vec = np.asarray([1, 0, 1, 0], np.float32)
    for rule in ("lancedb", "id"):
        p = Params(mode="hybrid", limit=10, cap=0, tie_rule=rule)
        t = run(store, Query(text="note 3 keys 2", vector=vec), p)
        v = store.table.search(vec).limit(10).to_arrow()["id"].to_pylist()
        f = fts_table(store)[0].search("note 3 keys 2", query_type="fts").with_row_id(True) \
            .limit(store.rows).to_arrow()
        f_ids = [x[2] for x in sorted(zip(f["_score"].to_pylist(), f["_rowid"].to_pylist(),
                                          f["id"].to_pylist(), strict=True),
                                      key=lambda x: (-x[0], x[1]))][:10]
        score: dict[object, float] = {}
        for ranking in (v, f_ids):
            for rank, rid in enumerate(ranking, 1):
                score[rid] = score.get(rid, 0.0) + 1 / (60 + rank)
        if rule == "lancedb":
            merged = v + [x for x in f_ids if x not in v]
            order = sorted(((x, float(np.float32(score[x]))) for x in merged),
                           key=lambda x: -x[1])
        else:
            order = sorted(score.items(), key=lambda x: (-x[1], x[0]))
        assert t.ids("raw") == [x[0] for x in order[:10]]
        assert _got(t, "raw") == _expected_groups(order, 10, 10)


_SCOPED = dict(scope="in", scope_strategy="column", scope_column="repo", filter="post")


def _text_store(make_store):
    """Full-text ties: six rows share one text (equal BM25); only t03 and t04 are in scope."""
    texts = ["alpha beta"] * 6 + [f"alpha {w} {w}" for w in ("x", "y", "z")] + \
        [f"gamma {i}" for i in range(20)]
    n = len(texts)
    return make_store({"id": [f"t{i:02d}" for i in range(n)], "text": texts,
                       "repo": ["in" if i in (3, 4) else "out" for i in range(n)],
                       "vector": np.eye(n, 4, dtype=np.float32) + np.arange(n)[:, None] * 0.01})


def test_a_full_text_tie_at_the_cut_is_arbitrary_and_no_depth_is_claimed(make_store):
    store = open_store(str(_text_store(make_store)))
    q = Query(text="beta")
    t = run(store, q, Params(mode="fts", limit=3))
    cut = [g for g in t.ties() if g.at_cut]
    assert len(cut) == 1 and cut[0].arbitrary and cut[0].cut == "depth"
    assert cut[0].stage == "raw" and cut[0].measure == "bm25" and len(cut[0].ids) == 3
    assert {"stage": "raw", "at_cut": True}.items() <= t.to_json()["ties"][0].items()
    text = format_trace(t)
    assert "may return any of them" in text
    assert any(line.startswith("  3!") for line in text.splitlines())
    # t03 enters at depth 4 by row id, but LanceDB may keep any 4 of the 6 tied rows there
    scoped = run(store, q, Params(mode="fts", limit=1, **_SCOPED))
    e = analyse(store, q, scoped, ["t03"])[0]
    assert e.min_depth is None and "may return any of them" in e.reason


def test_a_vector_tie_at_the_cut_keeps_its_depth_and_names_the_rule(make_store):
    ids = ["d", "a", "c", "b", "f", "e"]
    vecs = np.zeros((6, 4), np.float32)
    vecs[:, 0] = 1 - np.sqrt([0.1, 0.2, 0.2, 0.2, 0.2, 0.3])
    store = open_store(str(make_store({"id": ids, "text": ids, "vector": vecs,
                                       "repo": ["in" if i == "b" else "out" for i in ids]})))
    q = Query(vector=np.asarray([1, 0, 0, 0], np.float32))
    t = run(store, q, Params(limit=2))
    assert t.ids("final") == ["d", "a"]  # equal distances by row id, as LanceDB returns them
    (g,) = t.ties()
    assert (g.ids, g.at_cut, g.arbitrary, g.beyond) == (("a",), True, False, 1)
    scoped = run(store, q, Params(limit=1, **_SCOPED))
    e = analyse(store, q, scoped, ["b"])[0]
    assert e.min_depth == 4 and "orders by row id" in e.reason


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_trace_json_lists_every_group_with_its_fields(make_store, mode):
    store = open_store(str(_grid_store(make_store)))
    t = run(store, Query(text="note 1", vector=np.ones(4, np.float32)),
            Params(mode=mode, limit=8, blend=0.5))
    doc = t.to_json()["ties"]
    assert len(doc) == len(t.ties()) > 0
    for entry, g in zip(doc, t.ties(), strict=True):
        assert entry["ids"] == list(g.ids) and entry["score"] == g.score
        assert entry["at_cut"] == (g.cut is not None) and len(g.ids) + g.beyond >= 2
