"""The fixed pipeline's question (issue 18 item 1): `inspector query` on a fixed preset builds
the question model (flow.question.Question) from its options, runs the parameters the question
gives, and its `--json` answer (and an export's answer.json) carries that question, which
asks the same again."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from inspector.cli.main import parser
from inspector.cli.options import fixed_question, params_from_args
from inspector.core.engine.flow.question import Question
from inspector.core.engine.inputs import question_params, question_query
from inspector.core.engine.pipeline import run
from inspector.core.stores.opening import open_store
from tests.clikit import cli_json

TEXT = "how do I rotate the signing keys for service tokens"
FIXED_FILE = Path(__file__).resolve().parents[2] / "resources" / "pipelines" / \
    "docs-before-fix.toml"
OPTIONS = [
    "--preset docs-before-fix --scope vault-agent",
    "--preset docs-before-fix --scope vault-agent --overfetch 2.5 --limit 7",
    "--preset importance-blend --blend 0.3 --min-score 0.1 --default-importance 0.5",
    "--mode hybrid --scope vault-agent --fts-k 30 --rrf-k 10 --filter pushdown",
    "--mode fts --limit 5",
    "--preset docs-pushdown --set fetch.cap=20 --scope vault-agent",
    f"--pipeline {FIXED_FILE} --set blend.weight=0.4",
    "--preset openclaw-search-defaults --nprobes 30 --refine-factor 2 --tie-rule id",
    "--scope vault --scope-strategy column --scope-column repo --cap 0",
]


def _args(store: Path, options: str, tmp: Path):
    argv = ["query", str(store), "--text", TEXT, *shlex.split(options)]
    return parser().parse_args(argv)


@pytest.mark.parametrize("options", OPTIONS)
def test_the_question_gives_the_options_parameters_through_its_json(demo_path, tmp_path,
                                                                    options) -> None:
    a = _args(demo_path, options, tmp_path)
    q = fixed_question(a)
    again = Question.model_validate_json(q.model_dump_json(by_alias=True))
    assert question_params(q) == question_params(again) == params_from_args(a)


def test_a_scope_map_file_is_held_inline(demo_path, tmp_path) -> None:
    smap = tmp_path / "map.json"
    smap.write_text(json.dumps({"team": ["vault", "docs"]}))
    a = _args(demo_path, f"--scope team --scope-strategy map --scope-map {smap}", tmp_path)
    q = fixed_question(a)
    assert q.params["scope_map"] == {"team": ["vault", "docs"]}
    smap.unlink()  # the question holds the map itself
    assert question_params(Question.model_validate(q.model_dump(by_alias=True))) \
        == params_from_args(_args(demo_path, "--scope team --scope-strategy map",
                                  tmp_path)).with_(scope_map=(("team", ("vault", "docs")),))


def test_the_fixed_answer_carries_the_question_it_answers(capsys, demo_path, tmp_path
                                                          ) -> None:
    out = cli_json(capsys, "query", str(demo_path), "--preset", "docs-before-fix", "--scope",
                   "vault-agent", "--overfetch", "2.5", "--text", TEXT, "--expect",
                   "vault-agent-0001", "--json")
    assert out["schema"] == 1
    q = Question.model_validate(out["question"])
    assert (q.preset, q.scopes, q.params, q.expect, q.text) == \
        ("docs-before-fix", ["vault-agent"], {"overfetch": 2.5}, ["vault-agent-0001"], TEXT)
    store = open_store(q.store)
    p = question_params(q)
    trace = run(store, question_query(store, q, p.mode), p)  # the question, asked again
    assert [c["id"] for c in out["stages"][-1]["candidates"]] == trace.ids("final")
    assert out["params"]["overfetch"] == 2.5
    export = tmp_path / "x"
    cli_json(capsys, "query", str(demo_path), "--preset", "docs-before-fix", "--scope",
             "vault-agent", "--overfetch", "2.5", "--text", TEXT, "--expect",
             "vault-agent-0001", "--json", "--export", str(export))
    assert json.loads((export / "answer.json").read_text("utf-8"))["question"] == \
        out["question"]
