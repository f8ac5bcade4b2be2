"""File > Export receipt writes the bundle through the core; File > Open receipt reopens it
offline, where the sliders re-rank the bundled pool exactly as derive on the original does."""

from __future__ import annotations

import json

import pytest

from inspector.core.analysis.truth import trim_pool
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pools import exhaustive_pool
from inspector.core.engine.trace import STAGES
from inspector.core.evidence import bundle
from inspector.core.evidence.receipt import build_receipt
from tests.qt.qtkit import assert_matches_engine, shown


def export(window, qtbot, path) -> None:
    rc = window.tuning_receipts
    rc.export(str(path))
    qtbot.waitUntil(lambda: path.with_suffix(".html").exists(), timeout=60_000)
    qtbot.waitUntil(lambda: "Receipt written" in window.status_label.text(), timeout=10_000)


def test_exported_receipt_reopens_offline_and_re_ranks_like_the_original_pool(
        window, qtbot, ready, tmp_path) -> None:
    vm = window.vm
    vm.set_param("overfetch", 3.0)
    store, query, p0 = vm.store, vm.query, vm.params
    path = tmp_path / "receipt.json"
    export(window, qtbot, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "inspector-bundle" and doc["params"] == p0.to_json()
    assert "<script type=\"application/json\" id=\"bundle\">" in \
        path.with_suffix(".html").read_text(encoding="utf-8")
    # the original pool, as the receipt trims it, to compare against after the store is gone
    original = trim_pool(exhaustive_pool(store, query, p0), 300)
    rc = window.tuning_receipts
    rc.open(str(path))
    qtbot.waitUntil(lambda: rc.offline, timeout=30_000)
    assert vm.store is None and vm.params == p0
    assert not window.query_bar.isEnabled()
    dock = window.tuning_dock
    assert dock.offline_note.isVisible() and not dock.sweep.run_button.isEnabled()
    assert not dock.compare.run_button.isEnabled()
    assert "(offline)" in window.windowTitle()
    assert window.query_bar.store_label.text().startswith("receipt ")  # not "demo store"
    assert window.store_features.pinned_label.text() == "offline"
    assert not window.store_features.shape_notice.isVisible()
    for f, w, ms in ((3.0, 0.0, 0.0), (1.0, 0.0, 0.0), (5.0, 0.5, 0.0), (2.5, 1.0, 0.02)):
        for key, value in (("overfetch", f), ("blend", w), ("min_score", ms)):
            window.sliders.sliders[key].setValue(value)
        window.sliders.flush()
        p = p0.with_(overfetch=f, blend=w, min_score=ms)
        assert vm.params == p
        want = derive(original, p, probe=original)
        for stage in STAGES:
            assert [i for i, _ in shown(window, stage)] == [str(x) for x in want.ids(stage)]
        assert vm.trace.counters == want.counters
        assert vm.trace.diagnosis == want.diagnosis
    # a new query is impossible offline and says so; opening a store ends the mode
    vm.run()
    assert not vm.busy
    window.open_store(None)
    ready(vm)
    qtbot.waitUntil(lambda: not rc.offline, timeout=30_000)
    assert window.query_bar.isEnabled() and dock.sweep.run_button.isEnabled()
    ready(vm)
    qtbot.waitUntil(lambda: vm.trace is not None, timeout=30_000)
    assert_matches_engine(window)
    dock.hide()  # the plots that yielded their room to it come back up to date
    qtbot.waitUntil(window.scatter.isVisible, timeout=10_000)
    assert_matches_engine(window)


def test_receipt_records_comparison_and_judgments(window, qtbot, tmp_path) -> None:
    vm = window.vm
    dock = window.tuning_dock
    dock.compare.run()
    qtbot.waitUntil(lambda: not dock.compare.running, timeout=60_000)
    raw = vm.trace.ids("raw")
    dock.judgments.mark(raw[0], 2)
    path = tmp_path / "r.json"
    export(window, qtbot, path)
    loaded = bundle.load(path)
    assert loaded.data["judgments"] == {str(raw[0]): 2.0}
    assert loaded.data["comparison"]["b"]["label"] == "docs-pushdown"
    assert loaded.data["map"] is not None
    window.tuning_receipts.open(str(path))
    qtbot.waitUntil(lambda: window.tuning_receipts.offline, timeout=30_000)
    dock.show_tab("map")
    assert dock.map.map is not None and list(dock.map.map.ids) == loaded.data["map"]["ids"]


def test_a_bad_receipt_is_one_sentence_and_the_window_stays_online(window, qtbot,
                                                                    tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something-else"}), encoding="utf-8")
    rc = window.tuning_receipts
    rc.open(str(bad))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10_000)
    assert window.error_bar.label.text() == f"{bad} is not an inspector bundle."
    assert not rc.offline and window.vm.store is not None


def test_expected_rows_in_an_offline_receipt_say_why_not(qtbot, window) -> None:
    """Marking an expected row with no store is one sentence, not a crash."""
    from inspector.core.evidence.bundle import Loaded
    from inspector.qt.tuning import receipts

    vm = window.vm
    pool = vm.session.lanes[0].pool
    receipts.enter_offline(vm, Loaded(pool=pool, params=vm.params, data={}))
    assert vm.store is None
    vm.toggle_expected(vm.trace.ids("raw")[0])
    qtbot.waitUntil(lambda: vm.error is not None, timeout=5_000)
    assert "open the store" in vm.error
    assert not vm.expect_busy


@pytest.mark.parametrize(("field", "value"), [("ids", {"a": 1}), ("in_scope", {"x": [1]}),
                                              ("vec_rank", {"dtype": "int64", "data": [7]})])
def test_a_receipt_with_wrong_types_is_one_sentence_not_an_event_loop_error(
        window, qtbot, ready, tmp_path, field, value) -> None:
    """Issue 21: `pool.ids = {"a": 1}` threw inside the event loop when the window derived
    from it; the bundle is now validated when it is loaded."""
    vm = window.vm
    ready(vm)
    doc = build_receipt(vm.store, vm.query, vm.params, with_map=False)
    doc["pool"][field] = value
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")
    rc = window.tuning_receipts
    rc.open(str(path))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10_000)
    text = window.error_bar.label.text()
    assert text.startswith(f"Bundle {path} is damaged: pool.{field}") and "\n" not in text
    assert not rc.offline and vm.store is not None


def test_entering_receipt_mode_never_grows_the_window_past_its_screen(qtbot, tmp_path) -> None:
    """Opening a receipt shows the tuning dock: the window grew to 1024x737 for an instant
    in a 1024x681 client area (a 1024x700 screen under openbox), the plots yielding their
    room only once the dock was shown. Every resize while entering receipt mode is kept
    within the room the window had."""
    from PySide6.QtCore import QEvent, QObject, QSize

    from inspector.qt.harness import gallery

    room = QSize(1024, 681)
    win = gallery.make_window((room.width(), room.height()), "light")
    qtbot.addWidget(win)
    gallery.enter_state(win, "importance", tmp_path)
    path = tmp_path / "receipt.json"
    export(win, qtbot, path)
    sizes: list[QSize] = []

    class Sizes(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
            if obj is win and event.type() == QEvent.Type.Resize:
                sizes.append(QSize(event.size()))
            return False

    spy = Sizes()
    win.installEventFilter(spy)
    win.tuning_receipts.open(str(path))
    qtbot.waitUntil(lambda: win.tuning_receipts.offline and win.tuning_dock.isVisible(),
                    timeout=60_000)
    win.vm.jobs.wait_idle()
    qtbot.wait(50)
    win.removeEventFilter(spy)
    grown = [(s.width(), s.height()) for s in sizes
             if s.width() > room.width() or s.height() > room.height()]
    assert grown == [], f"the window grew past {room.width()}x{room.height()}: {grown}"
    assert win.size() == room and not win.tuning_dock.isFloating()


def test_the_exported_receipt_holds_the_window_question(window, qtbot, tmp_path) -> None:
    """The receipt keeps the question the window asks (issue 18), whose parameters are the
    receipt's own: what a reader needs to ask it again."""
    from inspector.core.engine.inputs import question_params

    vm = window.vm
    vm.set_params({"overfetch": 2.5, "blend": 0.2})
    path = tmp_path / "q.json"
    export(window, qtbot, path)
    loaded = bundle.load(path)
    assert loaded.question == vm.to_question()
    assert (loaded.question.store, loaded.question.text) == (vm.store.uri, vm.text)
    assert question_params(loaded.question) == loaded.params == vm.params
