"""The Audit tab runs the engine's audit (what `inspector audit --json` prints), shows its
progress, stops on Cancel with what it probed, and opens a never-recalled memory in the stage
view by its own vector and text, in its own scope."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

from inspector.cli.main import main


def cli(*argv: str) -> dict[str, Any]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(list(argv)) == 0
    return json.loads(buf.getvalue())


def _panel(window: Any, preset: str, limit: int) -> Any:
    vm = window.vm
    vm.set_preset(preset)
    vm.put(limit=limit)
    vm.jobs.wait_idle()
    window.tuning_dock.show_tab("audit")
    return window.tuning_dock.audit


def test_the_audit_tab_shows_the_engines_audit_and_opens_a_memory(window) -> None:
    vm = window.vm
    panel = _panel(window, "memory-plugin", 1)
    panel.run()
    vm.jobs.wait_idle(300)
    got = panel.result
    want = cli("audit", "recall", vm.store.uri, "--preset", "memory-plugin", "--limit", "1",
               "--json")
    assert {k: v for k, v in got.items() if k not in ("texts", "now")} == \
        {k: v for k, v in want.items() if k != "now"}  # the clock is each run's own
    assert panel.table.rowCount() == 1
    assert panel.table.item(0, 0).text() == "agent-memory-timezone-2"
    assert panel.table.item(0, 2).text() == "shadowed"
    assert panel.bar.value() == panel.bar.maximum() and panel.run_button.isEnabled()
    panel.table.cellDoubleClicked.emit(0, 0)
    vm.jobs.wait_idle()
    q = vm.question
    scope = got["never_recallable"][0]["scope"]  # the memory's own scope, as the audit says
    assert q.vector_of == "agent-memory-timezone-2" and q.scopes == (
        None if scope is None else [str(scope)])
    assert q.text == "the user timezone is europe lisbon"
    assert vm.trace.final.ids == ["agent-memory-timezone-1"]  # its twin took its place
    (e,) = vm.answer.expected
    assert q.expect == ["agent-memory-timezone-2"] and e["id"] == "agent-memory-timezone-2"
    assert e["reason"] != "returned"


def test_cancel_keeps_the_memories_probed_so_far(window, qtbot) -> None:
    vm = window.vm
    panel = _panel(window, "importance-blend", 10)
    panel.run()
    # the first progress report has reached the bar (not waitSignal on `advanced`: it is
    # emitted from the worker thread many times, and a queued emission delivered after the
    # blocker's loop is gone crashed the process in a full run)
    qtbot.waitUntil(lambda: panel.bar.maximum() > 0 and panel.bar.value() > 0,
                    timeout=300_000)
    panel.cancel()
    vm.jobs.wait_idle(300)
    res = panel.result
    assert res["cancelled"] and 0 < res["probes"] < res["of"] == 3024
    assert "cancelled" in panel.summary.text() and panel.run_button.isEnabled()


def test_the_scopes_audit_lists_every_scope(window) -> None:
    vm = window.vm
    panel = _panel(window, "docs-before-fix", 10)
    panel.kind.setCurrentText("scopes")
    panel.sample.setValue(2)
    panel.run()
    vm.jobs.wait_idle(300)
    want = cli("audit", "scopes", vm.store.uri, "--preset", "docs-before-fix", "--per-scope",
               "2", "--json")
    assert panel.result == want
    assert panel.table.rowCount() == len(want["scopes"])
