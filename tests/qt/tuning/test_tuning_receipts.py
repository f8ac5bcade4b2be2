"""File > Export receipt writes the receipt `inspector report` writes for the window's question
(by the guarded writer: never into the open store); File > Open receipt asks its question
again on the open store as of the recorded version; a receipt that is not one, or is damaged,
is one sentence and the window keeps its question."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from inspector.core.evidence import receipt as receipts
from tests.qt.qtkit import argv_of, assert_shows, engine_json


def export(window, qtbot, path: Path) -> None:
    rc = window.tuning_receipts
    rc.export(str(path))
    qtbot.waitUntil(lambda: "Receipt written" in window.status_label.text(), timeout=120_000)
    assert path.with_suffix(".html").exists()


def cli_report(q: Any, out: Path) -> dict[str, Any]:
    from inspector.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", *argv_of(q), "--out", str(out), "--no-html"]) == 0
    return json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))


def _same(doc: dict[str, Any]) -> dict[str, Any]:
    """A receipt without what differs between two runs of one question (the time written,
    the seconds a sweep took)."""
    out = json.loads(json.dumps(doc))
    out.pop("created")
    out["evidence"]["sweep"].pop("seconds")
    return out


def test_the_exported_receipt_is_the_cli_reports(window, qtbot, tmp_path) -> None:
    """The receipt keeps the question the window asks (what a reader needs to ask it
    again), and its verdict and evidence are what `inspector report` records for it."""
    vm = window.vm
    vm.put(set={"fetch.overfetch": 2.5, "blend.weight": 0.2})
    vm.jobs.wait_idle(60)
    path = tmp_path / "q.json"
    export(window, qtbot, path)
    got = json.loads(path.read_text(encoding="utf-8"))
    loaded = receipts.load(path)
    q = vm.question.plain()
    assert loaded.before.question == q
    assert loaded.before.question.set == {"fetch.overfetch": 2.5, "blend.weight": 0.2}
    assert got["reopen"]["version"] == vm.store.version
    want = cli_report(q, tmp_path / "cli")
    assert _same(got) == _same(want)
    # the window's answer is the receipt's
    assert [c["id"] for c in got["before"]["stages"][-1]["candidates"]] == \
        list(vm.trace.final.ids)


def test_the_receipt_is_never_written_into_the_open_store(window, qtbot) -> None:
    vm = window.vm
    store = Path(vm.store.uri)
    before = sorted(p.name for p in store.rglob("*"))
    window.tuning_receipts.export(str(store / "r.json"))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=120_000)
    text = window.error_bar.label.text()
    assert "\n" not in text and "store" in text.lower()
    vm.jobs.wait_idle(60)
    assert sorted(p.name for p in store.rglob("*")) == before
    assert not (store / "r.json").exists() and not (store / "r.html").exists()


def test_opening_a_receipt_asks_its_question_again(window, qtbot, tmp_path) -> None:
    vm = window.vm
    vm.put(set={"fetch.overfetch": 2.5})
    vm.jobs.wait_idle(60)
    path = tmp_path / "r.json"
    export(window, qtbot, path)
    recorded = receipts.load(path)
    want = [c.id for c in recorded.before.stages[-1].candidates]
    vm.put(set={"fetch.overfetch": 6.0, "blend.weight": 0.9}, text="something else")
    vm.jobs.wait_idle(60)
    assert list(vm.trace.final.ids) != want
    rc = window.tuning_receipts
    rc.open(str(path.with_suffix(".html")))  # the page's JSON beside it is read
    qtbot.waitUntil(lambda: rc.loaded is not None, timeout=60_000)
    vm.jobs.wait_idle(60)
    q = vm.question
    asked = recorded.before.question
    assert (q.preset, q.set, q.text, q.scopes, q.limit) == (asked.preset, asked.set,
                                                            asked.text, asked.scopes,
                                                            asked.limit)
    assert q.now == recorded.before.params["now"]  # the recorded clock
    assert list(vm.trace.final.ids) == want
    assert_shows(window, engine_json(window))
    assert rc.path == str(path.with_suffix(".html"))
    assert not window.error_bar.isVisible()


def test_a_bad_receipt_is_one_sentence_and_the_window_keeps_its_question(window, qtbot,
                                                                        tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something-else"}), encoding="utf-8")
    vm = window.vm
    asked = vm.question.plain()
    rc = window.tuning_receipts
    rc.open(str(bad))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10_000)
    assert window.error_bar.label.text() == f"{bad} is not an inspector receipt."
    assert vm.question.plain() == asked and vm.store is not None and rc.loaded is None


def test_a_damaged_receipt_is_one_sentence_not_an_event_loop_error(window, qtbot,
                                                                    tmp_path) -> None:
    """Issue 21: a receipt edited by hand with wrong types is refused when it is loaded, in
    one sentence naming the field."""
    vm = window.vm
    path = tmp_path / "r.json"
    export(window, qtbot, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["verdict"]["before"]["returned"] = {"a": 1}
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")
    asked = vm.question.plain()
    rc = window.tuning_receipts
    rc.open(str(edited))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10_000)
    text = window.error_bar.label.text()
    assert text.startswith(f"Receipt {edited} is damaged: verdict.before.returned") and \
        "\n" not in text
    assert vm.question.plain() == asked and rc.loaded is None


def test_a_receipt_of_another_table_is_one_sentence(window, qtbot, tmp_path) -> None:
    vm = window.vm
    path = tmp_path / "r.json"
    export(window, qtbot, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["reopen"]["table"] = "elsewhere"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc), encoding="utf-8")
    asked = vm.question.plain()
    window.tuning_receipts.open(str(other))
    qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10_000)
    text = window.error_bar.label.text()
    assert text == (f"Receipt other.json was read, but its question cannot be asked again "
                    f"here: The receipt was read from table 'elsewhere', not "
                    f"'{vm.store.table_name}'.")
    assert vm.question.plain() == asked


def test_a_receipt_of_an_older_version_reopens_the_table_as_of_it(window, qtbot,
                                                                  tmp_path) -> None:
    """The receipt's question is asked on the table as of the version it read (Lance keeps
    versions): the window opens that version and shows the recorded rows."""
    from inspector.core.stores.options import OpenOptions
    from tests.storekit import versioned_store

    vm = window.vm
    path = versioned_store(tmp_path / "store")
    window.store_features.open(str(path), None, OpenOptions.make(version=1))
    vm.jobs.wait_idle(60)
    vm.put(limit=5)
    vm.set_query("[1, 0, 0, 0]")
    vm.jobs.wait_idle(60)
    assert vm.store.version == 1 and list(vm.trace.final.ids) == ["m0", "m1", "m2", "m3",
                                                                   "m4"]
    receipt = tmp_path / "v1.json"
    export(window, qtbot, receipt)
    window.store_features.open_version(None)  # the latest, v3
    qtbot.waitUntil(lambda: vm.store.version == 3 and not vm.busy, timeout=30_000)
    vm.jobs.wait_idle(60)
    assert list(vm.trace.final.ids) != ["m0", "m1", "m2", "m3", "m4"]
    window.tuning_receipts.open(str(receipt))
    qtbot.waitUntil(lambda: vm.store.version == 1 and not vm.busy, timeout=30_000)
    vm.jobs.wait_idle(60)
    assert list(vm.trace.final.ids) == ["m0", "m1", "m2", "m3", "m4"]
    assert_shows(window, engine_json(window))
