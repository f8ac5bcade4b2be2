"""A held arrow key's next answer is made while the window idles between its ticks: the value
the next key sets is the one answered ahead, that tick runs nothing again and shows the
engine's answer, and nothing is answered ahead for another question, a slow re-rank or a
search."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QSlider

from inspector.core.engine.flow.runs import Runs
from inspector.qt.viewmodel import INLINE_MS
from tests.qt.qtkit import assert_shows, engine_json


def _press(window: Any, key: str, arrow: Qt.Key) -> None:
    inner = window.sliders.sliders[key].findChild(QSlider)
    QApplication.sendEvent(inner, QKeyEvent(QEvent.Type.KeyPress, arrow,
                                            Qt.KeyboardModifier.NoModifier))
    window.sliders.flush()
    window.vm.jobs.wait_idle(60)


def _rested(window: Any, qtbot: Any) -> None:
    """The answer asked ahead (if any) is made."""
    qtbot.waitUntil(lambda: not window.vm._ahead_timer.isActive(), timeout=10_000)
    window.vm.jobs.wait_idle(60)


@pytest.fixture
def made(monkeypatch, window) -> list[dict[str, Any]]:
    """The sets of every pipeline run the window's live session makes (not remembered ones;
    the diagnosis's own runs, after a rest, are not the session's)."""
    out: list[dict[str, Any]] = []
    real = Runs._run

    def counted(self: Runs, change: Any) -> Any:
        live = window.vm.live
        if live is not None and self is live.runs:
            out.append(dict(change.sets))
        return real(self, change)

    monkeypatch.setattr(Runs, "_run", counted)
    return out


@pytest.fixture
def quick(monkeypatch) -> None:
    """Any re-rank counts as quick (a loaded machine's may take longer than INLINE_MS): the
    rule itself is tested below with the session's times set."""
    from inspector.qt import viewmodel

    monkeypatch.setattr(viewmodel, "INLINE_MS", 1e9)


def _slider(window: Any, key: str) -> None:
    sl = window.sliders
    if key not in sl.sliders:
        sl.chosen.append(key)
        sl.set_params(sl.params, sl.chosen, window.vm.current)


@pytest.mark.parametrize(("key", "arrow"), [
    ("blend.weight", Qt.Key.Key_Right),
    ("blend.weight", Qt.Key.Key_Left),
    ("fetch.overfetch", Qt.Key.Key_Right),
    ("min_score.min", Qt.Key.Key_Right),
    ("fetch.cap", Qt.Key.Key_Left),  # a whole number
])
def test_the_next_arrow_keys_answer_is_made_before_it_is_pressed(window, qtbot, made, quick,
                                                                 key, arrow) -> None:
    _slider(window, key)
    vm = window.vm
    if arrow == Qt.Key.Key_Left:  # room to move down
        _press(window, key, Qt.Key.Key_PageUp)
    expected: list[tuple[str, float]] = []
    window.sliders.next_expected.connect(lambda k, v: expected.append((k, v)))
    _press(window, key, arrow)
    _rested(window, qtbot)
    assert expected, "nothing was asked ahead"
    ahead = expected[-1]
    assert ahead[0] == key
    asked_ahead = [s for s in made if s.get(key) == ahead[1]]
    assert len(asked_ahead) == 1, f"{ahead} was not answered ahead: {made}"
    before = len(made)
    _press(window, key, arrow)
    assert vm.question.set.get(key, vm.own(key)) == ahead[1]  # the value the key set
    assert [s for s in made[before:] if s.get(key) == ahead[1]] == [], \
        "the tick ran its answer again"
    assert_shows(window, engine_json(window))


def test_a_key_that_turns_back_is_answered_ahead_the_other_way(window, qtbot, quick) -> None:
    expected: list[float] = []
    _press(window, "blend.weight", Qt.Key.Key_PageUp)  # 0.5: room both ways
    window.sliders.next_expected.connect(lambda _k, v: expected.append(v))
    _press(window, "blend.weight", Qt.Key.Key_Right)
    _press(window, "blend.weight", Qt.Key.Key_Left)
    assert expected == [0.6, 0.45]
    _rested(window, qtbot)
    _press(window, "blend.weight", Qt.Key.Key_Left)
    assert window.vm.current("blend.weight") == 0.45
    _press(window, "blend.weight", Qt.Key.Key_Home)  # at its end: nothing past it
    _press(window, "blend.weight", Qt.Key.Key_Left)
    assert expected[-1] == 0.4 and window.vm.current("blend.weight") == 0.0


def test_nothing_is_answered_ahead_for_another_question(window, qtbot, monkeypatch) -> None:
    from inspector.qt import viewmodel

    vm = window.vm
    _press(window, "blend.weight", Qt.Key.Key_Right)
    _rested(window, qtbot)
    asked: list[Any] = []  # every re-rank from the cached fetches, of any session
    real = viewmodel.quick_rerank
    monkeypatch.setattr(viewmodel, "quick_rerank",
                        lambda live, sets: asked.append(dict(sets)) or real(live, sets))
    vm.answer_ahead("blend.weight", 0.8)
    vm.put(text="an entirely different question about editors")  # a new search, a new session
    vm.jobs.wait_idle(60)
    vm._rerank_ms, vm._rerank_in_job = 1.0, False  # the new session's re-ranks are quick
    vm._ahead_timer.start()  # the old one, still pending, falls due
    _rested(window, qtbot)
    assert [s for s in asked if s.get("blend.weight") == 0.8] == []


def test_nothing_is_answered_ahead_where_a_re_rank_is_slow(window, qtbot, made) -> None:
    vm = window.vm
    _press(window, "blend.weight", Qt.Key.Key_Right)
    _rested(window, qtbot)
    # the session's re-ranks take longer than a tick may
    vm._rerank_ms, vm._rerank_in_job = INLINE_MS + 1, False
    before = len(made)
    vm.answer_ahead("blend.weight", 0.85)
    _rested(window, qtbot)
    assert made[before:] == []
    vm._rerank_ms = 1.0
    vm.answer_ahead("blend.weight", 0.85)
    _rested(window, qtbot)
    assert [s.get("blend.weight") for s in made[before:]] == [0.85]  # and answered once quick


def test_a_slow_answer_made_ahead_lets_the_next_tick_time_itself(window, qtbot, made,
                                                                 monkeypatch) -> None:
    """An answer made ahead that took longer than a tick may: the next one is not made ahead
    (that tick re-ranks and is timed), and answering ahead goes on once re-ranks are quick."""
    from inspector.qt import viewmodel

    vm = window.vm
    _press(window, "blend.weight", Qt.Key.Key_PageUp)
    _rested(window, qtbot)
    real = viewmodel.timed_rerank
    slow = {"on": True}
    monkeypatch.setattr(viewmodel, "timed_rerank", lambda live, sets: (
        real(live, sets)[0], INLINE_MS + 1 if slow["on"] else 1.0))
    vm._rerank_ms, vm._rerank_in_job = 1.0, False  # the ticks' own re-ranks are quick
    before = len(made)
    vm.answer_ahead("blend.weight", 0.8)  # made, and timed slow
    _rested(window, qtbot)
    vm.answer_ahead("blend.weight", 0.85)  # not made: the last one ahead was slow
    _rested(window, qtbot)
    slow["on"] = False
    vm.answer_ahead("blend.weight", 0.9)  # made: the slow one was said once
    _rested(window, qtbot)
    assert [s.get("blend.weight") for s in made[before:]] == [0.8, 0.9]


def test_a_value_set_elsewhere_is_where_the_next_key_moves_from(window, qtbot) -> None:
    """A fix applied (or a value typed) moves the slider without a key: the next key's
    direction is from there, not from the slider's last key."""
    vm = window.vm
    expected: list[float] = []
    _press(window, "blend.weight", Qt.Key.Key_Right)  # 0.05
    window.sliders.next_expected.connect(lambda _k, v: expected.append(v))
    vm.set_param("blend.weight", 0.8)  # not by the slider
    vm.jobs.wait_idle(60)
    assert window.sliders.sliders["blend.weight"].value() == pytest.approx(0.8)
    _press(window, "blend.weight", Qt.Key.Key_Left)
    assert vm.current("blend.weight") == 0.75 and expected == [0.7]


def test_a_next_answer_asked_while_a_job_answers_is_made_once_it_has(window, qtbot, made,
                                                                    monkeypatch) -> None:
    """A session's first tick is answered by a job: the next key's answer, asked meanwhile,
    is made once that job has answered, not dropped."""
    import time

    from inspector.qt import viewmodel

    real = viewmodel.timed_rerank

    def slow(live: Any, sets: dict[str, Any]) -> Any:
        time.sleep(0.2)  # in the job's thread: still running when the ahead is due
        return real(live, sets)[0], 1.0

    monkeypatch.setattr(viewmodel, "timed_rerank", slow)
    vm = window.vm
    vm.ask()  # a new session: its first re-rank is timed in a job
    vm.jobs.wait_idle(60)
    expected: list[float] = []
    window.sliders.next_expected.connect(lambda _k, v: expected.append(v))
    _press(window, "blend.weight", Qt.Key.Key_Right)
    _rested(window, qtbot)
    assert expected and [s for s in made if s.get("blend.weight") == expected[-1]]
