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
from tests.qt.qtkit import assert_matches_engine


def _key(widget, key: Qt.Key, mods=Qt.KeyboardModifier.NoModifier) -> None:
    QApplication.sendEvent(widget, QKeyEvent(QEvent.Type.KeyPress, key, mods))


@pytest.mark.parametrize(("key", "presses", "want"), [
    ("overfetch", [Qt.Key.Key_Right, Qt.Key.Key_Right], 2.0),
    ("overfetch", [Qt.Key.Key_PageUp], 3.0),
    ("overfetch", [Qt.Key.Key_End], 20.0),
    ("blend", [Qt.Key.Key_Right, Qt.Key.Key_PageUp], 0.3),
    ("blend", [Qt.Key.Key_End, Qt.Key.Key_Left], 0.95),
])
def test_a_focused_slider_takes_arrow_page_home_end_keys(window, key, presses, want) -> None:
    inner = window.sliders.sliders[key].findChild(QSlider)
    for k in presses:
        _key(inner, k)
    window.sliders.flush()
    assert getattr(window.vm.params, key) == pytest.approx(want)
    assert_matches_engine(window)
    _key(inner, Qt.Key.Key_Home)
    window.sliders.flush()
    assert getattr(window.vm.params, key) == window.sliders.sliders[key].minimum()


def test_a_mouse_drag_lands_on_round_values(window, qtbot) -> None:
    slider = window.sliders.sliders["blend"]
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
    w = window.vm.params.blend
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
    assert "/tmp/trace.json" not in window.vm.expected


def test_the_tour_applies_each_step_in_the_window(window, ready) -> None:
    tour = window.tour
    tour.start()
    ready(window.vm)
    assert window.vm.params.scope == "vault-agent" and window.vm.trace.counters["returned"] == 0
    for _ in range(2):
        tour.go(tour.step + 1)
        ready(window.vm)
    assert window.vm.params.overfetch == 2.5
    assert window.vm.trace.counters["returned"] > 0  # the story's fix, from the engine
    assert_matches_engine(window)
    while tour.step < len(TOUR) - 1:
        tour.go(tour.step + 1)
        ready(window.vm)
    final = window.vm.trace.stage("final").rows
    assert str(window.vm.trace.pool.ids[int(final[0])]) in window.vm.expected
    tour.go(1)  # back: the first story again, as its second step shows it
    ready(window.vm)
    assert window.vm.params.scope == "vault-agent" and window.vm.params.overfetch == 1.0
    for step in TOUR:  # one short sentence each
        assert len(re.findall(r"[.!?](\s|$)", step.sentence)) == 1


def test_shortcuts_list_every_bound_action(window) -> None:
    rows = dict(shortcut_rows(window))
    assert rows["Export trace as JSON…"] == "Ctrl+E"
    assert "Ctrl+T" in rows.values() and "Ctrl+R, F5" in rows.values()
    window.action("shortcuts").trigger()
    table = window.shortcuts_dialog.table
    assert table.rowCount() == len(rows)


def test_about_shows_the_version(window) -> None:
    window.action("about").trigger()
    assert inspector.__version__ in window.about_box.text()


def test_status_counts_read_as_english(window, ready) -> None:
    window.vm.load_suggested(1)
    ready(window.vm)
    window.vm.set_param("limit", 1)
    ready(window.vm)
    assert window.status_label.text().startswith("1 result ·")


def test_modified_mark_drops_a_slider_back_at_the_preset_value(window) -> None:
    from tests.qt.qtkit import move

    move(window, "overfetch", 3.0)
    assert "overfetch" in window.query_bar.modified.text()
    move(window, "overfetch", 1.0)  # docs-before-fix's own over-fetch
    assert "overfetch" not in window.query_bar.modified.text()


def test_gui_errors_name_controls_not_command_line_flags(window) -> None:
    window.vm.fail("This store does not record which embedder made its vectors; pass "
                   "--embedder NAME, or query with --vector or --vector-of ID instead.")
    shown = window.error_bar.label.text()
    assert "--" not in shown and "next to Run" in shown


def test_counters_and_leg_depths_explain_themselves(window) -> None:
    tip = window.funnel.toolTip()
    for counter in window.vm.trace.counters:
        assert f"{counter}:" in tip, counter
    d = window.vm.trace.depths  # the scoped miss is hybrid: both legs are named
    note_tip = window.stages.view("raw").note.toolTip()
    assert f"vector leg fetches {d.vec_k} rows" in note_tip
    assert f"full-text leg {d.fts_k}" in note_tip and f"cut to {d.pool}" in note_tip


def test_column_widths_are_remembered(window, qtbot, ready) -> None:
    from inspector.qt.window import MainWindow

    view = window.stages.view("final")
    col = view.model.columns.index("score")
    view.table.setColumnWidth(col, 97)
    window.close()  # saves
    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    again.vm.open_store(None)
    ready(again.vm)
    assert again.stages.view("final").table.columnWidth(col) == 97


def test_many_expected_rows_scroll(window, qtbot) -> None:
    window.vm.set_expected([f"no-such-row-{n}" for n in range(40)])
    qtbot.wait(50)
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
