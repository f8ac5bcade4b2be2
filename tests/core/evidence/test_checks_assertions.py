"""CI checks over any pipeline: assertions parse, fail when they should, and say why (a missing
row: where it was dropped and the smallest change that returns it, run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.engine.flow.question import Question, answer
from inspector.core.errors import InspectorError
from inspector.core.evidence.checks import format_results, load_checks, parse_assertion, run_checks
from inspector.core.stores.demo import SCOPE_QUERY
from inspector.core.stores.opening import open_store


def _vault_ids(demo: Path) -> list[Any]:
    q = Question(store=str(demo), preset="docs-pushdown", scopes=["vault-agent"], limit=10,
                 text=SCOPE_QUERY)
    return answer(q, open_store(str(demo)), fixes=False).trace.final.ids


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    f = tmp_path / "checks.json"
    f.write_text(json.dumps(doc))
    return f


def test_assertion_forms_parse() -> None:
    a = parse_assertion("scopedCandidates > 0", "t", 10)
    assert (a.kind, a.target, a.op, a.value) == ("counter", "scopedCandidates", ">", 0.0)
    m = parse_assertion("recall@5 >= 0.8", "t", 10)
    assert (m.kind, m.target, m.k) == ("metric", "recall", 5)
    assert parse_assertion("ndcg >= 0.5", "t", 7).k == 7
    i = parse_assertion("id abc-1 in top 3", "t", 10)
    assert (i.kind, i.target, i.value) == ("id", "abc-1", 3)
    assert parse_assertion({"id": "x", "not_in_top": 2}, "t", 10).op == "not in"
    with pytest.raises(InspectorError, match="cannot read assertion"):
        parse_assertion("recall is great", "t", 10)
    with pytest.raises(InspectorError, match="neither a counter of this pipeline"):
        parse_assertion("foo@3 > 1", "t", 10)
    assert parse_assertion("scope > 1", "t", 10, ("scope", "returned")).kind == "counter"
    assert parse_assertion("belowMinScore == 0", "t", 10).kind == "counter"
    assert parse_assertion("diagnosis != filter_after_cut", "t", 10).value == "filter_after_cut"
    with pytest.raises(InspectorError, match="the one engine says filter_after_cut"):
        parse_assertion("diagnosis != scope_starvation", "t", 10)
    with pytest.raises(InspectorError, match="is no diagnosis code"):
        parse_assertion("diagnosis == fine", "t", 10)


def test_checks_pass_and_fail_with_reasons(tmp_path: Path, demo_path: Path) -> None:
    ids = _vault_ids(demo_path)
    doc = {"format": "inspector-checks", "version": 1, "store": str(demo_path),
           "defaults": {"limit": 10, "scope": "vault-agent"},
           "checks": [
               {"name": "pushdown finds the vault docs", "text": SCOPE_QUERY,
                "preset": "docs-pushdown", "relevant": {str(ids[0]): 2, str(ids[1]): 1},
                "assert": ["scopedCandidates > 0", "returned == 10", "recall@5 >= 0.8",
                           {"id": ids[0], "top": 3}, "diagnosis == ok"]},
               {"name": "before the fix", "text": SCOPE_QUERY, "preset": "docs-before-fix",
                "assert": ["scopedCandidates > 0", f"id {ids[0]} in top 5",
                           "scoped_recall@10 >= 0.8", "rawCandidates == 10", "scope == 0",
                           "outOfScope == 10", "diagnosis == filter_after_cut"]},
               {"name": "a stage parameter set", "text": SCOPE_QUERY,
                "preset": "docs-before-fix", "params": {"overfetch": 6, "cap": 60},
                "assert": ["returned == 10", "fetch == 60", "scoped_recall@10 == 1"]}]}
    results = run_checks(load_checks(_write(tmp_path, doc)))
    assert [r.passed for r in results] == [True, False, True]
    failed = {o.assertion: o for o in results[1].outcomes if not o.passed}
    assert set(failed) == {"scopedCandidates > 0", f"id {ids[0]} in top 5",
                           "scoped_recall@10 >= 0.8"}
    assert "filters after the cut before it" in failed["scopedCandidates > 0"].why
    why = failed[f"id {ids[0]} in top 5"].why
    assert why.startswith("not returned: dropped at ")
    assert "--set scope_rule.pushdown=true returns it at rank" in why  # the fix, run
    assert failed["scoped_recall@10 >= 0.8"].actual == 0.0
    text = format_results(results)
    assert "PASS  pushdown finds the vault docs" in text and "3 checks, 1 failed" in text


@pytest.mark.parametrize("check, message", [
    ({"text": "q", "assert": ["recall@5 >= 0.8"]}, "needs judgments"),
    ({"text": "q", "assert": []}, "non-empty list"),
    ({"assert": ["returned > 0"]}, "give the query"),
    ({"text": "q", "params": {"colour": 1}, "assert": ["returned > 0"]},
     "pipeline lancedb has no stage that takes colour"),
    ({"text": "q", "preset": "langchain-lancedb", "params": {"overfetch": 2},
      "assert": ["returned > 0"]}, "no stage that takes overfetch"),
    ({"text": "q", "set": {"fetch.nosuch": 1}, "assert": ["returned > 0"]}, "no parameter"),
    ({"text": "q", "preset": "no-such-preset", "assert": ["returned > 0"]},
     "Unknown pipeline"),
    ({"text": "q", "assert": ["diagnosis > ok"]}, "== or !="),
])
def test_bad_checks_files_are_bad_input(tmp_path: Path, check: dict[str, Any],
                                        message: str) -> None:
    with pytest.raises(InspectorError, match=message):
        load_checks(_write(tmp_path, {"checks": [check]}))


def test_judgments_file_supplies_grades(tmp_path: Path, demo_path: Path) -> None:
    ids = _vault_ids(demo_path)
    (tmp_path / "j.csv").write_text(f"query,scope,id,grade\n{SCOPE_QUERY},vault-agent,"
                                    f"{ids[9]},1\n")
    doc = {"store": str(demo_path), "judgments": "j.csv",
           "checks": [{"text": SCOPE_QUERY, "scope": "vault-agent", "preset": "docs-pushdown",
                       "assert": ["mrr >= 0.5"]}]}
    (res,) = run_checks(load_checks(_write(tmp_path, doc)))
    assert not res.passed and res.outcomes[0].actual == pytest.approx(0.1)
