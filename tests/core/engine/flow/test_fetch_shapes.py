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
