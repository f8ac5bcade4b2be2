"""The diagnosis names the blocker, and each fix it offers really helps when applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.cli import main
from inspector.core.stores.demo import BLEND_QUERY, SCOPE_QUERY
from inspector.core.stores.opening import open_store
from tests.askkit import ask


@pytest.fixture(scope="module")
def demo(demo_path: Path):
    return open_store(str(demo_path))


def _fixed(store, given: dict, fix) -> Any:
    """The run with the fix applied (its --set changes, or its what-if depths)."""
    sets = dict(fix.change.sets)
    return ask(store, **given, sets=sets, widen=dict(fix.change.widen)).trace


def test_min_score_cut_is_named_and_its_fix_returns_rows(demo, demo_path, capsys) -> None:
    code = main(["query", str(demo_path), "--preset", "importance-blend", "--text", BLEND_QUERY,
                 "--min-score", "0.99", "--json"])
    assert code == 0
    assert '"code": "threshold"' in capsys.readouterr().out
    given = {"preset": "importance-blend", "text": BLEND_QUERY, "min_score": 0.99}
    a = ask(demo, **given, fixes=True)
    assert a.trace.final.rows == () and a.diagnosis.code == "threshold"
    assert a.diagnosis.stage == "min_score"
    own = [f for f in a.diagnosis.fixes if f.kind == "own"]
    assert own and dict(own[0].change.sets).keys() == {"min_score.min"}
    assert dict(own[0].change.sets)["min_score.min"] < 0.99
    after = _fixed(demo, given, own[0])
    assert len(after.final.rows) == min(10, len(after.stage("scope").rows)) > 0


def test_scope_fixes_rescue_the_scoped_miss(demo) -> None:
    given = {"preset": "docs-before-fix", "text": SCOPE_QUERY, "scope": "vault-agent"}
    a = ask(demo, **given, fixes=True)
    assert a.diagnosis.code == "filter_after_cut" and a.diagnosis.stage == "scope"
    assert a.diagnosis.first_at == 25  # the first in-scope row comes in at over-fetch 2.5
    sets = [dict(f.change.sets) for f in a.diagnosis.fixes if f.kind == "own"]
    # the system's own fixes, each a full page: pushdown, or the over-fetch (and cap) that
    # reach the page's depth
    assert sets == [{"scope_rule.pushdown": True}, {"fetch.cap": 56, "fetch.overfetch": 5.6}]
    for fix in a.diagnosis.fixes:
        assert _fixed(demo, given, fix).final.rows, fix.label


def test_a_scope_fix_that_min_score_then_blocks_says_so(demo) -> None:
    """Following the pushdown advice where the min score also cuts every row: the next
    diagnosis speaks of the min score, not of the scope again. (After the over-fetch advice
    the scope still keeps fewer than the limit, so the one engine names the first stage
    that starves the page: the scope, with the min score's fixes tried on top.)"""
    a = ask(demo, preset="docs-before-fix", text=SCOPE_QUERY, scope="vault-agent",
            min_score=0.99, filter="pushdown")
    assert a.trace.final.rows == () and len(a.trace.stage("scope").rows) == 10
    assert a.diagnosis.code == "threshold" and a.diagnosis.stage == "min_score"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    from tests.storekit import write_tuning_store

    return open_store(str(write_tuning_store(tmp_path_factory.mktemp("diag") / "s")))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(1, 12), overfetch=st.floats(1, 6), blend=st.floats(0, 1),
       min_score=st.floats(0, 0.2), scope=st.sampled_from([None, "repo0", "repo1"]),
       filt=st.sampled_from(["post", "pushdown"]))
def test_never_ok_with_nothing_returned(small, limit, overfetch, blend, min_score,
                                        scope, filt) -> None:
    a = ask(small, vector=[0.1] * small.dim, limit=limit, overfetch=overfetch, blend=blend,
            min_score=min_score, scope=scope, filter=filt)
    t = a.trace
    if not t.final.rows:
        assert a.diagnosis.code != "ok"
    if a.diagnosis.code == "ok":
        assert len(t.final.rows) == min(limit, len(t.stage("scope").rows))
