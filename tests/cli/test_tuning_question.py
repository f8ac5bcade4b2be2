"""`inspector report` and `inspector sweep` build the question model from their options, as
`inspector query` does (issue 18, issue 30): the receipt holds the very question `query
--json` answers, with the same answer, and the sweep's JSON the question it swept around."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.core.engine.flow.question import Question
from inspector.core.evidence.receipt import load
from tests.clikit import cli_json

TEXT = "how do I rotate the signing keys for service tokens"
NOW = ["--now", "1796113038032"]
OPTIONS = [
    ["--preset", "docs-before-fix", "--scope", "vault-agent", "--overfetch", "2.5"],
    ["--preset", "importance-blend", "--blend", "0.3", "--limit", "5"],
    ["--mode", "hybrid", "--scope", "vault-agent", "--fts-k", "30", "--cap", "0"],
    ["--preset", "docs-pushdown", "--set", "fetch.cap=20", "--scope", "vault-agent"],
]


@pytest.mark.parametrize("options", OPTIONS, ids=[" ".join(o[:2]) for o in OPTIONS])
def test_the_receipt_holds_the_question_and_answer_query_gives(capsys, demo_path, tmp_path,
                                                               options) -> None:
    asked = [str(demo_path), "--text", TEXT, *options, *NOW]
    answer = cli_json(capsys, "query", *asked, "--json")
    out = tmp_path / "r"
    capsys.readouterr()
    assert main(["report", *asked, "--out", str(out), "--no-map", "--no-html",
                 "--grid-overfetch", "1,2", "--grid-blend", "0,1"]) == 0
    r = load(out.with_suffix(".json"))
    assert r.before.question == Question.model_validate(answer["question"])
    before = json.loads(out.with_suffix(".json").read_text("utf-8"))["before"]
    assert before == answer  # the very answer `query --json` prints


@pytest.mark.parametrize("options", OPTIONS, ids=[" ".join(o[:2]) for o in OPTIONS])
def test_the_sweep_carries_the_question_it_swept_around(capsys, demo_path, tmp_path, options
                                                        ) -> None:
    asked = [str(demo_path), "--text", TEXT, *options]
    answer = cli_json(capsys, "query", *asked, "--json")
    saved = tmp_path / "sweep.json"
    doc = cli_json(capsys, "sweep", *asked, "--grid-overfetch", "1,3", "--grid-blend", "0,0.5",
                   "--json", "--out", str(saved))
    assert doc["question"] == answer["question"]
    assert json.loads(saved.read_text(encoding="utf-8"))["question"] == doc["question"]
    assert [a["current"] for a in doc["axes"]] == [
        answer["params"]["stages"]["fetch"]["overfetch"],
        answer["params"]["stages"]["blend"]["weight"]]


def test_a_query_set_sweep_carries_its_base_question_without_a_query(capsys, demo_path,
                                                                      tmp_path: Path) -> None:
    qs = tmp_path / "set.json"
    qs.write_text(json.dumps({"format": "inspector-judgments", "version": 1,
                              "queries": [{"query": TEXT, "scope": "vault-agent",
                                           "judgments": ["vault-agent-0001"]}]}))
    doc = cli_json(capsys, "sweep", str(demo_path), "--preset", "docs-before-fix",
                   "--overfetch", "2", "--queries", str(qs), "--grid-overfetch", "1,2",
                   "--grid-blend", "0", "--json")
    q = Question.model_validate(doc["question"])
    assert (q.preset, q.text, q.set["fetch.overfetch"]) == ("docs-before-fix", None, 2.0)
    assert doc["queries"][0]["text"] == TEXT and doc["queries"][0]["scopes"] == ["vault-agent"]
