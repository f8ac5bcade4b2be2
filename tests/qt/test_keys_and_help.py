"""Keyboard, focus and the Help menu: sliders step and snap, window shortcuts fire from a
focused text field, the tour applies each step in the real window, About shows the version."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QScrollArea, QSlider

import inspector
from inspector.qt.help_menu import TOUR, shortcut_rows
from tests.qt.qtkit import assert_shows, engine_json


def _key(widget, key: Qt.Key, mods=Qt.KeyboardModifier.NoModifier) -> None:
    QApplication.sendEvent(widget, QKeyEvent(QEvent.Type.KeyPress, key, mods))


@pytest.mark.parametrize(("key", "presses", "want"), [
    ("fetch.overfetch", [Qt.Key.Key_Right, Qt.Key.Key_Right], 1.2),  # its declared step 0.1
    ("fetch.overfetch", [Qt.Key.Key_PageUp], 2.0),
    ("fetch.overfetch", [Qt.Key.Key_End], 10.0),
    ("blend.weight", [Qt.Key.Key_Right, Qt.Key.Key_PageUp], 0.55),  # step 0.05
    ("blend.weight", [Qt.Key.Key_End, Qt.Key.Key_Left], 0.95),
])
def test_a_focused_slider_takes_arrow_page_home_end_keys(window, key, presses, want) -> None:
    vm = window.vm
    inner = window.sliders.sliders[key].findChild(QSlider)
    for k in presses:
        _key(inner, k)
    window.sliders.flush()
    vm.jobs.wait_idle(60)
    assert vm.question.set[key] == pytest.approx(want)
    assert_shows(window, engine_json(window))
    _key(inner, Qt.Key.Key_Home)
    window.sliders.flush()
    vm.jobs.wait_idle(60)
    low = window.sliders.sliders[key].minimum()
    assert vm.current(key) == pytest.approx(low)


def test_a_mouse_drag_lands_on_round_values(window, qtbot) -> None:
    slider = window.sliders.sliders["blend.weight"]
    inner = slider.findChild(QSlider)
    y = inner.height() / 2
    end = inner.width() * 0.513
    for kind, x in ((QEvent.Type.MouseButtonPress, 2), (QEvent.Type.MouseMove, end),
                    (QEvent.Type.MouseButtonRelease, end)):
        QApplication.sendEvent(inner, QMouseEvent(kind, QPointF(x, y), QPointF(x, y),
                                                  Qt.MouseButton.LeftButton,
                                                  Qt.MouseButton.LeftButton,
                                                  Qt.KeyboardModifier.NoModifier))
    window.sliders.flush()
    window.vm.jobs.wait_idle(60)
    w = window.vm.question.set["blend.weight"]
    assert 0.3 < w < 0.7
    assert round(w / 0.05, 6) == round(w / 0.05), f"drag landed on {w}"


def test_ctrl_e_from_a_focused_field_exports_instead_of_typing(window, qtbot, monkeypatch) -> None:
    asked = []
    monkeypatch.setattr(window, "choose_json", lambda: asked.append("export"))
    window.action("export_json").triggered.disconnect()
    window.action("export_json").triggered.connect(window.choose_json)
    entry = window.expected.entry
    window.activateWindow()
    entry.setFocus()
    qtbot.waitUntil(entry.hasFocus, timeout=10_000)
    entry.setText("/tmp/trace.json")
    qtbot.keyClick(entry, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert asked == ["export"]
    assert entry.text() == "/tmp/trace.json"
    assert "/tmp/trace.json" not in window.vm.question.expect


def test_the_tour_applies_each_step_in_the_window(window, ready) -> None:
    tour, vm = window.tour, window.vm
    tour.start()
    vm.jobs.wait_idle(60)
    assert vm.question.scopes == ["vault-agent"] and not vm.trace.final.rows
    for _ in range(2):
        tour.go(tour.step + 1)
        vm.jobs.wait_idle(60)
    assert vm.question.set == {"fetch.overfetch": 2.5}
    assert vm.trace.final.rows  # the story's fix, from the engine
    assert_shows(window, engine_json(window))
    while tour.step < len(TOUR) - 1:
        tour.go(tour.step + 1)
        vm.jobs.wait_idle(60)
    assert vm.trace.final.ids[0] in vm.question.expect
    tour.go(1)  # back: the first story again, as its second step shows it
    vm.jobs.wait_idle(60)
    assert vm.question.scopes == ["vault-agent"] and vm.question.set == {}
    for step in TOUR:  # one short sentence each
        assert len(re.findall(r"[.!?](\s|$)", step.sentence)) == 1


def test_shortcuts_list_every_bound_action(window) -> None:
    rows = dict(shortcut_rows(window))
    assert rows["Export answer as JSON…"] == "Ctrl+E"
    assert "Ctrl+T" in rows.values() and "Ctrl+R, F5" in rows.values()
    window.action("shortcuts").trigger()
    table = window.shortcuts_dialog.table
    assert table.rowCount() == len(rows)


def test_about_shows_the_version(window) -> None:
    window.action("about").trigger()
    assert inspector.__version__ in window.about_box.text()
    window.about_box.close()  # a box left open keeps the window's shortcuts from firing


def test_status_counts_read_as_english(window, ready) -> None:
    window.vm.load_suggested(1)
    window.vm.jobs.wait_idle(60)
    window.vm.put(limit=1)
    window.vm.jobs.wait_idle(60)
    assert window.status_label.text().startswith("1 result ·")


def test_modified_mark_drops_a_slider_back_at_the_preset_value(window) -> None:
    from tests.qt.qtkit import move

    move(window, "fetch.overfetch", 3.0)
    assert "fetch.overfetch" in window.query_bar.modified.text()
    move(window, "fetch.overfetch", 1.0)  # docs-before-fix's own over-fetch
    assert "fetch.overfetch" not in window.query_bar.modified.text()
    assert "fetch.overfetch" not in window.vm.question.set


def test_gui_errors_name_controls_not_command_line_flags(window) -> None:
    window.vm.fail("This store does not record which embedder made its vectors; pass "
                   "--embedder NAME, or query with --vector or --vector-of ID instead.")
    shown = window.error_bar.label.text()
    assert "--" not in shown and "next to Run" in shown


def test_counters_explain_themselves_with_the_engines_facts(window) -> None:
    tip = window.funnel.toolTip()
    for counter in ("rawCandidates", "scopedCandidates", "filteredByScope"):
        assert counter in tip, counter
    t = window.vm.trace  # the scoped miss: the scope stage's facts, as the engine counted
    rows = {name: (n, removed, facts) for name, n, removed, facts in window.funnel.rows}
    f = t.stage("scope").facts
    assert rows["scope"] == (0, 10, f"rawCandidates {f['rawCandidates']} · scopedCandidates "
                                    f"{f['scopedCandidates']} · filteredByScope "
                                    f"{f['filteredByScope']}")


def test_many_expected_rows_scroll(window, qtbot) -> None:
    window.vm.set_expected([f"no-such-row-{n}" for n in range(40)])
    window.vm.jobs.wait_idle(120)
    scroll = window.expected.findChild(QScrollArea, "expectScroll")
    assert scroll.verticalScrollBar().maximum() > 0
    assert scroll.height() < window.expected.body.height()


def test_the_title_names_the_store_once_and_the_app_through_qt(window) -> None:
    title = window.windowTitle()
    assert title.startswith("demo store (")
    assert "inspector" not in title.lower()
    assert QApplication.applicationDisplayName() == "Memory-store inspector"


def test_a_key_a_text_field_claims_still_reaches_a_window_shortcut(window, qtbot) -> None:
    from PySide6.QtGui import QAction, QKeySequence

    fired = []
    act = QAction("jump", window)
    act.setShortcut(QKeySequence("Home"))  # a line edit claims Home (start of line) for itself
    act.triggered.connect(lambda: fired.append(True))
    window.addAction(act)
    entry = window.expected.entry
    window.activateWindow()
    entry.setFocus()
    qtbot.waitUntil(entry.hasFocus, timeout=10_000)
    entry.setText("abc")
    qtbot.keyClick(entry, Qt.Key.Key_Home)
    assert fired == [True]
    assert entry.cursorPosition() == 3
