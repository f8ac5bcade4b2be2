"""A fetch stage asked again at a shape it made before (the same legs, depths and order, under
other parameters: a cap past the depth, a sweep's cells and truths that land on one depth)
takes that shape's candidates and ties as made: it does not order the pool again, and what it
reports is what a fresh process reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.flow.runs import Change
from inspector.core.engine.flow.stages import classic
from inspector.core.stores.opening import open_store
from tests.core.engine.flow.test_live_flow import shape
from tests.storekit import write_mixed_store


def _runs(path: Path, mode: str):  # noqa: ANN202 - a Runs
    q = Question(store=str(path), preset="lancedb", text="note keys tokens", vector=[0.1] * 16,
                 limit=4, scopes=["repo1"], set={"scope_rule.strategy": "column",
                                                 "scope_rule.column": "repo",
                                                 "fetch.overfetch": 20, "fetch.mode": mode})
    runs, _, _ = runs_for(q, open_store(str(path)), PoolCache())
    return runs


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_shape_asked_again_reports_its_ties_without_ordering_the_pool_again(
        tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_mixed_store(tmp_path / "s", n=300)
    runs = _runs(path, mode)
    calls = {"raw_order": 0, "_leg_ties": 0}
    for name in calls:
        real = getattr(classic, name)

        def counted(*args, _real=real, _name=name, **kwargs):  # noqa: ANN001, ANN202
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(classic, name, counted)
    # a cap past the depth (80) changes the stage's parameters, not the shape
    first = runs.run(Change().with_sets(**{"fetch.cap": 0}))
    assert calls == {"raw_order": 1, "_leg_ties": 1}
    again = runs.run(Change().with_sets(**{"fetch.cap": 500}))
    assert calls == {"raw_order": 1, "_leg_ties": 1}  # the shape's, as made
    assert first.ties, "the store's twin vectors and repeated texts tie"
    assert [t for t in again.ties if t.stage == "fetch" or t.stage.startswith("fetch.")] == \
        [t for t in first.ties if t.stage == "fetch" or t.stage.startswith("fetch.")]
    monkeypatch.undo()
    for cap, got in ((0, first), (500, again)):  # as a fresh process reports them
        want = _runs(path, mode).run(Change().with_sets(**{"fetch.cap": cap}))
        assert got.ties == want.ties
        assert shape(got) == shape(want)


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_shallower_vector_fetch_is_the_first_candidates_of_a_deeper_one(
        tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An over-fetch slider moved back: in vector mode the candidates at a depth are the first
    ones of a deeper shape's, taken without ordering the pool again; a hybrid fetch's fused
    order is not a prefix, so it orders the pool for each depth. Either way every stage, tie
    and final row is what a fresh process reports at that depth."""
    path = write_mixed_store(tmp_path / "s", n=300)
    runs = _runs(path, mode)
    calls = {"raw_order": 0}
    real = classic.raw_order

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls["raw_order"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(classic, "raw_order", counted)
    depths = [20, 14.5, 9, 3.25, 1]  # pools of 80, 58, 36, 13 and 4 rows
    got = [runs.run(Change().with_sets(**{"fetch.overfetch": f})) for f in depths]
    shapes = {tuple(t.stage("fetch").facts[k] for k in ("depth", "vec_k", "fts_k")) for t in got}
    assert len(shapes) >= 4
    assert calls["raw_order"] == (1 if mode == "vector" else len(shapes))
    monkeypatch.undo()
    for f, t in zip(depths, got, strict=True):
        want = _runs(path, mode).run(Change().with_sets(**{"fetch.overfetch": f}))
        assert shape(t) == shape(want), f
        assert t.ties == want.ties, f
        assert t.final.ids == want.final.ids, f
        assert t.stage("fetch").facts == want.stage("fetch").facts, f


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_deeper_vector_fetch_makes_only_the_candidates_past_a_shallower_one(
        tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An over-fetch slider moved up: in vector mode a deeper shape's first candidates are a
    shallower shape's (the very objects), and only the rows past them are made; a hybrid
    fetch's fused order is not a prefix, so each depth makes all of its own. Either way every
    stage, tie and final row is what a fresh process reports at that depth."""
    path = write_mixed_store(tmp_path / "s", n=300)
    runs = _runs(path, mode)
    runs.live = True  # as the window's: one pool fetched deep serves every over-fetch
    asked: list[int] = []
    real = classic._candidates

    def counted(pool, mode, raw, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        asked.append(len(raw))
        return real(pool, mode, raw, *args, **kwargs)

    monkeypatch.setattr(classic, "_candidates", counted)
    depths = [1, 3.25, 9, 14.5, 20]  # pools of 4, 13, 36, 58 and 80 rows
    got = [runs.run(Change().with_sets(**{"fetch.overfetch": f, "fetch.cap": 0}))
           for f in depths]
    pools = [t.stage("fetch").facts["depth"] for t in got]
    assert pools == sorted(pools) and len(set(pools)) >= 4
    if mode == "vector":
        assert sum(asked) == pools[-1]  # each candidate made once, at the first depth it is in
        for shallow, deep in zip(got[:-1], got[1:], strict=True):
            head = shallow.stage("fetch").rows
            assert all(a is b for a, b in zip(head, deep.stage("fetch").rows[:len(head)],
                                              strict=True))
    else:
        assert asked == pools
    monkeypatch.undo()
    for f, t in zip(depths, got, strict=True):
        want = _runs(path, mode).run(Change().with_sets(**{"fetch.overfetch": f,
                                                            "fetch.cap": 0}))
        assert shape(t) == shape(want), f
        assert t.ties == want.ties, f
        assert t.final.ids == want.final.ids, f
        assert t.stage("fetch").facts == want.stage("fetch").facts, f
