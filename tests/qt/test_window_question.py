"""The window's state as the question model and back (issue 18: one object holds what is
asked): the question the window asks gives exactly the window's parameters, a question put
into a window asks itself again, and `inspector shot` puts into the window the very question
`inspector query` answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from inspector.core.engine.flow.question import Question
from inspector.core.engine.inputs import question_params
from inspector.qt.live_jobs import put_question, window_question
from inspector.qt.viewmodel import Inspector
from inspector.qt.window import MainWindow

TEXT = "how do I rotate the signing keys for service tokens"
STATES: list[tuple[str | None, dict[str, Any]]] = [
    ("docs-before-fix", {"limit": 10}),
    ("docs-before-fix", {"limit": 7, "scope": "vault-agent", "overfetch": 2.5}),
    ("importance-blend", {"limit": 5, "blend": 0.42, "min_score": 0.1}),
    ("docs-pushdown", {"limit": 10, "scope": "team", "scope_strategy": "map",
                       "scope_map": (("team", ("vault", "docs")),)}),
    (None, {"mode": "hybrid", "limit": 6, "fts_k": 30, "rrf_k": 10, "filter": "pushdown"}),
    (None, {"mode": "vector", "limit": 3, "nprobes": 20, "refine_factor": 2, "exact": False}),
]


@pytest.mark.parametrize(("preset", "given"), STATES, ids=[str(s) for s in range(len(STATES))])
def test_the_window_question_gives_the_window_parameters(qapp, preset, given) -> None:
    vm = Inspector()
    vm.restore(preset, given, False)
    vm.text, vm.expected = TEXT, ["vault-agent-0001"]
    q = vm.to_question()
    again = Question.model_validate_json(q.model_dump_json(by_alias=True))
    assert question_params(q) == question_params(again) == vm.params
    assert (q.preset, q.text, q.expect) == (preset, TEXT, ["vault-agent-0001"])
    other = Inspector()
    put_question(other, again)
    assert (other.preset, other.params, other.text, other.expected) == \
        (vm.preset, vm.params, vm.text, vm.expected)
    assert window_question(other) == q


def test_a_vector_typed_as_the_query_is_the_question_vector(qapp) -> None:
    vm = Inspector()
    vm.text = " [0.5, -1.25, 2] "
    q = vm.to_question()
    assert (q.text, q.vector) == (None, [0.5, -1.25, 2.0])
    other = Inspector()
    put_question(other, q)
    assert json.loads(other.text) == [0.5, -1.25, 2.0] and other.vector is None
    vm.text, vm.vector = "rotate keys", (0.5, 1.0)  # a hybrid's given vector beside the text
    q = vm.to_question()
    put_question(other, q)
    assert (q.text, q.vector, other.text, other.vector) == \
        ("rotate keys", [0.5, 1.0], "rotate keys", (0.5, 1.0))
    vm.text, vm.vector = "[1, oops", None  # not a vector: asked as typed
    assert vm.to_question().text == "[1, oops"


OPTIONS = [
    ["--preset", "docs-before-fix", "--scope", "vault-agent", "--overfetch", "2.5",
     "--expect", "vault-agent-0001"],
    ["--preset", "importance-blend", "--blend", "0.3", "--limit", "5"],
    ["--mode", "hybrid", "--scope", "vault-agent", "--fts-k", "30", "--filter", "pushdown"],
    ["--preset", "docs-pushdown", "--set", "fetch.cap=20", "--scope", "vault-agent"],
]


@pytest.mark.parametrize("options", OPTIONS, ids=[" ".join(o[:2]) for o in OPTIONS])
def test_shot_puts_into_the_window_the_question_query_answers(
        demo_path: Path, tmp_path: Path, monkeypatch, isolated, capsys, options) -> None:
    argv = [str(demo_path), "--text", TEXT, *options]
    capsys.readouterr()
    assert main(["query", *argv, "--json"]) == 0
    answered = Question.model_validate(json.loads(capsys.readouterr().out)["question"])
    seen: list[Question] = []
    real = MainWindow.export_png

    def spy(self: MainWindow, path: str) -> None:
        seen.append(self.vm.to_question())
        real(self, path)

    monkeypatch.setattr(MainWindow, "export_png", spy)
    assert main(["shot", *argv, "--size", "1000x700", "--out", str(tmp_path / "s.png")]) == 0
    (asked,) = seen
    assert question_params(asked) == question_params(answered)
    assert (asked.store, asked.text, asked.vector, asked.vector_of, asked.expect) == \
        (answered.store, answered.text, answered.vector, answered.vector_of, answered.expect)
    if not answered.set:  # --set compiles into the window's custom parameters
        assert (asked.preset, asked.scopes, asked.limit, asked.params) == \
            (answered.preset, answered.scopes, answered.limit, answered.params)
