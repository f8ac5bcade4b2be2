"""The window as a person uses it: selection, marks, errors, busy state, query by example,
expected rows, presets, drop, shortcuts and export."""

from __future__ import annotations

import json
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QImage, QKeySequence
from PySide6.QtWidgets import QApplication

from inspector.core.engine.expect import analyse
from inspector.core.engine.inputs import build_params, build_query
from inspector.core.engine.pipeline import run
from inspector.core.engine.trace import STAGES
from inspector.core.stores.store import META_KEY
from tests.qt.qtkit import assert_matches_engine


def test_selecting_a_row_highlights_it_in_every_stage(window, qtbot) -> None:
    vm = window.vm
    slide(window, "overfetch", 5.0)
    final = window.stages.view("final")
    assert final.model.live_count() > 1
    target = final.model.row_id(1)
    rect = final.table.visualRect(final.model.index(1, 1))
    qtbot.mouseClick(final.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert vm.selected == target
    for stage in STAGES:
        view = window.stages.view(stage)
        rows = view.table.selectionModel().selectedRows()
        assert [view.model.row_id(i.row()) for i in rows] == [target], stage
    assert str(target) in window.detail.title.text()
    assert window.detail.waterfall.steps, "the waterfall explains the score"
    assert len(window.scatter.selected.data) == 1


def test_out_of_scope_rows_carry_the_rule_that_excluded_them(window) -> None:
    raw = window.stages.view("raw").model
    col = raw.columns.index("scope")
    trace = window.vm.trace
    for r in range(raw.live_count()):
        i = int(raw.rows[r])
        cell = raw.data(raw.index(r, col))
        tip = raw.data(raw.index(r, col), Qt.ItemDataRole.ToolTipRole)
        assert not trace.pool.in_scope[i]
        # the cell: a mark and the value the row had (its repo); the tooltip: the whole rule
        assert cell == f"✗ {trace.pool.columns['repo'][i]}"
        assert trace.pool.scope_rule[i] in tip and "vault-agent" in tip


def test_rows_cut_by_min_score_or_limit_look_different(window) -> None:
    slide(window, "overfetch", 20.0)
    blended_rows = window.vm.trace.stage("blended").rows
    third = float(window.vm.trace.score[blended_rows[2]])
    slide(window, "min_score", round(third, 4) - 0.0001)
    trace = window.vm.trace
    assert trace.counters["belowMinScore"] > 0
    blended = window.stages.view("blended").model
    fates = {trace.outcome(int(i)) for i in blended.rows}
    assert {"returned", "below_min_score"} <= fates
    for r in range(blended.live_count()):
        fate = trace.outcome(int(blended.rows[r]))
        colour = blended.data(blended.index(r, blended.columns.index("text")),
                              Qt.ItemDataRole.ForegroundRole)
        assert (colour is not None) == (fate != "returned")


def test_bad_folder_leaves_a_working_window_with_one_sentence(window, ready, tmp_path) -> None:
    vm = window.vm
    before = vm.trace
    vm.open_store(str(tmp_path / "nope"))
    ready(vm)
    assert window.error_bar.isVisible()
    message = window.error_bar.label.text()
    assert message.startswith("No store at") and message.count("\n") == 0
    assert vm.trace is before, "the last good result stays on screen"
    slide(window, "overfetch", 3.0)  # still live
    assert vm.trace.counters["scopedCandidates"] > 0


def _odd_store(path: Path, dim: int) -> str:
    """A small store of dim-dimensional vectors, with no repo or scope columns."""
    rng = np.random.default_rng(1)
    vec = rng.normal(size=(20, dim)).astype(np.float32)
    meta = {"embedder": {"name": "hash-v1", "dim": 256}}
    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
                        pa.field("vector", pa.list_(pa.float32(), dim))],
                       metadata={META_KEY: json.dumps(meta).encode()})
    table = pa.table({"id": [f"r{i}" for i in range(20)], "text": ["x"] * 20,
                      "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), dim)},
                     schema=schema)
    lancedb.connect(str(path)).create_table("memories", table)
    return str(path)


def test_wrong_dimension_is_one_sentence_and_the_window_survives(window, ready,
                                                                 tmp_path) -> None:
    vm = window.vm
    vm.open_store(_odd_store(tmp_path / "odd", 8))
    ready(vm)
    assert vm.store.dim == 8 and vm.error is None
    vm.set_param("mode", "vector")
    ready(vm)
    window.query_bar.text.setText("[0.1, 0.2, 0.3]")
    window.query_bar.text.returnPressed.emit()
    ready(vm)
    assert window.error_bar.isVisible()
    assert window.error_bar.label.text() == ("The query vector has 3 dimensions but the "
                                             "store's vectors have 8.")
    vm.set_query("", "r3")  # query by example still works on this store
    ready(vm)
    assert vm.error is None and not window.error_bar.isVisible()
    assert str(window.stages.view("raw").model.row_id(0)) == "r3"


def test_a_depth_past_the_cached_pool_is_requeried_not_derived(window) -> None:
    """The pool holds limit x 20 rows; over-fetch 40 needs more: the window shows nothing
    stale meanwhile, re-queries in the background, then shows exactly the engine's answer."""
    vm = window.vm
    vm.set_preset("memory-plugin")  # cap 0
    vm.set_param("scope", None)
    vm.jobs.wait_idle()
    assert vm.trace.pool.size == 200
    vm.set_param("overfetch", 40.0)
    assert vm.trace is None and vm.busy  # no derived answer from a too-shallow pool
    assert "Querying again: depth 400 is deeper than the cached pool (200)" in \
        window.status_label.text()
    vm.jobs.wait_idle()
    assert vm.trace.pool.size == 400 and vm.error is None
    assert_matches_engine(window)


def test_query_runs_off_the_gui_thread_with_a_visible_busy_state(window, ready) -> None:
    vm = window.vm
    vm.set_query("vault agent rotate transit keys")
    assert vm.busy and window.busy_bar.isVisibleTo(window)
    assert window.query_bar.run_button.text() == "Running…"
    ready(vm)
    assert not window.busy_bar.isVisibleTo(window)


def test_a_newer_query_supersedes_an_older_one(window, qtbot, monkeypatch) -> None:
    """The first query is held until the second has answered, so it answers last: its late
    answer is dropped, and it was asked to stop. Ordered by events, not by sleeping."""
    import threading

    from PySide6.QtCore import QCoreApplication, QThreadPool

    from inspector.qt import viewmodel

    vm, real, stopped = window.vm, viewmodel.query_job, []
    release, finished = threading.Event(), threading.Event()

    def job(store, req, cancelled=None):
        if req.text != "rotate signing keys":
            return real(store, req)
        try:
            assert release.wait(60), "the second query never answered"
            stopped.append(cancelled())
            return real(store, req)
        finally:
            finished.set()

    monkeypatch.setattr(viewmodel, "query_job", job)
    vm.set_query("rotate signing keys")
    vm.set_query("editor theme preference")
    vm.jobs.wait_idle()  # the second query answered; the first one is still held
    assert not finished.is_set() and vm.query.text == "editor theme preference"
    shown = window.stages.view("raw").model
    second = [shown.row_id(r) for r in range(shown.live_count())]
    release.set()
    qtbot.waitUntil(finished.is_set, timeout=30_000)
    assert QThreadPool.globalInstance().waitForDone(30_000)  # its answer is now queued
    QCoreApplication.processEvents()  # and delivered to the window, which drops it
    vm.jobs.wait_idle()
    assert stopped == [True]
    assert vm.query.text == "editor theme preference"
    p = vm.params
    want = run(vm.store, build_query(vm.store, p.mode, text=vm.text), p)
    assert [shown.row_id(r) for r in range(shown.live_count())] == want.ids("raw") == second


def test_use_as_query_searches_with_the_rows_vector(window, ready) -> None:
    vm = window.vm
    raw = window.stages.view("raw")
    rid = raw.model.row_id(3)
    raw.row_action.emit("use_as_query", rid)
    ready(vm)
    assert vm.query.source == f"example:{rid}"
    assert window.query_bar.example.isVisible()
    p = vm.params
    want = run(vm.store, build_query(vm.store, p.mode, text=vm.text, vector_of=str(rid)), p)
    assert vm.trace.ids("raw") == want.ids("raw")
    window.query_bar.example.click()
    ready(vm)
    assert vm.vector_of is None and vm.query.source.startswith("text")


def test_expected_row_shows_where_it_drops_and_the_overfetch_that_returns_it(window,
                                                                              qtbot) -> None:
    vm = window.vm
    pool = vm.session.lanes[0].pool
    first_in_scope = pool.ids[np.flatnonzero(pool.in_scope)[0]]
    window.expected.entry.setText(str(first_in_scope))
    window.expected.entry.returnPressed.emit()
    qtbot.waitUntil(lambda: bool(vm.expectations) and not vm.expect_busy, timeout=30_000)
    got = vm.expectations[0][0]
    p = vm.params
    query = build_query(vm.store, p.mode, text=vm.text)
    want = analyse(vm.store, query, run(vm.store, query, p), [str(first_in_scope)])[0]
    assert got == want
    assert got.dropped_at == "raw" and got.min_overfetch is not None
    assert "Set over-fetch" in window.expected.body.text()
    window.expected.body.linkActivated.emit(f"overfetch:{got.min_overfetch}")
    assert vm.trace.final_rank[vm.trace.row_of(first_in_scope)] > 0
    assert "★" in window.stages.view("final").model.data(
        window.stages.view("final").model.index(
            window.stages.view("final").model.row_for_id(first_in_scope), 1))


def test_preset_picker_sets_every_parameter(window, ready) -> None:
    bar = window.query_bar
    bar.preset.setCurrentIndex(bar.preset.findData("other-plugin"))
    bar.preset.activated.emit(bar.preset.currentIndex())
    ready(window.vm)
    assert window.vm.params == build_params(preset="other-plugin", limit=10,
                                            scope="vault-agent")
    assert window.sliders.sliders["overfetch"].value() == pytest.approx(10.0)
    assert window.sliders.sliders["blend"].value() == pytest.approx(0.3)
    assert bar.mode.currentData() == "vector"


def test_dropping_a_folder_opens_it(window, ready, demo_path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(demo_path)])
    event = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    ready(window.vm)
    assert window.vm.store.uri == demo_path and not window.vm.opened.demo
    assert demo_path in [a.text() for a in window.recent_menu.actions()]


def test_keyboard_shortcuts_are_bound(window, qtbot) -> None:
    bound = {s.toString() for a in window.actions() for s in a.shortcuts()}
    for keys in ("Ctrl+O", "Ctrl+L", "Ctrl+R", "F5", "Ctrl+E", "Ctrl+Shift+S"):
        assert QKeySequence(keys).toString() in bound
    window.activateWindow()
    window.stages.view("raw").table.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is window.query_bar.text


def test_export_trace_json_and_png(window, tmp_path) -> None:
    """The exported JSON is what `inspector query --json` prints for the same parameters."""
    vm = window.vm
    out = tmp_path / "trace.json"
    window.export_json(str(out))
    fresh = run(vm.store, build_query(vm.store, vm.params.mode, text=vm.text), vm.params)
    assert json.loads(out.read_text()) == json.loads(json.dumps(fresh.to_json()))
    png = tmp_path / "view.png"
    window.export_png(str(png))
    img = QImage(str(png))
    assert (img.width(), img.height()) == (window.width(), window.height())


def test_export_stage_tables_writes_what_the_engine_answers(window, tmp_path) -> None:
    """File > Export stage tables writes the files `inspector query --export` writes for the
    trace on screen, and refuses to write over them."""
    from inspector.core.errors import InspectorError
    from inspector.core.evidence.exports import export_answer

    assert window.action("export_tables") in window.menu("file").actions()
    vm = window.vm
    written = window.export_tables(str(tmp_path / "win"))
    fresh = run(vm.store, build_query(vm.store, vm.params.mode, text=vm.text), vm.params)
    want = export_answer(json.loads(json.dumps(fresh.to_json())), tmp_path / "engine",
                         fates=fresh.fates())
    assert [p.name for p in written] == [p.name for p in want]
    for got, expected in zip(written, want, strict=True):
        assert got.read_bytes() == expected.read_bytes(), got.name
    with pytest.raises(InspectorError, match="exists"):
        window.export_tables(str(tmp_path / "win"))


def test_tooltips_explain_each_parameter(window) -> None:
    """Each control's tooltip says what its parameter does, in the engine's own terms."""
    bar, sliders = window.query_bar, window.sliders.sliders
    says = {bar.preset: "real system", bar.mode: "reciprocal rank", bar.scope: "scope",
            bar.rule: "repo_prefix", bar.filter: "top-k cut", bar.limit: "results",
            bar.text: "Embedded", sliders["overfetch"]: "ceil(limit × F)",
            sliders["blend"]: "(1 − w) + w × importance", sliders["min_score"]: "dropped"}
    for widget, words in says.items():
        assert words in widget.toolTip(), (widget.objectName(), widget.toolTip())


def slide(win, key: str, value: float) -> None:
    """Move a slider as a user would, then apply the (coalesced) move at once."""
    win.sliders.sliders[key].setValue(value)
    win.sliders.flush()


def test_scope_map_offers_its_scopes_and_filters_by_them(window, ready, tmp_path) -> None:
    path = tmp_path / "scopes.json"
    path.write_text(json.dumps({"keys-team": ["vault-agent", "auth-gateway"]}))
    vm = window.vm
    vm.load_scope_map(str(path))
    vm.set_param("scope", "keys-team")
    ready(vm)
    bar = window.query_bar
    assert [bar.scope.itemText(i) for i in range(bar.scope.count())] == ["keys-team"]
    assert bar.rule.currentData() == "map"
    slide(window, "overfetch", 5.0)
    assert len(vm.trace.stage("scoped")) > 0
    repos = vm.trace.pool.columns["repo"]
    assert {repos[int(i)] for i in vm.trace.stage("scoped").rows} <= {"vault-agent",
                                                                     "auth-gateway"}
    vm.load_scope_map(str(tmp_path / "missing.json"))
    assert "does not exist" in window.error_bar.label.text()


def test_a_failed_query_clears_stale_rows_and_sliders_do_not_hide_its_error(window,
                                                                            ready) -> None:
    vm = window.vm
    vm.set_preset("other-plugin")  # scope column 'scope', which the demo table lacks
    ready(vm)
    assert vm.error is not None and "scope" in vm.error
    message = vm.error
    assert vm.traces == () and window.stages.view("raw").model.live_count() == 0
    slide(window, "blend", 0.6)  # a tick on no pool must not replace the real reason
    assert window.error_bar.label.text() == message
    vm.set_param("scope", None)
    ready(vm)
    assert vm.error is None and vm.trace is not None


def test_the_query_job_runs_the_question_the_window_asks(window, ready, monkeypatch) -> None:
    """One home for what is asked (issue 18): the window's query job receives the window's
    question and runs the parameters and query `inspector query` derives from it; a JSON array
    that does not parse is still refused with its sentence, never embedded as words."""
    from inspector.core.engine.inputs import question_params
    from inspector.qt import viewmodel

    vm, seen, real = window.vm, [], viewmodel.query_job

    def job(store, req, cancelled=None):
        seen.append(req)
        return real(store, req, cancelled)

    monkeypatch.setattr(viewmodel, "query_job", job)
    vm.set_param("blend", 0.3)
    ready(vm)
    vm.set_query("rotate signing keys")
    ready(vm)
    q = seen[-1].question
    assert q == vm.to_question() and q.text == "rotate signing keys"
    assert q.params["blend"] == 0.3 and question_params(q) == vm.params
    assert vm.traces[0].params == vm.lane_params(0) and vm.query.text == "rotate signing keys"
    vm.set_query("[1, oops")
    ready(vm)
    assert seen[-1].question.text == "[1, oops"
    assert window.error_bar.isVisible() and "JSON array" in window.error_bar.label.text()
