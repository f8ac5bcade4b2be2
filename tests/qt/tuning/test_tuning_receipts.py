"""File > Export receipt writes the bundle of the window's question through the core; File >
Open receipt says in one sentence what it cannot do (reopening offline comes back when
receipts are answers of the one engine), and a bad bundle is one sentence; the window stays
online either way."""

from __future__ import annotations

import json

import pytest

from inspector.core.evidence import bundle
from inspector.core.evidence.receipt import build_receipt
from inspector.qt.tuning.bridge import legacy_job


def export(window, qtbot, path) -> None:
    rc = window.tuning_receipts
    rc.export(str(path))
    qtbot.waitUntil(lambda: path.with_suffix(".html").exists(), timeout=60_000)
    qtbot.waitUntil(lambda: "Receipt written" in window.status_label.text(), timeout=10_000)


def test_the_exported_receipt_holds_the_window_question(window, qtbot, tmp_path) -> None:
    """The receipt keeps the question the window asks, whose parameters are the receipt's
    own: what a reader needs to ask it again."""
    from inspector.core.engine.inputs import question_params

    vm = window.vm
    vm.put(set={"fetch.overfetch": 2.5, "blend.weight": 0.2})
    vm.jobs.wait_idle(60)
    path = tmp_path / "q.json"
    export(window, qtbot, path)
    loaded = bundle.load(path)
    assert loaded.question == vm.question.plain()
    assert (loaded.question.store, loaded.question.text) == (vm.store.uri,
                                                             vm.question.text)
    assert question_params(loaded.question) == loaded.params
    assert (loaded.params.overfetch, loaded.params.blend) == (2.5, 0.2)


def test_opening_a_receipt_says_what_it_cannot_do_and_stays_online(window, qtbot,
                                                                  tmp_path) -> None:
    path = tmp_path / "r.json"
    export(window, qtbot, path)
    rc = window.tuning_receipts
    rc.open(str(path))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=30_000)
    text = window.error_bar.label.text()
    assert "receipt" in text.lower() and "\n" not in text
    assert not rc.offline and window.vm.store is not None and window.vm.trace is not None


def test_a_bad_receipt_is_one_sentence_and_the_window_stays_online(window, qtbot,
                                                                    tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something-else"}), encoding="utf-8")
    rc = window.tuning_receipts
    rc.open(str(bad))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10_000)
    assert window.error_bar.label.text() == f"{bad} is not an inspector bundle."
    assert not rc.offline and window.vm.store is not None


@pytest.mark.parametrize(("field", "value"), [("ids", {"a": 1}), ("in_scope", {"x": [1]}),
                                              ("vec_rank", {"dtype": "int64", "data": [7]})])
def test_a_receipt_with_wrong_types_is_one_sentence_not_an_event_loop_error(
        window, qtbot, tmp_path, field, value) -> None:
    """Issue 21: `pool.ids = {"a": 1}` threw inside the event loop when the window derived
    from it; the bundle is validated when it is loaded."""
    vm = window.vm
    vm.jobs.wait_idle(60)
    params, query, _ = legacy_job(vm.store, vm.question.plain())
    doc = build_receipt(vm.store, query, params, with_map=False)
    doc["pool"][field] = value
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")
    rc = window.tuning_receipts
    rc.open(str(path))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10_000)
    text = window.error_bar.label.text()
    assert text.startswith(f"Bundle {path} is damaged: pool.{field}") and "\n" not in text
    assert not rc.offline and vm.store is not None
