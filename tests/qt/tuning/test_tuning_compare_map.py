"""Side by side and the pool map show exactly what core.compare and core.poolmap return."""

from __future__ import annotations

import numpy as np

from inspector.core.analysis.compare import compare
from inspector.core.engine.inputs import build_params


def run_compare(window, qtbot):
    view = window.tuning_dock.compare
    window.tuning_dock.show_tab("compare")
    view.run()
    qtbot.waitUntil(lambda: not view.running, timeout=60_000)
    assert view.result is not None, window.error_bar.label.text()
    return view


def test_compare_view_numbers_equal_core_compare(window, qtbot) -> None:
    vm = window.vm
    view = run_compare(window, qtbot)  # defaults: docs-before-fix against docs-pushdown
    a = build_params(preset="docs-before-fix", limit=10, scope="vault-agent")
    b = build_params(preset="docs-pushdown", limit=10, scope="vault-agent")
    core = compare(vm.store, window.tuning_bridge.query, a, b,
                   ("docs-before-fix", "docs-pushdown"))
    got = view.result
    assert got.params == (a, b)
    assert (got.jaccard, got.rbo, got.kendall_tau) == (core.jaccard, core.rbo,
                                                       core.kendall_tau)
    assert got.starved == core.starved and got.starved[0] == 10  # the scoped miss
    assert got.ids == core.ids and got.rows == core.rows
    t = view.table
    assert t.rowCount() == len(core.rows)
    for r, row in enumerate(core.rows):
        assert t.item(r, 0).text() == str(row.rank_a or "–")
        assert t.item(r, 1).text() == str(row.rank_b or "–")
        assert t.item(r, 3).text() == {"both": "", "a": "A", "b": "B"}[row.side]
        assert t.item(r, 5).text() == str(row.id)
    text = view.summary.text()
    assert f"Jaccard {core.jaccard:.3f}" in text and f"RBO (p = 0.9) {core.rbo:.3f}" in text
    assert "10 in-scope rows starved by the post-filter" in text


def test_compare_with_changes_and_shared_rows_reports_shifts(window, qtbot) -> None:
    vm = window.vm
    view = window.tuning_dock.compare
    view.sides[0][0].setCurrentIndex(view.sides[0][0].findData("docs-pushdown"))
    view.sides[1][0].setCurrentIndex(view.sides[1][0].findData("docs-pushdown"))
    view.sides[1][1].setText("blend=1, overfetch=3")
    view = run_compare(window, qtbot)
    a = build_params(preset="docs-pushdown", limit=10, scope="vault-agent")
    b = build_params(preset="docs-pushdown", limit=10, scope="vault-agent", blend=1,
                     overfetch=3)
    core = compare(vm.store, window.tuning_bridge.query, a, b, view.result.labels)
    assert view.result.kendall_tau == core.kendall_tau and core.kendall_tau is not None
    assert [r.shift for r in view.result.rows] == [r.shift for r in core.rows]
    shifts = [view.table.item(r, 2).text() for r in range(view.table.rowCount())]
    assert shifts == ["·" if s == 0 else "–" if s is None else
                      (f"▲{s}" if s > 0 else f"▼{-s}") for s in (r.shift for r in core.rows)]
    view.sides[1][1].setText("nonsense")
    view.run()
    assert not view.running
    assert window.error_bar.label.text() == ("Parameter changes are KEY=VALUE, not "
                                             "'nonsense'.")


def test_pool_map_shows_the_windows_cut_and_results(window, qtbot) -> None:
    vm = window.tuning_bridge  # the fixed engine's view of the window's question
    window.tuning_dock.show_tab("map")
    view = window.tuning_dock.map
    qtbot.waitUntil(lambda: view.map is not None, timeout=30_000)
    m = view.map
    assert len(m.ids) >= 300 and m.xy.shape == (len(m.ids), 2)  # 300 deep per leg, mapped
    assert m.cut_depth == vm.trace.depths.pool
    assert {m.ids[i] for i in np.flatnonzero(m.final)} == set(vm.trace.ids("final"))
    # the points inside the cut are exactly the window's raw candidates
    inside = {m.ids[i] for i in np.flatnonzero(m.raw_rank > 0)}
    assert inside == set(vm.trace.ids("raw"))
    scoped_in = set(np.flatnonzero(m.in_scope & (m.raw_rank > 0)))
    xs, _ = view.plot.groups["cut_in"].getData()
    assert len(xs) == len(scoped_in - set(np.flatnonzero(m.final)))
    xs, _ = view.plot.groups["beyond_in"].getData()
    assert len(xs) == int(((m.raw_rank == 0) & m.in_scope).sum()) > 0
    # the cut is by rank in the full space: each point says which side it is on (filled or
    # hollow), and no 2-D boundary pretends otherwise
    assert not [i for i in view.plot.getPlotItem().items if type(i).__name__ ==
                "QGraphicsEllipseItem"]
    # a slider tick moves the cut; the map follows (read again in the worker)
    window.sliders.sliders["fetch.overfetch"].setValue(3.0)
    window.sliders.flush()
    qtbot.waitUntil(lambda: view.map is not m, timeout=30_000)
    assert view.map.cut_depth == 30
    assert {view.map.ids[i] for i in np.flatnonzero(view.map.raw_rank > 0)} == \
        set(vm.trace.ids("raw"))
