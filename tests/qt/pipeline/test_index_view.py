"""The indexed demo story in the window: it opens its table, the index view shows the exact
answer beside the approximate one with the lost row, and each knob re-queries to exactly what
`inspector query` prints for it."""

from __future__ import annotations

from inspector.core.engine.ann.facet import attach
from inspector.core.engine.inputs import build_query
from inspector.core.engine.pipeline import run


def _cli_trace(vm):
    p = vm.params
    return attach(vm.store, vm.query, run(vm.store, build_query(vm.store, p.mode, text=vm.text), p))


def test_the_index_story_shows_the_row_lost_to_the_index(window) -> None:
    vm, bar = window.vm, window.index_bar
    names = [q["name"] for q in vm.store.suggested_queries]
    story = next(n for n, name in enumerate(names) if name.startswith("Lost to the index"))
    lost_id = vm.store.suggested_queries[story]["expect"][0]
    vm.load_suggested(story)
    vm.jobs.wait_idle()
    assert vm.store.table_name == "memories_indexed"
    t = vm.trace
    assert t.diagnosis.code == "index_recall" and lost_id in t.index_facet.lost_final
    assert bar.isVisible() and "IVF_PQ" in bar.summary.text()
    assert f"✗ {lost_id}" in bar.compare.text()
    assert t.to_json() == _cli_trace(vm).to_json()
    assert any(b.text().startswith("Search exactly") for b in window.banner.buttons)


def test_index_knobs_requery_to_the_engines_answer(window) -> None:
    vm, bar = window.vm, window.index_bar
    names = [q["name"] for q in vm.store.suggested_queries]
    vm.load_suggested(next(n for n, x in enumerate(names) if x.startswith("Lost to the index")))
    vm.jobs.wait_idle()
    bar.spins["nprobes"].setValue(64)
    vm.jobs.wait_idle()
    assert vm.params.nprobes == 64
    assert vm.trace.to_json() == _cli_trace(vm).to_json()
    bar.exact.setChecked(True)
    vm.jobs.wait_idle()
    assert vm.trace.index_facet is None  # an exact search has nothing lost to an index
    assert vm.trace.to_json() == _cli_trace(vm).to_json()
    bar.spins["nprobes"].setValue(0)  # back to the default: from the session's cache
    bar.exact.setChecked(False)
    vm.jobs.wait_idle()
    assert vm.params.nprobes is None and vm.trace.diagnosis.code == "index_recall"


def test_the_index_tab_sweeps_nprobes_like_the_cli(window) -> None:
    import numpy as np

    from inspector.core.analysis.index_sweep import nprobes_sweep
    from inspector.core.analysis.sweep import Case, Grid

    vm = window.vm
    names = [q["name"] for q in vm.store.suggested_queries]
    vm.load_suggested(next(n for n, x in enumerate(names) if x.startswith("Lost to the index")))
    vm.jobs.wait_idle()
    view = window.tuning_dock.index
    window.tuning_dock.show_tab("index")
    view.nprobes.setText("2,20,64")
    view.overfetch.setText("1,3")
    view.run()
    vm.jobs.wait_idle()
    want = nprobes_sweep(vm.store, [Case(name=vm.text, query=vm.query)], vm.params,
                         Grid((1.0, 3.0), (vm.params.blend,)), (2, 20, 64))
    np.testing.assert_array_equal(view.result.recall, want.recall)
    shown = [[view.table.item(i, j).text() for j in range(2)] for i in range(3)]
    assert shown == [[f"{v:.3f}" for v in row] for row in want.recall]
