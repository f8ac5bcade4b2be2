"""The diagnosis names the blocker, and each fix it offers really helps when applied."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.cli import main
from inspector.core.engine.inputs import build_params, build_query
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.stores.demo import BLEND_QUERY, SCOPE_QUERY
from inspector.core.stores.opening import open_store


@pytest.fixture(scope="module")
def demo(demo_path: Path):
    return open_store(str(demo_path))


def _apply(p: Params, fix) -> Params:
    return p.with_(**dict(fix.changes))


def test_min_score_cut_is_named_and_its_fix_returns_rows(demo, demo_path, capsys) -> None:
    code = main(["query", str(demo_path), "--preset", "importance-blend", "--text", BLEND_QUERY,
                 "--min-score", "0.99", "--json"])
    assert code == 0
    assert '"code": "min_score_cut"' in capsys.readouterr().out
    p = build_params(preset="importance-blend", min_score=0.99)
    query = build_query(demo, p.mode, text=BLEND_QUERY)
    t = run(demo, query, p)
    assert t.counters["returned"] == 0 and t.diagnosis.code == "min_score_cut"
    (fix,) = t.diagnosis.fixes
    assert fix.label.startswith("Lower min score to ")
    after = run(demo, query, _apply(p, fix))
    assert after.counters["returned"] == min(p.limit, after.counters["scopedCandidates"])


def test_scope_fixes_rescue_the_scoped_miss(demo) -> None:
    p = build_params(preset="docs-before-fix", scope="vault-agent")
    query = build_query(demo, p.mode, text=SCOPE_QUERY)
    t = run(demo, query, p)
    assert t.diagnosis.code == "scope_starvation"
    labels = [f.label for f in t.diagnosis.fixes]
    assert labels == ["Apply over-fetch 2.5", "Try pushdown"]
    for fix in t.diagnosis.fixes:
        assert run(demo, query, _apply(p, fix)).counters["returned"] > 0, fix.label


def test_a_scope_fix_that_min_score_then_blocks_says_so(demo) -> None:
    """Following the over-fetch advice where the min score also cuts the row: the next
    diagnosis speaks of the min score, not of the scope again."""
    p = build_params(preset="docs-before-fix", scope="vault-agent", min_score=0.99)
    query = build_query(demo, p.mode, text=SCOPE_QUERY)
    t = run(demo, query, p.with_(overfetch=2.5))
    assert t.counters["returned"] == 0 and t.counters["scopedCandidates"] > 0
    assert t.diagnosis.code == "min_score_cut"
    assert "Min score 0.99 removed" in t.diagnosis.message


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
    store = small
    p = Params(limit=limit, overfetch=overfetch, blend=blend, min_score=min_score, scope=scope,
               filter=filt)
    query = build_query(store, "vector", vector=[0.1] * store.dim)
    t = run(store, query, p)
    if t.counters["returned"] == 0:
        assert t.diagnosis.code != "ok"
    if t.diagnosis.code == "ok":
        assert t.counters["returned"] == min(limit, t.counters["scopedCandidates"])
