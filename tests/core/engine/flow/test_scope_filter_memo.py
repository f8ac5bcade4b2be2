"""The scope filter answers a candidate list it has filtered before from memory (a truth or a
sweep's cell that changes only a later stage passes the fetch's very candidates again), and
that answer is the one a fresh filter gives, whatever the caller does with it."""

from __future__ import annotations

from pathlib import Path

from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.flow.runs import Change
from inspector.core.engine.flow.stages import classic
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
    classic._FILTERED.clear()
    first = runs.run(Change().with_sets(**{"blend.weight": 0.2}))
    hits = classic._FILTERED.hits
    kept = first.stage("scope")
    assert 0 < len(kept.rows) < len(kept.rows_in) and kept.dropped  # it filters something
    again = runs.run(Change().with_sets(**{"blend.weight": 0.9}))
    assert classic._FILTERED.hits == hits + 1  # the same candidates, not filtered again
    # each answer as a fresh process gives it: no memo of any kind, a new session
    for weight, got in ((0.2, first), (0.9, again)):
        classic._FILTERED.clear()
        classic._VERDICTS.clear()
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
    classic._FILTERED.clear()
    one = classic.scope_filter(ctx, rows, {})
    n, facts, hits = len(one.rows), dict(one.facts), classic._FILTERED.hits
    one.rows.clear()
    one.facts.clear()
    two = classic.scope_filter(ctx, rows, {})
    assert classic._FILTERED.hits == hits + 1
    assert len(two.rows) == n > 0 and two.facts == facts
