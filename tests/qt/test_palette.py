"""The command palette, by keyboard only: one shortcut opens it on every action of the window
with its shortcut, typing filters, arrows choose, Enter runs the action, Esc closes."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


def _open(window: Any, qtbot: Any, keys: tuple[Qt.Key, Any]) -> Any:
    window.activateWindow()
    window.query_bar.text.setFocus()
    QApplication.processEvents()
    QTest.keyClick(QApplication.focusWidget(), *keys)
    palette = window.command_palette
    qtbot.waitUntil(palette.isVisible, timeout=10_000)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is palette.field, timeout=10_000)
    return palette


@pytest.mark.parametrize("keys", [(Qt.Key.Key_P, CTRL | SHIFT), (Qt.Key.Key_K, CTRL)],
                         ids=["ctrl-shift-p", "ctrl-k"])
def test_a_shortcut_opens_the_palette_on_every_action_with_its_keys(window, qtbot, keys) -> None:
    palette = _open(window, qtbot, keys)
    rows = {palette.list.topLevelItem(i).text(0): palette.list.topLevelItem(i).text(1)
            for i in range(palette.list.topLevelItemCount())}
    assert rows["File › Export answer as JSON…"] == "Ctrl+E"
    assert rows["Query › Run again"] == "Ctrl+R, F5"
    assert rows["Tuning › Tuning panel"] == "Ctrl+T"
    assert rows["View › Go to stage › Stage 2"] == "Alt+2"
    assert rows["View › Theme › Dark"] == ""  # an action with no shortcut is there by name
    # every action of the window's menus is listed once, submenus by their path
    in_menus = [a for a in window.menuBar().findChildren(QAction) if a.text()]
    assert len(rows) == palette.list.topLevelItemCount()
    assert any(k.startswith("Help › Keyboard shortcuts") for k in rows)
    assert len(rows) >= 20 and in_menus
    QTest.keyClick(palette.field, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not palette.isVisible(), timeout=10_000)


def test_typing_filters_and_enter_runs_the_first_match(window, qtbot) -> None:
    palette = _open(window, qtbot, (Qt.Key.Key_K, CTRL))
    QTest.keyClicks(palette.field, "stage 3")
    assert palette.shown() == ["View › Go to stage › Stage 3"]
    QTest.keyClick(palette.field, Qt.Key.Key_Return)
    third = window.stages.visible_sections()[2].table
    qtbot.waitUntil(lambda: QApplication.focusWidget() is third, timeout=10_000)
    assert not palette.isVisible()


def test_arrows_choose_among_the_matches(window, qtbot) -> None:
    palette = _open(window, qtbot, (Qt.Key.Key_P, CTRL | SHIFT))
    QTest.keyClicks(palette.field, "go to stage")
    assert palette.shown()[:4] == [f"View › Go to stage › Stage {n}" for n in (1, 2, 3, 4)]
    QTest.keyClick(palette.field, Qt.Key.Key_Down)
    QTest.keyClick(palette.field, Qt.Key.Key_Down)
    QTest.keyClick(palette.field, Qt.Key.Key_Down)
    QTest.keyClick(palette.field, Qt.Key.Key_Up)
    QTest.keyClick(palette.field, Qt.Key.Key_Enter)
    third = window.stages.visible_sections()[2].table
    qtbot.waitUntil(lambda: QApplication.focusWidget() is third, timeout=10_000)


def test_esc_closes_without_running_anything(window, qtbot) -> None:
    ran: list[bool] = []
    act = QAction("Palette probe", window)
    act.triggered.connect(lambda: ran.append(True))
    window.add_action("view", act, "palette_probe")
    try:
        palette = _open(window, qtbot, (Qt.Key.Key_K, CTRL))
        QTest.keyClicks(palette.field, "probe")
        assert palette.shown() == ["View › Palette probe"]  # a new action is there by itself
        QTest.keyClick(palette.field, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda: not palette.isVisible(), timeout=10_000)
        QApplication.processEvents()
        assert ran == []
        palette = _open(window, qtbot, (Qt.Key.Key_K, CTRL))
        assert palette.field.text() == ""  # opened afresh
        QTest.keyClicks(palette.field, "palette probe")
        QTest.keyClick(palette.field, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: ran == [True], timeout=10_000)
    finally:
        window.menu("view").removeAction(act)
        window.removeAction(act)


def test_an_action_unavailable_now_is_listed_but_not_run(window, qtbot) -> None:
    ran: list[bool] = []
    act = QAction("Palette disabled probe", window)
    act.triggered.connect(lambda: ran.append(True))
    act.setEnabled(False)
    window.add_action("view", act, "palette_disabled_probe")
    try:
        palette = _open(window, qtbot, (Qt.Key.Key_K, CTRL))
        QTest.keyClicks(palette.field, "disabled probe")
        assert palette.shown() == ["View › Palette disabled probe"]
        QTest.keyClick(palette.field, Qt.Key.Key_Return)
        QApplication.processEvents()
        assert ran == [] and palette.isVisible()
        QTest.keyClick(palette.field, Qt.Key.Key_Escape)
    finally:
        window.menu("view").removeAction(act)
        window.removeAction(act)
