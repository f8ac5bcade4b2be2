"""The window's saved settings keep the question model: one `question/json` key holding the
window's question (store URI without credentials); it comes back into the window's evented
question through Question.model_validate and `resolve`; a damaged or invalid value, or one
naming a pipeline or a parameter this inspector cannot run, is ignored (the defaults stay);
the old keys (a preset, given parameters, a compare flag) are dropped at the next save."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.engine.flow.question import Question
from inspector.qt import settings as cfg
from inspector.qt.question_model import WindowQuestion
from inspector.qt.window import SPLITTERS, MainWindow

SECRET = "hunter2-secret"
QUESTION = "question/json"  # the key the docs name (guide/the-window.md)
OLD_KEYS = ("params/preset", "params/given", "params/compare", "params/text",
            "question/compare")


def _saved_text(isolated: Path) -> str:
    cfg.settings().sync()
    return "".join(p.read_text() for p in Path(isolated).rglob("*") if p.is_file())


def _fresh(qtbot) -> MainWindow:
    """A window that restores the saved settings and writes none of its own."""
    win = MainWindow(restore=True, persist=False)
    qtbot.addWidget(win)
    return win


def _asked(q: Question) -> dict:
    return q.model_dump(exclude={"now"})


def test_the_window_saves_its_question_and_restores_it(window, qtbot, isolated) -> None:
    vm = window.vm
    vm.put(preset="importance-blend", set={"blend.weight": 0.42}, scopes=["vault-agent"])
    vm.jobs.wait_idle(60)
    s = cfg.settings()
    for key in OLD_KEYS:
        s.setValue(key, "old")
    cfg.save_window(window, SPLITTERS)
    assert not any(s.contains(k) for k in OLD_KEYS)
    q = Question.model_validate(json.loads(str(s.value(QUESTION))))
    assert _asked(q) == _asked(vm.question.plain())
    assert (q.preset, q.scopes, q.store) == ("importance-blend", ["vault-agent"],
                                             vm.store.uri)
    again = _fresh(qtbot)
    assert _asked(again.vm.question.plain()) == _asked(q)


def test_the_saved_question_holds_no_credentials(isolated) -> None:
    q = Question(store=f"s3://alice:{SECRET}@minio.local:9000/bucket/mem?sas={SECRET}",
                 preset="docs-pushdown", text="rotate keys", limit=6)
    cfg.save_question(q)
    text = _saved_text(isolated)
    assert "minio.local" in text and SECRET not in text and "alice" not in text
    back = cfg.load_question()
    assert back.model_copy(update={"store": q.store}) == q


@pytest.mark.parametrize("value", [
    "{not json", "[1, 2]", json.dumps({"store": 5}), json.dumps({"store": "", "bogus": 1}),
    json.dumps({"store": "", "preset": "no-such-preset"}),
    json.dumps({"store": "", "preset": "docs-pushdown", "set": {"fetch.nosuch": 3}}),
    json.dumps({"store": "", "preset": "docs-pushdown", "set": {"fetch.cap": -3}}),
    json.dumps({"store": "", "text": "x"}),
])
def test_a_damaged_or_invalid_saved_question_leaves_the_defaults(qtbot, isolated, value
                                                                 ) -> None:
    s = cfg.settings()
    s.setValue(QUESTION, value)
    win = _fresh(qtbot)
    assert _asked(win.vm.question.plain()) == _asked(WindowQuestion.fresh().plain())
    assert win.vm.spec() is not None


def test_a_valid_saved_question_is_restored(qtbot, isolated) -> None:
    q = Question(store="", preset="docs-pushdown", text="rotate keys", limit=6,
                 scopes=["vault-agent"], set={"fetch.overfetch": 3.0})
    cfg.settings().setValue(QUESTION, q.model_dump_json(by_alias=True))
    win = _fresh(qtbot)
    assert _asked(win.vm.question.plain()) == _asked(q)
    assert win.query_bar.preset.currentData() == "docs-pushdown"
    assert win.query_bar.text.text() == "rotate keys"
    assert win.question_bar.scopes.text() == "vault-agent"
