"""The scope filter answers a candidate list it has filtered before from memory (a truth or a
sweep's cell that changes only a later stage passes the fetch's very candidates again), and
that answer is the one a fresh filter gives, whatever the caller does with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.flow.runs import Change
from inspector.core.engine.flow.stages import scoping
from inspector.core.stores.opening import open_store
from tests.core.engine.flow.test_live_flow import shape
from tests.storekit import write_mixed_store


def _runs(path: Path):  # noqa: ANN202 - a Runs
    q = Question(store=str(path), preset="lancedb", text="keys", vector=[0.1] * 16, limit=4,
                 scopes=["repo1"], set={"scope_rule.strategy": "column",
                                        "scope_rule.column": "repo", "fetch.overfetch": 20})
    runs, _, _ = runs_for(q, open_store(str(path)), PoolCache())
    return runs


def test_a_list_filtered_before_is_answered_from_memory_as_a_fresh_filter(
        tmp_path: Path) -> None:
    path = write_mixed_store(tmp_path / "s", n=300)
    runs = _runs(path)
    scoping._FILTERED.clear()
    first = runs.run(Change().with_sets(**{"blend.weight": 0.2}))
    hits = scoping._FILTERED.hits
    kept = first.stage("scope")
    assert 0 < len(kept.rows) < len(kept.rows_in) and kept.dropped  # it filters something
    again = runs.run(Change().with_sets(**{"blend.weight": 0.9}))
    assert scoping._FILTERED.hits == hits + 1  # the same candidates, not filtered again
    # each answer as a fresh process gives it: no memo of any kind, a new session
    for weight, got in ((0.2, first), (0.9, again)):
        scoping._FILTERED.clear()
        scoping._VERDICTS.clear()
        want = _runs(path).run(Change().with_sets(**{"blend.weight": weight}))
        assert shape(got) == shape(want)
        assert got.stage("scope").facts == want.stage("scope").facts
        assert got.stage("scope").note == want.stage("scope").note


def test_a_stage_that_changes_its_list_changes_no_remembered_answer(tmp_path: Path) -> None:
    """The runner and later stages own the lists they are given: a remembered answer hands
    out copies."""
    from inspector.core.engine import scope as scopes
    from inspector.core.engine.flow.rows import Context

    path = write_mixed_store(tmp_path / "s", n=120)
    store = open_store(str(path))
    rows = list(_runs(path).run().stage("fetch").rows)
    ctx = Context(store=store, text=None, vector=None, scopes=("repo2",), limit=4, now_ms=0.0,
                  settings={}, exact=False, widen={})
    ctx.request["scope_spec"] = scopes.ScopeSpec(scope="repo2", strategy="column",
                                                 column="repo")
    scoping._FILTERED.clear()
    one = scoping.scope_filter(ctx, rows, {})
    n, facts, hits = len(one.rows), dict(one.facts), scoping._FILTERED.hits
    one.rows.clear()
    one.facts.clear()
    two = scoping.scope_filter(ctx, rows, {})
    assert scoping._FILTERED.hits == hits + 1
    assert len(two.rows) == n > 0 and two.facts == facts


def test_a_change_asked_again_reuses_its_pipeline_and_its_checked_parameters(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep asks a cell's settings again (its truth's what-if, its safe depth): the
    pipeline with them applied is made once a question, and each stage's parameters are
    checked once; what a run is handed is its own copy."""
    from inspector.core.engine.flow import runner
    from inspector.core.engine.flow import runs as runs_module
    from inspector.core.engine.flow.registry import kind_of

    runs = _runs(write_mixed_store(tmp_path / "s", n=120))
    made: list[Any] = []
    real = runs_module.apply_set
    monkeypatch.setattr(runs_module, "apply_set", lambda *a: made.append(a[1]) or real(*a))
    weight = Change().with_sets(**{"blend.weight": 0.3})
    runs.run(weight)
    runs.run(weight.with_sets(**{"fetch.overfetch": 30}))
    runs.run(Change(weight.sets, (("fetch", 200),)))  # another change, the same settings
    assert runs.count == 3
    assert made == [{"blend.weight": 0.3}, {"blend.weight": 0.3, "fetch.overfetch": 30}]
    blend = kind_of("importance_blend")
    got = runner._resolved(blend, "importance_blend", "blend", {"weight": 0.3})
    got["weight"] = 99.0  # a run changing the dict it was handed
    assert runner._resolved(blend, "importance_blend", "blend", {"weight": 0.3}) == \
        {"weight": 0.3, "default_importance": 0.7}


def test_a_remembered_check_still_refuses_a_value_of_the_wrong_type() -> None:
    """True == 1 for a dict key, not for the check: a window's `enabled` given 1 after True
    was checked is still refused, and a limit given True after 1."""
    from inspector.core.engine.flow import runner
    from inspector.core.engine.flow.registry import kind_of
    from inspector.core.errors import InspectorError

    window = kind_of("window")
    assert runner._resolved(window, "window", "w", {"enabled": True})["enabled"] is True
    with pytest.raises(InspectorError, match="true or false"):
        runner._resolved(window, "window", "w", {"enabled": 1})
    assert runner._resolved(window, "window", "w", {"per_limit": 2})["per_limit"] == 2.0
    with pytest.raises(InspectorError, match="must be"):
        runner._resolved(window, "window", "w", {"per_limit": True})
