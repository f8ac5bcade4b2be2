"""The Index tab sweeps the index knobs the window's pipeline passes to the table's ANN index
and shows what `inspector sweep --grid-index --json` gives for the same question; a flat
table says in one sentence why there is nothing to sweep."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import numpy as np

from inspector.cli.main import main
from tests import indexkit
from tests.qt.qtkit import argv_of


def cli(*argv: str) -> dict[str, Any]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(list(argv)) == 0
    return json.loads(buf.getvalue())


def run_index(window, qtbot):
    window.tuning_dock.show_tab("index")
    view = window.tuning_dock.index
    view.result = None
    view.run()
    qtbot.waitUntil(lambda: view.result is not None or window.error_bar.isVisible(),
                    timeout=180_000)
    return view


def test_the_index_sweep_equals_the_cli(window, qtbot, tmp_path) -> None:
    from inspector.core.stores.options import OpenOptions

    vm = window.vm
    path = indexkit.build(tmp_path / "ivf", "IVF_PQ")
    window.store_features.open(str(path), None, OpenOptions.make())
    vm.jobs.wait_idle(60)
    vm.put(vector_of="r00042", text=None, limit=10)
    vm.jobs.wait_idle(60)
    assert vm.trace is not None, window.error_bar.label.text()
    view = run_index(window, qtbot)
    assert view.result is not None, window.error_bar.label.text()
    want = cli("sweep", *argv_of(vm.question.plain()), "--grid-index", "--json")
    axes = view.result.axes
    assert [a.to_json() for a in axes] == want["axes"]
    assert [a.key for a in axes] == ["fetch.nprobes", "fetch.refine_factor"]
    for metric in ("index_recall", "scoped_recall"):
        view.metric.setCurrentIndex(view.metric.findData(metric))
        grid = np.asarray([np.nan if c[metric] is None else c[metric] for c in want["cells"]],
                          np.float64).reshape(len(axes[0].values), len(axes[1].values))
        np.testing.assert_allclose(view.values(), grid, atol=1e-6, equal_nan=True)
        t = view.table
        assert (t.rowCount(), t.columnCount()) == grid.shape
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                assert t.item(i, j).text() == ("–" if np.isnan(grid[i, j]) else
                                               f"{grid[i, j]:.3f}")
    assert t.verticalHeaderItem(0).text() == f"fetch.nprobes {axes[0].values[0]:g}"


def test_a_flat_table_has_no_index_knobs_to_sweep(window, qtbot) -> None:
    view = run_index(window, qtbot)
    assert view.result is None
    assert window.error_bar.label.text() == ("This table has no vector index: index knobs "
                                             "change nothing on a flat search.")
