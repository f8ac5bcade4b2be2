"""The window's saved settings keep the question model (issue 18): one `question/json` key
holding what the window asks (store URI without credentials), the compare flag beside it as
window state; it comes back through Question.model_validate, a damaged or invalid value is
ignored (the defaults stay), and the settings of the old form are read once and then go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.engine.flow.question import Question
from inspector.core.engine.inputs import build_params, question_params
from inspector.qt import settings as cfg
from inspector.qt.window import SPLITTERS, MainWindow

SECRET = "hunter2-secret"
QUESTION = "question/json"  # the key the docs name (guide/the-window.md)
OLD_KEYS = ("params/preset", "params/given", "params/compare", "params/text")
DEFAULTS = ("docs-before-fix", {"limit": 10})


def _saved_text(isolated: Path) -> str:
    cfg.settings().sync()
    return "".join(p.read_text() for p in Path(isolated).rglob("*") if p.is_file())


def _fresh(qtbot) -> MainWindow:
    """A window that restores the saved settings and writes none of its own."""
    win = MainWindow(restore=True, persist=False)
    qtbot.addWidget(win)
    return win


def test_the_window_saves_its_question_and_restores_it(window, qtbot, isolated) -> None:
    vm = window.vm
    vm.set_preset("importance-blend")
    vm.set_params({"blend": 0.42, "scope": "vault-agent", "scope_strategy": "map",
                   "scope_map": (("vault-agent", ("vault", "agent")),)})
    vm.set_compare(True)
    cfg.save_window(window, SPLITTERS)
    s = cfg.settings()
    assert not any(s.contains(k) for k in OLD_KEYS)
    q = Question.model_validate(json.loads(str(s.value(QUESTION))))
    assert q == vm.to_question()
    assert (q.preset, q.text, q.scopes, q.store) == ("importance-blend", vm.text or None,
                                                     ["vault-agent"], vm.store.uri)
    assert q.params["scope_map"] == {"vault-agent": ["vault", "agent"]}
    assert question_params(q) == vm.params
    again = _fresh(qtbot)
    assert (again.vm.preset, again.vm.params, again.vm.compare, again.vm.text) == \
        (vm.preset, vm.params, True, vm.text)


def test_the_saved_question_holds_no_credentials(isolated) -> None:
    q = Question(store=f"s3://alice:{SECRET}@minio.local:9000/bucket/mem?sas={SECRET}",
                 preset="docs-pushdown", text="rotate keys", limit=6)
    cfg.save_question(q, False)
    text = _saved_text(isolated)
    assert "minio.local" in text and SECRET not in text and "alice" not in text
    back, compare = cfg.load_question()
    assert back.model_copy(update={"store": q.store}) == q and compare is False


def test_settings_of_the_old_form_restore_once(qtbot, isolated) -> None:
    s = cfg.settings()
    s.setValue("params/preset", "importance-blend")
    s.setValue("params/given", json.dumps({"limit": 7, "blend": 0.42, "scope": "team",
                                           "scope_strategy": "map",
                                           "scope_map": [["team", ["vault", "docs"]]]}))
    s.setValue("params/compare", True)
    s.setValue("params/text", "which editor theme does the user prefer")
    win = _fresh(qtbot)
    want = build_params(preset="importance-blend", limit=7, blend=0.42, scope="team",
                        scope_strategy="map", scope_map=(("team", ("vault", "docs")),))
    assert (win.vm.preset, win.vm.params, win.vm.compare, win.vm.text) == \
        ("importance-blend", want, True, "which editor theme does the user prefer")
    cfg.save_window(win, SPLITTERS)
    assert not any(s.contains(k) for k in OLD_KEYS) and s.contains(QUESTION)
    again = _fresh(qtbot)
    assert (again.vm.params, again.vm.compare, again.vm.text) == \
        (want, True, "which editor theme does the user prefer")


@pytest.mark.parametrize("value", [
    "{not json", "[1, 2]", json.dumps({"store": 5}), json.dumps({"store": "", "bogus": 1}),
    json.dumps({"store": "", "preset": "no-such-preset"}),
    json.dumps({"store": "", "preset": "docs-pushdown", "scopes": ["a", "b"]}),
    json.dumps({"store": "", "preset": "docs-pushdown", "set": {"fetch.cap": 3}}),
    json.dumps({"store": "", "preset": "docs-pushdown", "params": {"bogus": 1}}),
    json.dumps({"store": "", "params": {"limit": "x"}}),
    json.dumps({"store": "", "params": {"scope_map": 5}}),
])
def test_a_damaged_or_invalid_saved_question_leaves_the_defaults(qtbot, isolated, value
                                                                 ) -> None:
    s = cfg.settings()
    s.setValue(QUESTION, value)
    s.setValue("params/preset", "importance-blend")  # older keys never mix with a newer one
    s.setValue("params/given", json.dumps({"limit": 7}))
    win = _fresh(qtbot)
    assert (win.vm.preset, win.vm.given) == DEFAULTS
    assert win.vm.params == build_params(preset=DEFAULTS[0], **DEFAULTS[1])


def test_a_valid_saved_question_is_restored(qtbot, isolated) -> None:
    q = Question(store="", preset="docs-pushdown", text="rotate keys", limit=6,
                 scopes=["vault-agent"], params={"overfetch": 3.0})
    s = cfg.settings()
    s.setValue(QUESTION, q.model_dump_json(by_alias=True))
    s.setValue("question/compare", True)
    win = _fresh(qtbot)
    assert (win.vm.preset, win.vm.compare, win.vm.text) == ("docs-pushdown", True,
                                                            "rotate keys")
    assert win.vm.params == question_params(q)
