"""What a machine can see in the rendered window: the gallery's named states (the tour's
among them) at a laptop and a desktop size, checked for axis scale, overlapping plot texts,
widgets inside the window and the screen, plot sizes and scope verdicts shown in full
(inspector/qt/harness/visual_checks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.qt.harness import gallery
from inspector.qt.harness.visual_checks import axis_problems, problems, tick_labels
from inspector.qt.help_menu import TOUR
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
    axis = window.scatter.getPlotItem().getAxis("left")
    qtbot.waitUntil(lambda: axis_problems("score axis", axis, (lo, hi)) == [], timeout=10_000)
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
    axis = again.scatter.getPlotItem().getAxis("left")
    # the view box takes its new range on the next turns of the event loop (under load, a
    # few of them): the check is on the settled window
    qtbot.waitUntil(lambda: axis_problems("score axis", axis, (lo, hi)) == [], timeout=10_000)


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


def test_checks_catch_a_stage_title_cut_before_its_count(window) -> None:
    view = window.stages.view("scoped")
    view.title.setText("▸ " + "Scoped candidates " * 30 + "(15)")
    assert any("stage scoped: the title" in p for p in problems(window))


def test_a_narrow_stage_keeps_its_row_count_in_the_title(window) -> None:
    view = window.stages.view("scoped")
    n = len(window.vm.trace.stage("scoped").rows)
    view.resize(170, view.height())  # narrower than "▸ Scoped candidates  (15)"
    assert view.title.text() == f"▸ Scoped ({n})" and view.title.toolTip().endswith(f"({n})")
    view.resize(600, view.height())
    assert view.title.text() == f"▸ Scoped candidates  ({n})"


def test_checks_catch_a_plot_squeezed_below_its_minimum(window) -> None:
    window.scatter.setMinimumSize(4000, 4000)  # more than any window gives it
    assert any("scoreScatter" in p for p in problems(window))


def test_gallery_command_writes_named_pngs(tmp_path: Path) -> None:
    code = gallery.main([str(tmp_path), "--sizes", "1366x768", "--states",
                         "scoped-miss,error", "--themes", "light"])
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert names == ["error-light-1366x768.png", "scoped-miss-light-1366x768.png"]
    assert code == 0, (tmp_path / "checks.txt").read_text()


def test_a_first_window_fits_the_available_screen(qtbot) -> None:
    from inspector.qt.window import MainWindow

    win = MainWindow()  # no saved geometry in the redirected settings
    qtbot.addWidget(win)
    win.show()
    area = win.screen().availableGeometry()
    assert area.contains(win.frameGeometry()) or area.contains(win.geometry())
    assert win.width() <= 1600 and win.height() <= 1000


def test_tuning_panel_on_a_short_window_floats_inside_the_screen(window, qtbot) -> None:
    window.resize(1366, 740)
    qtbot.wait(20)
    before = window.size()
    window.action_tuning = window.tuning_dock.toggleViewAction()
    window.action_tuning.trigger()  # Ctrl+T
    qtbot.wait(50)
    dock = window.tuning_dock
    assert dock.isVisible() and dock.isFloating()
    assert window.size() == before
    assert window.screen().availableGeometry().contains(dock.geometry())


def test_tuning_panel_docks_when_the_stages_keep_room(window, qtbot) -> None:
    window.resize(1900, 1400)
    qtbot.wait(20)
    window.tuning_dock.toggleViewAction().trigger()
    qtbot.wait(50)
    assert window.tuning_dock.isVisible() and not window.tuning_dock.isFloating()
    assert window.stages.height() >= 200


def test_results_arriving_do_not_push_the_stages_down(qtbot, ready) -> None:
    from PySide6.QtCore import QPoint

    from inspector.qt.window import MainWindow

    win = MainWindow(restore=False, persist=False)
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()
    qtbot.wait(20)
    y = win.stages.mapTo(win, QPoint(0, 0)).y()
    assert not win.banner.isVisible()
    win.vm.open_store(None)
    ready(win.vm)
    qtbot.wait(20)
    assert win.banner.isVisible()
    assert abs(win.stages.mapTo(win, QPoint(0, 0)).y() - y) <= 45  # the notice bar, not ~90


@pytest.mark.parametrize("what", ["row labels", "tick labels"])
def test_checks_catch_overlapping_plot_texts(window, ready, what) -> None:
    window.vm.load_suggested(1)
    ready(window.vm)
    bump = window.bump
    assert not [p for p in problems(window) if "overlaps" in p]
    if what == "row labels":  # two labels forced onto one row
        bump.labels[2].setPos(bump.labels[0].pos())
    else:  # ticks a tenth of a row apart
        bump.getPlotItem().getAxis("left").setTicks([[(1, "1"), (1.1, "1.1"), (5, "5")]])
    assert any(p.startswith("bumpChart:") and "overlaps" in p for p in problems(window))


def test_the_tour_is_a_bar_inside_the_window_on_a_laptop_screen(window, ready) -> None:
    from PySide6.QtCore import QPoint, QRect

    window.resize(1366, 768)
    tour = window.tour
    tour.start(5)  # the importance story's middle step
    ready(window.vm)
    assert not tour.isWindow() and tour.isVisible()  # covers nothing a step talks about
    assert window.rect().contains(QRect(tour.mapTo(window, QPoint(0, 0)), tour.size()))
    assert "step 6 of 7" in tour.where.text() and tour.sentence.text() == TOUR[5].sentence
    assert problems(window) == []


def test_a_tour_jump_shows_the_story_it_names_not_the_last_query(qtbot, ready) -> None:
    from inspector.qt.window import MainWindow

    win = MainWindow(restore=False, persist=False)
    qtbot.addWidget(win)
    win.show()
    win.vm.open_store(None, then="none")
    ready(win.vm)
    win.vm.load_suggested(0)  # the scoped miss's rows are the cached ones
    ready(win.vm)
    win.tour.start(5)  # the importance story (never queried yet), then blend 0.5
    ready(win.vm)
    trace = win.vm.trace
    raw = {str(trace.pool.ids[int(i)]) for i in trace.stage("raw").rows}
    assert trace.params.blend == 0.5 and set(win.vm.expected) <= raw


def test_checks_catch_a_floating_dock_off_the_screen(window, qtbot) -> None:
    dock = window.tuning_dock
    dock.setFloating(True)
    dock.show()
    area = window.screen().availableGeometry()
    dock.move(area.right() - 40, area.bottom() - 40)
    qtbot.wait(20)
    assert any("tuningDock" in p and "off the screen" in p for p in problems(window))


def test_the_whole_tour_fits_a_laptop_screen(qtbot) -> None:
    """Help > Tour on a 1366x768 window: at every step of both stories the machine checks
    find nothing (nothing outside the window, no cut or overlapping text, no squeezed plot)
    and the tour's bar shows the step's sentence in full."""
    from inspector.qt.help_menu import TOUR

    win = gallery.make_window((1366, 768), "light")
    qtbot.addWidget(win)
    win.tour.start(0)
    for n in range(len(TOUR)):
        if n:
            win.tour.go(n)
        win.vm.jobs.wait_idle()
        assert win.width() <= 1366 and win.height() <= 768
        assert problems(win) == [], f"step {n + 1}"
        sentence = win.tour.sentence
        assert sentence.text() == TOUR[n].sentence and sentence.isVisible()
        assert sentence.heightForWidth(sentence.width()) <= sentence.height(), \
            f"step {n + 1}: the sentence does not fit its bar"
