"""`inspector report` and `inspector sweep` on the fixed pipeline build the question model
from their options, as `inspector query` does (issue 18): the receipt holds the very question
`query --json` answers, the sweep's JSON the question it swept around, and the base parameters
of both are the question's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.core.engine.flow.question import Question
from inspector.core.engine.inputs import question_params
from inspector.core.engine.params import Params
from inspector.core.evidence import bundle
from tests.clikit import cli_json

TEXT = "how do I rotate the signing keys for service tokens"
OPTIONS = [
    ["--preset", "docs-before-fix", "--scope", "vault-agent", "--overfetch", "2.5"],
    ["--preset", "importance-blend", "--blend", "0.3", "--limit", "5"],
    ["--mode", "hybrid", "--scope", "vault-agent", "--fts-k", "30", "--cap", "0"],
    ["--preset", "docs-pushdown", "--set", "fetch.cap=20", "--scope", "vault-agent"],
]


@pytest.mark.parametrize("options", OPTIONS, ids=[" ".join(o[:2]) for o in OPTIONS])
def test_the_receipt_holds_the_question_query_answers(capsys, demo_path, tmp_path, options
                                                      ) -> None:
    asked = [str(demo_path), "--text", TEXT, *options]
    answer = cli_json(capsys, "query", *asked, "--json")
    out = tmp_path / "r"
    capsys.readouterr()
    assert main(["report", *asked, "--out", str(out), "--no-map", "--no-html",
                 "--grid-overfetch", "1,2", "--grid-blend", "0,1"]) == 0
    loaded = bundle.load(out.with_suffix(".json"))
    assert loaded.data["question"] == answer["question"]
    assert loaded.question == Question.model_validate(answer["question"])
    assert question_params(loaded.question) == loaded.params
    ran = loaded.params.to_json()
    assert {k: answer["params"][k] for k in ran} == ran  # what `query` ran


@pytest.mark.parametrize("options", OPTIONS, ids=[" ".join(o[:2]) for o in OPTIONS])
def test_the_sweep_carries_the_question_it_swept_around(capsys, demo_path, tmp_path, options
                                                        ) -> None:
    asked = [str(demo_path), "--text", TEXT, *options]
    answer = cli_json(capsys, "query", *asked, "--json")
    saved = tmp_path / "sweep.json"
    doc = cli_json(capsys, "sweep", *asked, "--grid-overfetch", "1,3", "--grid-blend", "0,0.5",
                   "--json", "--out", str(saved))
    assert doc["question"] == answer["question"]
    q = Question.model_validate(doc["question"])
    assert question_params(q) == Params.from_json(doc["base"])
    assert json.loads(saved.read_text(encoding="utf-8"))["question"] == doc["question"]


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
    assert (q.preset, q.text, q.params) == ("docs-before-fix", None, {"overfetch": 2.0})
    assert question_params(q) == Params.from_json(doc["base"])
