"""Tie groups on the one engine: found where the scores are equal, marked where they straddle
a cut, and told to the user by the JSON, the text report and the expected-row analysis."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.flow.answer import format_text, to_json
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.stores.opening import open_store
from tests.askkit import ask


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


def _got(trace, stage, measure=None):
    return [(g.ids, g.value, g.at_cut) for g in trace.ties
            if g.stage == stage and (measure is None or g.measure == measure)]


def test_vector_ties_match_lancedbs_own_ranking_at_every_depth(make_store):
    store = open_store(str(_grid_store(make_store)))
    r = random.Random(3)
    cache = PoolCache()
    for _ in range(6):
        vec = np.asarray([r.randint(0, 1) for _ in range(4)], np.float32)
        full = store.table.search(vec).limit(store.rows).to_arrow()
        order = list(zip(full["id"].to_pylist(), full["_distance"].to_pylist(), strict=True))
        for limit in (1, 4, 9, 25, 60):
            want = _expected_groups(order, limit, limit)
            for c in (cache, PoolCache()):  # from a deeper cached fetch, and fresh
                t = ask(store, vector=vec, limit=limit, cap=0, cache=c).trace
                assert [(g[1], g[2]) for g in _got(t, "fetch")] == \
                    [(w[1], w[2]) for w in want]
                assert [g[0] for g in _got(t, "fetch")] == [w[0] for w in want]


def test_blended_ties_at_the_limit_are_marked_as_computed_plainly(make_store):
    store = open_store(str(_grid_store(make_store)))
    vec = np.zeros(4, np.float32)
    for w, limit in ((0.5, 5), (0.5, 12), (1.0, 7), (0.0, 3)):
        t = ask(store, vector=vec, limit=limit, overfetch=4, cap=0, blend=w).trace

        def blended(s, w=w):
            base = 1 / (1 + float(dict(s.inputs)["distance"]))
            return base * ((1 - w) + w * float(s.row.importance)) if w else base

        scored = [(s.id, blended(s)) for s in t.stage("fetch").rows]
        scored.sort(key=lambda x: -x[1])  # stable: the fetched order among equal scores
        assert t.stage("blend").ids == [x[0] for x in scored]
        want = _expected_groups(scored, len(scored), limit)
        assert [(g[0], g[2]) for g in _got(t, "blend")] == [(x[0], x[2]) for x in want]
        assert [g[1] for g in _got(t, "blend")] == pytest.approx([x[1] for x in want],
                                                                 rel=1e-12)
        assert any(g[2] for g in want)  # the store is built to tie at these cuts


def test_hybrid_fused_ties_match_a_plain_rrf_over_lancedbs_legs(make_store):
    """The fused order and its tie groups, computed plainly from the legs' ranks: the vector
    leg is LanceDB's own ranking; the full-text leg's order among equal BM25 scores is
    LanceDB's (arbitrary, and reported so), so its ranks are read off the run."""
    store = open_store(str(_grid_store(make_store)))
    vec = np.asarray([1, 0, 1, 0], np.float32)
    for rule in ("lancedb", "id"):
        t = ask(store, text="note 3 keys 2", vector=vec, mode="hybrid", limit=10, cap=0,
                tie_rule=rule).trace
        v = store.table.search(vec).limit(10).to_arrow()["id"].to_pylist()
        rows = t.stage("fetch").rows
        vr = {s.id: int(dict(s.inputs)["vec_rank"]) for s in rows if "vec_rank" in dict(s.inputs)}
        fr = {s.id: int(dict(s.inputs)["fts_rank"]) for s in rows if "fts_rank" in dict(s.inputs)}
        assert [i for i, _ in sorted(vr.items(), key=lambda x: x[1])] == v[:len(vr)]
        score = {i: sum(1 / (60 + leg[i]) for leg in (vr, fr) if i in leg) for i in vr | fr}
        if rule == "lancedb":
            merged = sorted(vr, key=vr.get) + sorted((x for x in fr if x not in vr), key=fr.get)
            order = sorted(((x, float(np.float32(score[x]))) for x in merged),
                           key=lambda x: -x[1])
        else:
            order = sorted(score.items(), key=lambda x: (-x[1], x[0]))
        assert t.stage("fetch").ids == [x[0] for x in order[:10]]
        assert _got(t, "fetch", "fused") == _expected_groups(order, 10, 10)


_SCOPED = dict(scope="in", scope_strategy="column", scope_column="repo", filter="post")


def _text_store(make_store):
    """Full-text ties: six rows share one text (equal BM25); only t03 and t04 are in scope."""
    texts = ["alpha beta"] * 6 + [f"alpha {w} {w}" for w in ("x", "y", "z")] + \
        [f"gamma {i}" for i in range(20)]
    n = len(texts)
    return make_store({"id": [f"t{i:02d}" for i in range(n)], "text": texts,
                       "repo": ["in" if i in (3, 4) else "out" for i in range(n)],
                       "vector": np.eye(n, 4, dtype=np.float32) + np.arange(n)[:, None] * 0.01})


def test_a_full_text_tie_at_the_cut_is_arbitrary_and_said_so(make_store):
    store = open_store(str(_text_store(make_store)))
    a = ask(store, text="beta", mode="fts", limit=3)
    t = a.trace
    cut = [g for g in t.ties if g.at_cut]
    assert len(cut) == 1 and cut[0].arbitrary and cut[0].cut == 3
    assert cut[0].stage == "fetch" and cut[0].measure == "bm25" and len(cut[0].ids) == 3
    assert cut[0].beyond >= 1  # six rows tie: LanceDB keeps any three of them
    assert {"stage": "fetch", "at_cut": True}.items() <= to_json(a)["ties"][0].items()
    text = format_text(a)
    assert "tie at the cut: fetch keeps 3 of" in text and "rows tied at bm25" in text
    assert "arbitrary: LanceDB's full-text search keeps any" in text


def test_a_vector_tie_at_the_cut_keeps_its_depth_and_names_the_rule(make_store):
    ids = ["d", "a", "c", "b", "f", "e"]
    vecs = np.zeros((6, 4), np.float32)
    vecs[:, 0] = 1 - np.sqrt([0.1, 0.2, 0.2, 0.2, 0.2, 0.3])
    store = open_store(str(make_store({"id": ids, "text": ids, "vector": vecs,
                                       "repo": ["in" if i == "b" else "out" for i in ids]})))
    q = np.asarray([1, 0, 0, 0], np.float32)
    t = ask(store, vector=q, limit=2).trace
    assert t.final.ids == ["d", "a"]  # equal distances by row id, as LanceDB returns them
    (g,) = [x for x in t.ties if x.at_cut]
    assert (g.ids, g.at_cut, g.arbitrary, g.beyond) == (("a",), True, False, 1)
    (e,) = ask(store, vector=q, limit=1, **_SCOPED, expect=["b"]).expected
    deeper = [x for x in [e["fix"], *e["alternatives"]] if x and x["widen"]]
    assert deeper and deeper[0]["widen"]["fetch"] == 4  # b is 4th: equal distances by row id


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_trace_json_lists_every_group_with_its_fields(make_store, mode):
    store = open_store(str(_grid_store(make_store)))
    a = ask(store, text="note 1", vector=np.ones(4, np.float32), mode=mode, limit=8,
            blend=0.5)
    doc = to_json(a)["ties"]
    assert len(doc) == len(a.trace.ties) > 0
    for entry, g in zip(doc, a.trace.ties, strict=True):
        assert entry["ids"] == list(g.ids) and entry["score"] == g.value
        assert entry["at_cut"] == g.at_cut and len(g.ids) + g.beyond >= 1


def test_a_leg_already_in_canonical_order_is_kept_as_it_came():
    """A leg is ranked by (value, row id) (`pool._canonical`): one in that order already (a
    flat vector search's mostly is) is the very table LanceDB returned, not a copy of its
    columns; one out of order (equal values in another row id order, or a descending full-text
    leg) is sorted, ties by row id."""
    from inspector.core.engine.pool import _canonical

    ordered = pa.table({"_distance": pa.array([0.1, 0.2, 0.2, 0.5], pa.float32()),
                        "_rowid": pa.array([7, 3, 9, 1], pa.uint64()),
                        "id": ["a", "b", "c", "d"]})
    assert _canonical(ordered, "_distance", ascending=True) is ordered
    tied = ordered.take([0, 2, 1, 3])  # the tie at 0.2 by row id 9 before 3
    got = _canonical(tied, "_distance", ascending=True)
    assert got is not tied and got.column("id").to_pylist() == ["a", "b", "c", "d"]
    scores = pa.table({"_score": [2.0, 5.0, 5.0, 1.0], "_rowid": pa.array([4, 8, 2, 6],
                                                                            pa.uint64())})
    assert _canonical(scores, "_score", ascending=False).column("_rowid").to_pylist() == \
        [2, 8, 4, 6]
    empty = ordered.slice(0, 0)
    assert _canonical(empty, "_distance", ascending=True) is empty
