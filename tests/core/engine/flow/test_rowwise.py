"""Row-wise stages and what the fix search proves from them.

A stage kind that declares itself row-wise (`StageKind.rowwise`) decides each row by itself:
kept or dropped, and the score it leaves with, from that row and the score it came with alone,
at any depth. Each declaration is run here over real runs of one question at several depths
(what a deeper what-if changes): every row two runs share gets the same fate and score at
each row-wise stage. The same comparison catches a stage that is not row-wise (a limit).

From those declarations `expect.depth_free` proves that no deeper search returns a row a
row-wise stage dropped for its own score (a memory below the min score): the fix search then
runs no deeper what-if for it, and finds the same fixes with fewer runs. Where the proof does
not hold (the row fell at a cut a what-if deepens, an ANN index, a fused leg) the search runs
as before."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inspector.core.engine.flow.insight import expect as E
from inspector.core.engine.flow.insight.expect import depth_free, explain, where_dropped
from inspector.core.engine.flow.registry import KINDS, kind_of
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import Change, Runs
from inspector.core.engine.flow.spec import apply_set, load_shipped
from inspector.core.stores.opening import open_store
from tests.storekit import snapshot, write_table

NOW = 1.79e12
DIM = 16
N = 400
REPO = {"scope_rule.strategy": "repo_prefix", "scope_rule.column": ""}
DEPTHS = (10, 37, 150, N)
# every kind declared row-wise (under some parameters) is run below; a new declaration needs
# its own case here
EXERCISED = {"scope_rule", "lancedb_pool", "scope_filter", "importance_blend", "min_score"}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """400 random rows in two repos, importance 0-1 (some NULL), a few copies of one vector
    (equal distances, so ties at every depth)."""
    rng = np.random.default_rng(11)
    vec = rng.normal(size=(N, DIM)).astype(np.float32)
    vec[300:306] = vec[7]
    imp = rng.uniform(0.0, 1.0, N).tolist()
    for i in range(0, N, 37):
        imp[i] = None
    path = tmp_path_factory.mktemp("rowwise") / "db"
    return write_table(path, {
        "id": [f"m{i:03d}" for i in range(N)], "text": [f"memory {i}" for i in range(N)],
        "repo": ["repo-a" if i % 3 else "repo-b" for i in range(N)],
        "importance": imp, "vector": vec})


def _runs(store: Any, spec: Any, vec: np.ndarray, scopes: tuple[str, ...] | None) -> Runs:
    return Runs(store, spec, None, vec.astype(np.float64), scopes, 10, NOW, "vector")


def _fates(t: FlowTrace, name: str) -> dict[str, tuple[str, Any]]:
    """Each row that came to stage `name` (a fetch: each row it fetched): kept with its score
    out, or the drop code and its facts."""
    st = t.stage(name)
    kept = {s.id: ("kept", s.score) for s in st.rows}
    if st.role == "fetch":
        return kept
    dropped = {d.id: (d.code, d.detail) for d in st.dropped}
    return {s.id: kept.get(s.id) or dropped.get(s.id, ("gone", None)) for s in st.rows_in}


def _differences(a: FlowTrace, b: FlowTrace, name: str) -> list[str]:
    fa, fb = _fates(a, name), _fates(b, name)
    return [rid for rid in fa.keys() & fb.keys() if fa[rid] != fb[rid]]


SPECS = {
    "blend, post-filter": {**REPO, "min_score.min": 0.55, "blend.weight": 0.4},
    "blend, pushed down": {**REPO, "scope_rule.pushdown": True, "min_score.min": 0.5},
    "no blend, no min score": {**REPO, "blend.weight": 0.0, "min_score.min": 0.0},
    "cosine, expired dropped": {**REPO, "fetch.distance": "cosine", "min_score.min": 0.6,
                                "min_score.drop_expired": True},
}


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("scopes", [("repo-a",), None])
def test_each_row_wise_stage_decides_a_row_alike_at_every_depth(
        store_path: Path, name: str, scopes: tuple[str, ...] | None) -> None:
    store = open_store(str(store_path), "memories")
    spec = apply_set(load_shipped("importance-blend"), SPECS[name])
    rng = np.random.default_rng(len(name))
    seen: set[str] = set()
    for vec in (store.vector_of("m007"), rng.normal(size=DIM)):
        q = _runs(store, spec, np.asarray(vec), scopes)
        wide = [st.name for st in q.run().stages if kind_of(st.kind).widens]
        runs = [q.run(Change(widen=tuple((w, d) for w in wide))) for d in DEPTHS]
        for st in runs[0].stages:
            if not kind_of(st.kind).is_rowwise(st.params) or st.role == "query":
                continue
            seen.add(st.kind)
            for a, b in zip(runs[:-1], runs[1:], strict=True):
                shared = _fates(a, st.name).keys() & _fates(b, st.name).keys()
                assert shared, (st.name, "no row compared")
                assert _differences(a, b, st.name) == [], (name, st.name)
        # a deeper run holds more rows at the fetch: the comparison is over real differences
        assert len(runs[-1].stage("fetch").rows) > len(runs[0].stage("fetch").rows)
    assert seen == EXERCISED - {"scope_rule"}  # the query stage reads no rows


def test_the_comparison_catches_a_stage_that_is_not_row_wise(store_path: Path) -> None:
    """A limit keeps a row by its rank: at depth 10 a row it keeps at 400 is past it."""
    store = open_store(str(store_path), "memories")
    spec = apply_set(load_shipped("importance-blend"), {"min_score.min": 0.0})
    q = _runs(store, spec, store.vector_of("m007"), None)
    final = q.run().stages[-1]
    assert not kind_of(final.kind).is_rowwise(final.params)
    shallow, deep = (q.run(Change(widen=(("fetch", d), (final.name, d)))) for d in (10, N))
    assert _differences(shallow, deep, final.name)


def test_every_row_wise_declaration_is_exercised() -> None:
    declared = {k for k, kind in KINDS.items() if kind.rowwise}
    assert declared == EXERCISED
    pool = kind_of("lancedb_pool")
    assert pool.is_rowwise({"mode": "vector"})
    assert not pool.is_rowwise({"mode": "hybrid"}) and not pool.is_rowwise({"mode": "fts"})


def _below(store: Any, spec: Any, want: int) -> list[tuple[str, Runs]]:
    """Rows dropped at the min score when asked with their own vector in their own repo."""
    out = []
    for i in range(N):
        rid = f"m{i:03d}"
        q = _runs(store, spec, store.vector_of(rid), ("repo-a" if i % 3 else "repo-b",))
        if where_dropped(q.run(), rid).code == "below_min_score":
            out.append((rid, q))
        if len(out) == want:
            break
    return out


@pytest.mark.parametrize("pushdown", [False, True])
def test_a_row_below_the_min_score_gets_the_same_fixes_without_a_deeper_search(
        store_path: Path, pushdown: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(str(store_path), "memories")
    before = snapshot(store_path)
    spec = apply_set(load_shipped("importance-blend"),
                     {**REPO, "scope_rule.pushdown": pushdown, "min_score.min": 0.8})
    found = _below(store, spec, 4)
    assert len(found) == 4
    for rid, q in found:
        e = explain(q.run(), rid, q)
        assert e["reason"] == "below_min_score" and e["dropped_at"] == "min_score"
        assert len(e["proved"]) == 1 and "no deeper search returns it" in e["proved"][0]
        # only the weights and the min score itself are searched: they change its score
        assert e["tried"] <= 40
        with monkeypatch.context() as m:  # the same search with the what-if run
            m.setattr(E, "depth_free", lambda *a: None)
            q2 = _runs(store, spec, store.vector_of(rid), q.scopes)
            full = explain(q2.run(), rid, q2)
        assert "proved" not in full
        assert {k: e.get(k) for k in ("fix", "alternatives", "no_fix")} == \
            {k: full.get(k) for k in ("fix", "alternatives", "no_fix")}
        assert e["tried"] < full["tried"]
        # what the proof says, run: the whole repo fetched deeper, by a what-if, the fetch's
        # own depths, the limit or the scope pushed the other way, the row is still dropped
        # at the min score
        fetched = []
        for change in (Change(widen=tuple((w, N) for w in ("fetch", "final"))),
                       Change().with_sets(**{"fetch.overfetch": 100.0, "fetch.cap": 0}),
                       Change(limit=spec.limit.max),
                       Change().with_sets(**{"scope_rule.pushdown": not pushdown})):
            deep = q.run(change)
            assert rid not in deep.final.ids, change
            assert where_dropped(deep, rid).code == "below_min_score", change
            fetched.append(len(deep.stage("fetch").rows))
        assert min(fetched[:3]) > len(q.run().stage("fetch").rows)  # deeper than its own
    assert snapshot(store_path) == before


def test_a_proved_row_still_gets_the_threshold_that_returns_it(store_path: Path) -> None:
    """The proof skips what cannot change the row's score; the min score itself is searched."""
    store = open_store(str(store_path), "memories")
    spec = apply_set(load_shipped("importance-blend"), {**REPO, "min_score.min": 0.8})
    rid, q = _below(store, spec, 1)[0]
    score = where_dropped(q.run(), rid).detail["score"]
    below = math.floor(score * 100) / 100  # the highest min score on its grid it passes
    just = apply_set(spec, {"min_score.min": round(below + 0.02, 2)})
    q = _runs(store, just, store.vector_of(rid), q.scopes)
    e = explain(q.run(), rid, q)
    assert "proved" in e
    assert (e["fix"]["stage"], e["fix"]["param"], e["fix"]["to"]) == \
        ("min_score", "min", pytest.approx(below))


def test_where_the_proof_does_not_hold_the_deeper_search_runs(store_path: Path) -> None:
    store = open_store(str(store_path), "memories")
    spec = apply_set(load_shipped("importance-blend"), {"min_score.min": 0.0})
    vec = np.random.default_rng(3).normal(size=DIM)
    q = _runs(store, spec, vec, None)
    t = q.run()
    wide = ["fetch", t.stages[-1].name]
    # a row past the limit fell at a cut a what-if deepens: a deeper list returns it
    past = t.stages[-1].dropped[0].id
    fall = where_dropped(t, past)
    assert fall.code == "past_limit" and depth_free(t, fall, wide) is None
    e = explain(t, past, q)
    assert "proved" not in e and e["fix"] is not None
    # a row below the min score, proved on a flat table ...
    spec8 = apply_set(load_shipped("importance-blend"), {**REPO, "min_score.min": 0.8})
    rid, q8 = _below(store, spec8, 1)[0]
    t8 = q8.run()
    fall8 = where_dropped(t8, rid)
    assert depth_free(t8, fall8, wide) is not None
    # ... is not where an ANN index answers, nor where the fetch fuses legs by rank
    indexed = replace(t8, store={**t8.store, "index": "IVF_PQ"})
    assert depth_free(indexed, fall8, wide) is None
    assert depth_free(replace(indexed, exact=True), fall8, wide) is not None
    fused = replace(t8, stages=tuple(
        replace(st, params={**st.params, "mode": "hybrid"}) if st.role == "fetch" else st
        for st in t8.stages))
    assert depth_free(fused, fall8, wide) is None
    # nor where the stage that dropped it is one a what-if deepens
    assert depth_free(t8, fall8, [*wide, "min_score"]) is None
