"""The importance blend re-scores each row once per (weight, default importance) within one
question's runs: a live over-fetch tick hands it the very rows it blended at the last depth,
and only the rows new to the deeper pool are blended again. Every answer is the one a fresh
process gives, and nothing is kept past the question (a sweep's memory stays one query's)."""

from __future__ import annotations

import gc
import random
import weakref
from pathlib import Path

import pytest

from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.flow.runs import Change, Runs
from inspector.core.engine.flow.stages import classic, importance, scoping
from inspector.core.stores.opening import open_store
from tests.core.engine.flow.test_live_flow import shape
from tests.storekit import write_mixed_store


def _runs(path: Path, preset: str = "memory-plugin") -> Runs:
    q = Question(store=str(path), preset=preset, text="keys", vector=[0.1] * 16, limit=5,
                 set={"fetch.overfetch": 4.0, "min_score.min": 0.0} if preset ==
                 "memory-plugin" else {"fetch.overfetch": 4.0})
    runs, _, _ = runs_for(q, open_store(str(path)), PoolCache())
    runs.live = True  # as the window's session: one deep fetch serves every depth
    return runs


def _fresh(path: Path, preset: str, sets: dict[str, float]):  # noqa: ANN202 - a FlowTrace
    """The answer as a new process gives it: no memo of any kind, no pool held."""
    from inspector.core.engine import pools

    pools.SOURCE.clear()
    scoping._FILTERED.clear()
    scoping._VERDICTS.clear()
    classic._SHARED.clear()
    return _runs(path, preset).run(Change().with_sets(**sets))


def _blend_rows(runs: Runs) -> int:
    return sum(len(t) for t in runs.stage_memo.get("blend", {}).values())


@pytest.mark.parametrize("preset", ["memory-plugin", "lancedb"])
def test_every_answer_is_a_fresh_runs_through_depths_weights_and_defaults(
        tmp_path: Path, preset: str) -> None:
    """A random walk over over-fetch, weight and default importance (NaN, missing and
    out-of-range importances in the store), answered through the memo, against each answer
    made fresh."""
    path = write_mixed_store(tmp_path / "s", n=240)
    runs = _runs(path, preset)
    rng = random.Random(7)
    asked = []
    for _ in range(24):
        sets = {"fetch.overfetch": rng.choice([1.0, 2.0, 3.5, 4.0, 6.0, 9.0]),
                "blend.weight": rng.choice([0.0, 0.3, 0.5, 1.0]),
                "blend.default_importance": rng.choice([0.7, 0.2])}
        asked.append((sets, runs.run(Change().with_sets(**sets))))
    assert len({tuple(sorted(s.items())) for s, _ in asked}) > 10  # many different answers
    reused = 0  # answers that took rows from the blend of another change (the memo answered;
    # a change asked again is the same answer, remembered whole)
    for n, (sets, got) in enumerate(asked):
        mine = {id(r) for r in got.stage("blend").rows}
        reused += any(id(r) in mine for other, t in asked[:n] if other != sets
                      for r in t.stage("blend").rows)
    assert reused > 3
    for sets, got in asked:
        want = _fresh(path, preset, sets)
        assert shape(got) == shape(want), sets


def test_a_deeper_pool_blends_only_its_new_rows(tmp_path: Path) -> None:
    path = write_mixed_store(tmp_path / "s", n=240)
    runs = _runs(path)
    shallow = runs.run(Change().with_sets(**{"fetch.overfetch": 4.0, "blend.weight": 0.5}))
    deep = runs.run(Change().with_sets(**{"fetch.overfetch": 8.0, "blend.weight": 0.5}))
    before = {r.id: r for r in shallow.stage("blend").rows}
    after = {r.id: r for r in deep.stage("blend").rows}
    assert len(after) > len(before) > 0
    assert all(after[i] is r for i, r in before.items())  # the same rows, not blended again
    other = runs.run(Change().with_sets(**{"fetch.overfetch": 8.0, "blend.weight": 0.9}))
    assert not {id(r) for r in other.stage("blend").rows} & {id(r) for r in after.values()}


def test_the_memo_is_the_questions_and_goes_with_it(tmp_path: Path) -> None:
    """Another question starts with nothing kept; a question's blends go when its runs go,
    and a run outside any question's runs keeps nothing."""
    path = write_mixed_store(tmp_path / "s", n=240)
    runs = _runs(path)
    t = runs.run(Change().with_sets(**{"fetch.overfetch": 8.0, "blend.weight": 0.5}))
    assert _blend_rows(runs) == len(t.stage("blend").rows) > 0
    assert _blend_rows(_runs(path)) == 0
    gone = weakref.ref(t.stage("blend").rows[0])
    del runs, t
    gc.collect()
    assert gone() is None
    from inspector.core.engine.flow.runner import run

    q = _runs(path)
    one = run(q.store, q.spec, text=q.text, vector=q.vector, scopes=q.scopes, limit=q.limit,
              now_ms=q.now_ms)
    again = run(q.store, q.spec, text=q.text, vector=q.vector, scopes=q.scopes, limit=q.limit,
                now_ms=q.now_ms)
    assert not {id(r) for r in one.stage("blend").rows} & \
        {id(r) for r in again.stage("blend").rows}


def test_the_memo_starts_again_past_its_bound(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays bounded whatever the number of weights a session visits."""
    path = write_mixed_store(tmp_path / "s", n=240)
    monkeypatch.setattr(importance, "BLENDED_ROWS_MAX", 50)
    runs = _runs(path)
    for w in (0.1, 0.2, 0.3, 0.4, 0.6, 0.7):
        runs.run(Change().with_sets(**{"fetch.overfetch": 8.0, "blend.weight": w}))
        assert _blend_rows(runs) <= 50 + 40  # at most the bound and one run's rows (40 here)
