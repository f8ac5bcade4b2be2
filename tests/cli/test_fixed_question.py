"""The question the classic options ask (issue 18 item 1, issue 30 item 1): `inspector query`
on a classic preset builds the question model from its options (each option the parameter of
the stage that holds it), and its `--json` answer (and an export's answer.json) carries that
question, which asks the same again. `cli.options.fixed_question`, the thin name `shot` and
the window's launch still call, is that question."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from inspector.cli.flow import question_from_args
from inspector.cli.main import parser
from inspector.cli.options import fixed_question, is_flow
from inspector.core.engine.flow.question import Question, answer, resolve
from inspector.core.stores.opening import open_store
from tests.clikit import cli_json

TEXT = "how do I rotate the signing keys for service tokens"
CLASSIC_FILE = Path(__file__).resolve().parents[2] / "resources" / "pipelines" / \
    "docs-before-fix.toml"
OPTIONS = {
    "--preset docs-before-fix --scope vault-agent": {},
    "--preset docs-before-fix --scope vault-agent --overfetch 2.5 --limit 7":
        {"fetch.overfetch": 2.5, "fetch.scoped_overfetch": ""},
    "--preset importance-blend --blend 0.3 --min-score 0.1 --default-importance 0.5":
        {"blend.weight": 0.3, "min_score.min": 0.1, "blend.default_importance": 0.5},
    "--mode hybrid --scope vault-agent --fts-k 30 --rrf-k 10 --filter pushdown":
        {"fetch.mode": "hybrid", "fetch.fts_k": 30, "fetch.rrf_k": 10,
         "scope_rule.pushdown": True},
    "--mode fts --limit 5": {"fetch.mode": "fts"},
    "--preset docs-pushdown --set fetch.cap=20 --scope vault-agent": {"fetch.cap": 20},
    f"--pipeline {CLASSIC_FILE} --set blend.weight=0.4": {"blend.weight": 0.4},
    "--preset openclaw-search-defaults --nprobes 30 --refine-factor 2 --tie-rule id":
        {"fetch.nprobes": 30, "fetch.refine_factor": 2, "tie_rule": "id"},
    "--scope vault --scope-strategy column --scope-column repo --cap 0":
        {"scope_rule.strategy": "column", "scope_rule.column": "repo", "fetch.cap": 0},
}


def _args(store: Path, options: str):
    return parser().parse_args(["query", str(store), "--text", TEXT, *shlex.split(options)])


@pytest.mark.parametrize("options", OPTIONS)
def test_each_option_sets_the_stage_parameter_that_holds_it(demo_path, options) -> None:
    a = _args(demo_path, options)
    q = fixed_question(a)
    assert q == question_from_args(a, need_query=False) and not is_flow(a)
    assert q.set == OPTIONS[options]
    again = Question.model_validate_json(q.model_dump_json(by_alias=True))
    assert resolve(again)[0] == resolve(q)[0]  # the JSON asks the same pipeline


def test_a_scope_map_file_is_held_inline(demo_path, tmp_path) -> None:
    smap = tmp_path / "map.json"
    smap.write_text(json.dumps({"team": ["vault", "docs"]}))
    q = fixed_question(_args(demo_path, f"--scope team --scope-strategy map --scope-map {smap}"))
    assert q.set["scope_rule.map"] == {"team": ["vault", "docs"]}
    smap.unlink()  # the question holds the map itself
    spec = resolve(Question.model_validate(q.model_dump(by_alias=True)))[0]
    assert spec.routes[0].stages[0].params["map"] == {"team": ["vault", "docs"]}


def test_a_pipeline_of_other_stages_is_flow_for_shot(demo_path) -> None:
    assert is_flow(_args(demo_path, "--preset memory-lancedb-pro"))
    assert not is_flow(_args(demo_path, ""))


def test_the_answer_carries_the_question_it_answers(capsys, demo_path, tmp_path) -> None:
    asked = ["query", str(demo_path), "--preset", "docs-before-fix", "--scope", "vault-agent",
             "--overfetch", "2.5", "--text", TEXT, "--expect", "vault-agent-0001", "--json"]
    out = cli_json(capsys, *asked)
    assert out["schema"] == 3
    q = Question.model_validate(out["question"])
    assert (q.preset, q.scopes, q.set["fetch.overfetch"], q.expect, q.text) == \
        ("docs-before-fix", ["vault-agent"], 2.5, ["vault-agent-0001"], TEXT)
    got = answer(q.model_copy(update={"now": out["params"]["now"]}),
                 open_store(str(demo_path)))  # the question, asked again
    assert [c["id"] for c in out["stages"][-1]["candidates"]] == got.trace.final.ids
    assert out["params"]["stages"]["fetch"]["overfetch"] == 2.5
    export = tmp_path / "x"
    cli_json(capsys, *asked, "--export", str(export))
    assert json.loads((export / "answer.json").read_text("utf-8"))["question"] == \
        out["question"]
