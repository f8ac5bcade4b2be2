"""Side by side and the pool map show what `inspector report` records for the window's
question: its evidence.comparison (`--against-preset P --against K=V`) and evidence.map."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.engine.flow.insight.diagnosis import main_line
from tests.qt.qtkit import argv_of


def cli_report(q: Any, out: Path, *more: str) -> dict[str, Any]:
    """The receipt `inspector report STORE <the question's options> --out OUT` writes."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main_(["report", *argv_of(q), "--out", str(out), "--no-html", *more]) == 0
    return json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))


def main_(argv: list[str]) -> int:
    from inspector.cli.main import main

    return main(argv)


def run_compare(window, qtbot):
    view = window.tuning_dock.compare
    window.tuning_dock.show_tab("compare")
    view.run()
    qtbot.waitUntil(lambda: not view.running, timeout=120_000)
    assert view.result is not None, window.error_bar.label.text()
    return view


def _side(view, n: int, preset: str, changes: str = "") -> None:
    combo, edit = view.sides[n]
    combo.setCurrentIndex(combo.findData(preset))
    edit.setText(changes)


def test_compare_view_numbers_equal_the_cli_report(window, qtbot, tmp_path) -> None:
    vm = window.vm
    view = window.tuning_dock.compare
    _side(view, 0, "")  # the window's question
    _side(view, 1, "docs-pushdown")
    view = run_compare(window, qtbot)
    want = cli_report(vm.question.plain(), tmp_path / "r", "--no-sweep", "--no-map",
                      "--against-preset", "docs-pushdown")["evidence"]["comparison"]
    got = view.result.to_json()
    for key in ("jaccard", "rbo", "kendall_tau", "shared", "rows"):
        assert got[key] == want[key], key
    for side in ("a", "b"):
        for key in ("pipeline", "ids", "truth", "scoped_recall", "starved", "counters"):
            assert got[side][key] == want[side][key], (side, key)
    assert want["a"]["pipeline"] == vm.spec().name and want["b"]["pipeline"] == \
        "docs-pushdown"
    t = view.table
    assert t.rowCount() == len(want["rows"])
    for r, row in enumerate(want["rows"]):
        assert t.item(r, 0).text() == str(row["rank_a"] or "–")
        assert t.item(r, 1).text() == str(row["rank_b"] or "–")
        assert t.item(r, 3).text() == {"both": "", "a": "A", "b": "B"}[row["side"]]
        assert t.item(r, 5).text() == str(row["id"])
    text = view.summary.text()
    assert f"Jaccard {want['jaccard']:.3f}" in text and f"RBO (p = 0.9) {want['rbo']:.3f}" \
        in text
    if want["a"]["starved"]:
        assert f"{want['a']['starved']} of its truth's top rows not returned" in text
    # the result is about the question asked: another question says so, the same one not
    assert view.stale_note.isHidden()
    own = vm.current("blend.weight")
    vm.set_param("blend.weight", 0.9 if own != 0.9 else 0.1)
    assert not view.stale_note.isHidden()
    vm.set_param("blend.weight", own)
    assert view.stale_note.isHidden()


def test_compare_with_changes_and_shared_rows_reports_shifts(window, qtbot,
                                                             tmp_path) -> None:
    vm = window.vm
    vm.set_preset("docs-pushdown")  # both sides return rows: shared rows have shifts
    vm.jobs.wait_idle(60)
    view = window.tuning_dock.compare
    _side(view, 0, "")
    _side(view, 1, "docs-pushdown", "blend=1, overfetch=3")
    view = run_compare(window, qtbot)
    want = cli_report(vm.question.plain(), tmp_path / "r", "--no-sweep", "--no-map",
                      "--against-preset", "docs-pushdown", "--against", "blend=1",
                      "--against", "overfetch=3")["evidence"]["comparison"]
    b = view.questions[1]
    assert b.preset == "docs-pushdown"  # the options on the stages that hold them
    assert (b.set["blend.weight"], b.set["fetch.overfetch"]) == (1, 3)
    got = view.result.to_json()
    assert got["kendall_tau"] == want["kendall_tau"] and want["kendall_tau"] is not None
    assert [r["shift"] for r in got["rows"]] == [r["shift"] for r in want["rows"]]
    shifts = [view.table.item(r, 2).text() for r in range(view.table.rowCount())]
    assert shifts == ["·" if s == 0 else "–" if s is None else
                      (f"▲{s}" if s > 0 else f"▼{-s}") for s in (r["shift"]
                                                                  for r in want["rows"])]
    view.sides[1][1].setText("nonsense")
    view.run()
    assert not view.running
    assert window.error_bar.label.text() == ("Parameter changes are KEY=VALUE, not "
                                             "'nonsense'.")
    view.sides[1][1].setText("nosuch=3")
    view.run()
    text = window.error_bar.label.text()
    assert text.startswith("--against nosuch=3: pipeline docs-pushdown has no stage that "
                           "takes nosuch") and not view.running


def test_pool_map_equals_the_cli_reports_map(window, qtbot, tmp_path) -> None:
    vm = window.vm
    window.tuning_dock.show_tab("map")
    view = window.tuning_dock.map
    qtbot.waitUntil(lambda: view.map is not None, timeout=60_000)
    m = view.map
    want = cli_report(vm.question.plain(), tmp_path / "r", "--no-sweep")["evidence"]["map"]
    assert json.loads(json.dumps(m.to_json())) == want
    assert len(m.ids) > m.cut_depth > 0 and m.xy.shape == (len(m.ids), 2)  # mapped deeper
    # the points inside the cut are the rows the window's run fetched; returned are its own
    cut = main_line(vm.trace)[0]
    assert m.stage == cut.name and m.cut_depth == len(cut.ids)
    assert {m.ids[i] for i in np.flatnonzero(m.raw_rank > 0)} == set(cut.ids)
    assert {m.ids[i] for i in np.flatnonzero(m.final)} == set(vm.trace.final.ids)
    kept = set(np.flatnonzero(m.in_scope & (m.raw_rank > 0)))
    xs, _ = view.plot.groups["cut_in"].getData()
    assert len(xs) == len(kept - set(np.flatnonzero(m.final)))
    xs, _ = view.plot.groups["beyond_in"].getData()
    assert len(xs) == int(((m.raw_rank == 0) & m.in_scope).sum()) > 0
    # the cut is by rank in the full space: no 2-D boundary pretends otherwise
    assert not [i for i in view.plot.getPlotItem().items if type(i).__name__ ==
                "QGraphicsEllipseItem"]
    # a slider tick moves the cut; the map follows (read again in the worker)
    window.sliders.sliders["fetch.overfetch"].setValue(3.0)
    window.sliders.flush()
    qtbot.waitUntil(lambda: view.map is not m, timeout=60_000)
    vm.jobs.wait_idle(60)
    cut = main_line(vm.trace)[0]
    assert view.map.cut_depth == len(cut.ids) != m.cut_depth
    assert {view.map.ids[i] for i in np.flatnonzero(view.map.raw_rank > 0)} == set(cut.ids)
