"""What a machine can see in the rendered window: the gallery's named states at a laptop and a
desktop size, checked for axis scale, widgets inside the window, plot sizes and scope verdicts
shown in full (inspector/qt/visual_checks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.qt import gallery
from inspector.qt.visual_checks import axis_problems, problems, tick_labels
from tests.qt.qtkit import move


def _scores_on_screen(win) -> tuple[float, float]:
    trace = win.vm.trace
    raw = trace.stage("raw").rows
    return float(trace.base[raw].min()), float(trace.base[raw].max())


@pytest.mark.parametrize("theme", ["dark", "light", "system"])
def test_score_axis_labels_scores_at_their_own_scale_after_a_theme_change(window, qtbot,
                                                                          theme) -> None:
    lo, hi = _scores_on_screen(window)  # the scoped miss: fused scores near 0.03
    window.apply_theme(theme)
    qtbot.wait(50)
    axis = window.scatter.getPlotItem().getAxis("left")
    assert axis_problems("score axis", axis, (lo, hi)) == []
    values = [float(t) for t in tick_labels(axis)]
    assert values and max(values) < 2 * hi, "tick labels are scaled (0.03 shown as 30?)"


def test_axis_scale_survives_a_restart_with_a_saved_theme(window, qtbot, ready) -> None:
    from inspector.qt.window import MainWindow

    window.apply_theme("dark")
    window.close()  # saves the theme
    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    again.vm.open_store(None)
    ready(again.vm)
    move(again, "blend", 0.5)
    lo, hi = _scores_on_screen(again)
    assert axis_problems("score axis", again.scatter.getPlotItem().getAxis("left"),
                         (lo, hi)) == []


@pytest.mark.parametrize("size", gallery.SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_gallery_states_pass_the_visual_checks(qtbot, tmp_path: Path, size) -> None:
    win = gallery.make_window(size, "dark")
    qtbot.addWidget(win)
    found = []
    for state in gallery.STATES:
        gallery.enter_state(win, state, tmp_path)
        assert win.size().width() <= size[0] and win.size().height() <= size[1], state
        found += [f"{state}: {p}" for p in problems(win)]
    assert found == []


def test_checks_catch_an_elided_scope_verdict(window) -> None:
    view = window.stages.view("raw")
    col = view.model.columns.index("scope")
    view.table.setColumnWidth(col, 40)
    assert any("scope verdict" in p for p in problems(window))


def test_checks_catch_a_plot_squeezed_below_its_minimum(window) -> None:
    window.scatter.setMinimumSize(4000, 4000)  # more than any window gives it
    assert any("scoreScatter" in p for p in problems(window))


def test_gallery_command_writes_named_pngs(tmp_path: Path) -> None:
    code = gallery.main([str(tmp_path), "--sizes", "1366x768", "--states",
                         "scoped-miss,error", "--themes", "light"])
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert names == ["error-light-1366x768.png", "scoped-miss-light-1366x768.png"]
    assert code == 0, (tmp_path / "checks.txt").read_text()
