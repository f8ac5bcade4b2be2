"""The Sweep tab shows what `inspector sweep --json` gives for the window's question (the same
axes, cells, best region and safe depth), for any pipeline's declared axes; a clicked cell
sets its parameters on the question (the stages then equal `inspector query --json`, and
the cell's own final list); a long sweep cancels while the window stays live."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import numpy as np
from PySide6.QtCore import Qt

from inspector.cli.main import main
from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.safe import safe_words
from tests.qt.qtkit import argv_of, assert_shows, engine_json


def cli_sweep(q: Any, *grid: str) -> dict[str, Any]:
    """What `inspector sweep STORE <the question's options> --json [--grid ...]` prints."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["sweep", *argv_of(q), "--json", *grid]) == 0
    return json.loads(buf.getvalue())


def sweep(window, qtbot, grid: str = "", timeout: int = 120_000):
    dock = window.tuning_dock
    dock.show_tab("sweep")
    dock.setFloating(True)  # room for the heatmap's value labels, whatever the window's layout
    dock.resize(1400, 720)
    dock.sweep.grid_edit.setText(grid)
    dock.sweep.run()
    qtbot.waitUntil(lambda: not dock.sweep.running, timeout=timeout)
    assert dock.sweep.result is not None, window.error_bar.label.text()
    return dock.sweep


def cli_grid(data: dict[str, Any], key: str, query: int | None = None) -> np.ndarray:
    """A metric of the CLI's JSON over the grid, shaped like the axes (NaN: undefined)."""
    shape = [len(a["values"]) for a in data["axes"]]
    if query is None:
        flat = [np.nan if c[key] is None else c[key] for c in data["cells"]]
    else:
        flat = [np.nan if v is None else v for v in data["queries"][query]["values"][key]]
    return np.asarray(flat, np.float64).reshape(shape)


def test_heatmap_cells_equal_the_cli_sweep(window, qtbot) -> None:
    vm = window.vm
    panel = sweep(window, qtbot)
    res = panel.result
    want = cli_sweep(vm.question.plain())
    # the axes are the pipeline's declared defaults, as the CLI names them
    assert [a.to_json() for a in res.axes] == want["axes"]
    assert [a["key"] for a in want["axes"]] == ["fetch.overfetch", "blend.weight"]
    panel.metric.setCurrentIndex(panel.metric.findData("scoped_recall"))
    grid = cli_grid(want, "scoped_recall", 0)
    np.testing.assert_allclose(panel.heatmap.values, grid, atol=1e-6, equal_nan=True)
    np.testing.assert_allclose(panel.heatmap.image.image, grid, atol=1e-6, equal_nan=True)
    assert panel.heatmap.values.shape == (len(res.axes[0].values), len(res.axes[1].values))
    # the outlined best region: every cell at the CLI's best objective
    panel.metric.setCurrentIndex(panel.metric.findData("objective"))
    obj = cli_grid(want, "objective")
    assert want["best"]["value"] is not None
    region = {tuple(ix) for ix in np.argwhere(obj >= want["best"]["value"] - 1e-6)}
    xs, ys = panel.heatmap.best.getData()
    assert {(int(x), int(y)) for x, y in zip(xs, ys, strict=True)} == region
    assert len(region) == want["best"]["cells"]
    pick = ", ".join(f"{k} {v:g}" for k, v in want["best"]["pick"].items())
    assert f"cheapest: {pick}." in panel.summary.text()
    # the labels print the same values
    panel.metric.setCurrentIndex(panel.metric.findData("scoped_recall"))
    k = 2 * len(res.axes[1].values) + 3
    assert panel.heatmap.labels[k].textItem.toPlainText() in (
        f"{grid[2, 3]:g}", f"{grid[2, 3]:.2f}".rstrip("0").rstrip("."))


def test_clicking_a_cell_sets_the_question_and_the_stages_equal_the_cli(window,
                                                                      qtbot) -> None:
    vm = window.vm
    panel = sweep(window, qtbot)
    res = panel.result
    ax0, ax1 = res.axes
    i, j = ax0.values.index(3.0), ax1.values.index(0.5)
    cell = i * len(ax1.values) + j
    hm = panel.heatmap
    qtbot.mouseClick(hm.viewport(), Qt.MouseButton.LeftButton, pos=hm.cell_center(i, j))
    vm.jobs.wait_idle(60)
    # the question's `set` holds the cell's STAGE.PARAM values, as the CLI's axes name them
    assert vm.question.set["fetch.overfetch"] == 3.0
    assert vm.question.set["blend.weight"] == 0.5
    assert window.sliders.sliders["fetch.overfetch"].value() == 3.0
    assert window.sliders.sliders["blend.weight"].value() == 0.5
    assert_shows(window, engine_json(window))
    # the window's answer is the cell the sweep ran
    assert list(vm.trace.final.ids) == res.queries[0].final_ids(cell)
    x, y = hm.current.getData()
    assert (x[0], y[0]) == (i + 0.5, j + 0.5)  # the cross follows the question


def test_any_pipelines_declared_axes_as_the_cli_names_them(window, qtbot) -> None:
    """A pipeline of other stages: its own declared depth and weight parameters are the axes,
    the cells are the CLI's, and a clicked cell sets those parameters."""
    vm = window.vm
    vm.put(preset="langchain-lancedb-mmr", pipeline_file=None, set={}, scopes=None)
    vm.jobs.wait_idle(60)
    assert vm.trace is not None, window.error_bar.label.text()
    panel = sweep(window, qtbot)
    want = cli_sweep(vm.question.plain())
    keys = [a["key"] for a in want["axes"]]
    assert keys == ["fetch.depth_factor", "mmr.lambda_mult"]
    assert [a.key for a in panel.result.axes] == keys
    panel.metric.setCurrentIndex(panel.metric.findData("scoped_recall"))
    np.testing.assert_allclose(panel.heatmap.values, cli_grid(want, "scoped_recall", 0),
                               atol=1e-6, equal_nan=True)
    ax0, ax1 = panel.result.axes
    i, j = len(ax0.values) - 1, 0
    panel.apply_cell(i, j)
    vm.jobs.wait_idle(60)
    for key, value in ((ax0.key, ax0.values[i]), (ax1.key, ax1.values[j])):
        assert vm.current(key) == value
        assert vm.question.set.get(key, vm.own(key)) == value
    assert list(vm.trace.final.ids) == panel.result.queries[0].final_ids(
        i * len(ax1.values) + j)
    assert_shows(window, engine_json(window))


def test_a_third_axis_is_a_slice_and_equals_the_cli(window, qtbot) -> None:
    vm = window.vm
    items = ["fetch.overfetch=1,2,4", "blend.weight=0,0.5,1", "fetch.cap=20,60"]
    panel = sweep(window, qtbot, "; ".join(items))
    want = cli_sweep(vm.question.plain(), *(x for item in items for x in ("--grid", item)))
    assert [a.to_json() for a in panel.result.axes] == want["axes"]
    assert panel.slice.isVisible() and panel.slice.count() == 2
    panel.metric.setCurrentIndex(panel.metric.findData("scoped_recall"))
    grid = cli_grid(want, "scoped_recall", 0)
    for m in range(2):
        panel.slice.setCurrentIndex(m)
        np.testing.assert_allclose(panel.heatmap.values, grid[:, :, m], atol=1e-6,
                                   equal_nan=True)
    assert panel.cell(1, 2)["fetch.cap"] == 60 and panel.cell(1, 2)["fetch.overfetch"] == 2


def test_safe_depth_curve_and_marker_equal_the_cli(window, qtbot) -> None:
    vm = window.vm
    panel = sweep(window, qtbot)
    safe = cli_sweep(vm.question.plain())["queries"][0]["safe"]
    q = panel.result.queries[0]
    assert q.safe.to_json() == json.loads(json.dumps(safe))
    assert safe["curve"], "the demo question has a truth to recall"
    xs, ys = panel.curve.curve.getData()
    got = list(zip(xs.tolist(), [None if np.isnan(y) else y for y in ys.tolist()],
                   strict=True))
    assert got == [(float(p["value"]), p["recall"]) for p in safe["curve"]]
    if isinstance(safe["value"], (int, float)):
        assert panel.curve.safe.isVisible() and panel.curve.safe.value() == safe["value"]
    assert f"Safe depth: {safe_words(safe)}." in panel.summary.text()


def _helpers() -> list[int]:
    """The helper processes this process started to share a sweep, still running."""
    import os
    from pathlib import Path

    out = []
    for d in Path("/proc").iterdir():
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"sweep_helper" in cmd:
            out.append(int(d.name))
    return out


def test_cancel_stops_a_long_sweep_and_the_window_stays_responsive(window, qtbot,
                                                                   monkeypatch) -> None:
    """120 queries: shared with a helper process (as on any machine with two processors);
    the cancel stops it too."""
    from inspector.core.analysis import sweep_jobs

    monkeypatch.setattr(sweep_jobs, "usable_cpus", lambda: 2)
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
    qtbot.waitUntil(lambda: panel.progress.value() >= 2, timeout=60_000)
    assert len(_helpers()) == 1
    # the GUI thread is free: a slider tick answers at once while the sweep runs
    before = vm.trace
    window.sliders.sliders["fetch.overfetch"].setValue(4.0)
    window.sliders.flush()
    qtbot.waitUntil(lambda: vm.trace is not before and vm.trace is not None, timeout=30_000)
    assert vm.trace.stage("fetch").params["overfetch"] == 4.0
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.running, timeout=60_000)
    res = panel.result
    assert res.cancelled
    assert 2 <= len(res.queries) < 120
    assert not panel.progress.isVisible() and panel.run_button.isEnabled()
    assert panel.summary.text().startswith(f"Cancelled: {len(res.queries)} queries swept.")
    assert panel.table.rowCount() == len(res.queries)
    assert _helpers() == []


def test_a_bad_grid_is_one_sentence_not_a_crash(window, qtbot) -> None:
    panel = window.tuning_dock.sweep
    panel.grid_edit.setText("fetch.overfetch=1:x")
    panel.run()
    assert not panel.running
    assert window.error_bar.isVisible()
    assert window.error_bar.label.text().startswith("The fetch.overfetch grid must be")
    panel.grid_edit.setText("nosuch.param=1,2")
    panel.run()
    text = window.error_bar.label.text()
    assert text.startswith("--grid 'nosuch.param=1,2': name a parameter as STAGE.PARAM=SPEC")
    assert "\n" not in text and not panel.running


def test_the_sweep_asks_the_window_question(window, qtbot) -> None:
    """The Sweep tab sweeps the window's question (its `set` is the base the grid varies);
    the grid field empty is the pipeline's default grid, shown as its placeholder."""
    from inspector.core.analysis.grid import default_axes
    from inspector.core.engine.flow.question import resolve

    vm = window.vm
    vm.put(set={"fetch.overfetch": 2.0, "blend.weight": 0.3})
    vm.jobs.wait_idle(60)
    dock = window.tuning_dock
    dock.show_tab("sweep")
    req = dock.sweep.request()
    assert req.question == vm.question.plain()
    axes = default_axes(resolve(vm.question.plain())[0])
    assert list(req.axes) == axes
    assert [a.current for a in axes] == [2.0, 0.3]  # the question's values, as asked
    assert dock.sweep.grid_edit.placeholderText().startswith("fetch.overfetch=")
    panel = sweep(window, qtbot)
    assert panel.result.question == vm.question.plain()
