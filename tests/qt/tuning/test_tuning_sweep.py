"""The Sweep tab shows the core sweep's own numbers, applies a clicked cell to the sliders
(the stages then equal pipeline.run), and a long sweep cancels while the window stays live."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.sweep import Case, run_sweep
from inspector.core.engine.diagnosis import safe_words
from tests.qt.qtkit import assert_shows, engine_json


def sweep(window, qtbot, timeout: int = 60_000):
    dock = window.tuning_dock
    dock.show_tab("sweep")
    dock.setFloating(True)  # room for the heatmap's value labels, whatever the window's layout
    dock.resize(1400, 720)
    dock.sweep.run()
    qtbot.waitUntil(lambda: not dock.sweep.running, timeout=timeout)
    assert dock.sweep.result is not None, window.error_bar.label.text()
    return dock.sweep


def test_heatmap_cells_equal_the_core_sweep(window, qtbot) -> None:
    vm = window.vm
    panel = sweep(window, qtbot)
    res = panel.result
    bridge = window.tuning_bridge
    window.vm.jobs.wait_idle(60)
    core = run_sweep(vm.store, [Case(name="q", query=bridge.query)], bridge.params,
                     panel.grid())
    want = core.queries[0].values["scoped_recall"][:, :, 0]
    panel.metric.setCurrentIndex(panel.metric.findData("scoped_recall"))
    np.testing.assert_array_equal(panel.heatmap.values, want)
    np.testing.assert_array_equal(panel.heatmap.image.image, want)
    assert panel.heatmap.values.shape == (len(res.grid.overfetch), len(res.grid.blend))
    # the outlined best region is the core's best region for the objective
    best = core.queries[0].best
    panel.metric.setCurrentIndex(panel.metric.findData("objective"))
    xs, ys = panel.heatmap.best.getData()
    shown = {(res.grid.overfetch[int(x)], res.grid.blend[int(y)]) for x, y in zip(xs, ys,
                                                                                strict=True)}
    assert shown == {(f, w) for f, w, _ in best.cells}
    # the labels print the same values
    k = 2 * len(res.grid.blend) + 3
    assert panel.heatmap.labels[k].textItem.toPlainText() in (f"{want[2, 3]:g}",
                                                              f"{want[2, 3]:.2f}")


def test_clicking_a_cell_moves_the_sliders_and_the_stages_equal_pipeline_run(window,
                                                                             qtbot) -> None:
    vm = window.vm
    panel = sweep(window, qtbot)
    grid = panel.result.grid
    i, j = grid.overfetch.index(3.0), grid.blend.index(0.5)
    hm = panel.heatmap
    qtbot.mouseClick(hm.viewport(), Qt.MouseButton.LeftButton, pos=hm.cell_center(i, j))
    vm.jobs.wait_idle(60)
    assert vm.current("fetch.overfetch") == 3.0 and vm.current("blend.weight") == 0.5
    assert window.sliders.sliders["fetch.overfetch"].value() == 3.0
    assert window.sliders.sliders["blend.weight"].value() == 0.5
    assert_shows(window, engine_json(window))
    x, y = hm.current.getData()
    assert (x[0], y[0]) == (i + 0.5, j + 0.5)  # the cross follows the sliders


def test_safe_overfetch_curve_and_marker_equal_the_core(window, qtbot, ready) -> None:
    vm = window.vm
    vm.set_param("fetch.mode", "vector")  # exact legs: the safe over-fetch exists
    vm.jobs.wait_idle(60)
    panel = sweep(window, qtbot)
    q = panel.result.queries[0]
    assert q.safe.overfetch is not None
    xs, ys = panel.curve.curve.getData()
    assert list(zip(xs.tolist(), ys.tolist(), strict=True)) == [
        (f, r) for f, r in q.safe.curve]
    assert panel.curve.safe.isVisible() and panel.curve.safe.value() == q.safe.overfetch
    assert f"Minimum {safe_words(q.safe.depth, q.params.limit)}" in panel.summary.text()


def test_cancel_stops_a_long_sweep_and_the_window_stays_responsive(window, qtbot) -> None:
    vm = window.vm
    j = Judgments()
    words = ("rotate", "signing", "keys", "tokens", "vault", "agent", "service", "renew")
    for n in range(120):
        j = j.with_query(f"{words[n % 8]} {words[(n * 3) % 8]} keys {n}", "vault-agent")
    panel = window.tuning_dock.sweep
    panel.set_query_set(j, "many")
    assert panel.source.currentData() == "set"
    window.tuning_dock.show_tab("sweep")
    panel.run()
    assert panel.running and panel.progress.isVisible()
    qtbot.waitUntil(lambda: panel.progress.value() >= 2, timeout=30_000)
    # the GUI thread is free: a slider tick re-ranks at once while the sweep runs
    before = vm.trace
    window.sliders.sliders["fetch.overfetch"].setValue(4.0)
    window.sliders.flush()
    qtbot.waitUntil(lambda: vm.trace is not before and vm.trace is not None, timeout=30_000)
    assert vm.trace.stage("fetch").params["overfetch"] == 4.0
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.running, timeout=30_000)
    res = panel.result
    assert res.cancelled
    assert 2 <= len(res.queries) < 120
    assert not panel.progress.isVisible() and panel.run_button.isEnabled()
    assert panel.summary.text().startswith(f"Cancelled: {len(res.queries)} queries swept.")
    assert panel.table.rowCount() == len(res.queries)


def test_a_bad_grid_is_one_sentence_not_a_crash(window, qtbot) -> None:
    panel = window.tuning_dock.sweep
    panel.overfetch.setText("1:x")
    panel.run()
    assert not panel.running
    assert window.error_bar.isVisible()
    assert window.error_bar.label.text().startswith("The over-fetch grid must be")
    panel.overfetch.setText("1:30:5")
    panel.run()
    assert "sliders' top" in window.error_bar.label.text()


def test_the_sweep_asks_the_window_question_and_its_base_comes_from_it(window, qtbot
                                                                       ) -> None:
    """The Sweep tab builds the window's question (issue 18) and the base parameters the
    grid varies are the question's; ignoring the cap is the question with cap 0."""
    from inspector.core.engine.inputs import question_params

    vm = window.vm
    vm.put(set={"fetch.overfetch": 2.0, "blend.weight": 0.3})
    vm.jobs.wait_idle(60)
    panel = window.tuning_dock
    panel.show_tab("sweep")
    vm.jobs.wait_idle(60)
    req = panel.sweep.request()
    base = question_params(vm.question.plain())
    assert req.question == vm.question.plain() and req.base == base
    assert (base.overfetch, base.blend) == (2.0, 0.3)
    panel.sweep.no_cap.setChecked(True)
    req = panel.sweep.request()
    assert req.base == base.with_(cap=0)
    assert req.grid == panel.sweep.grid().resolved(req.base)
    panel.sweep.no_cap.setChecked(False)
    result = sweep(window, qtbot)
    assert result.result.base == base
