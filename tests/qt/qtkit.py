"""Helpers for window tests: what a stage table shows, the question `inspector query --json`
is asked for the window's question, and moving a slider as a user would."""

from __future__ import annotations

import json
import time
from typing import Any

from PySide6.QtCore import QCoreApplication


def shown(win: Any, stage: str) -> list[tuple[str, str]]:
    """(id, displayed score text) per kept row, as the stage's table shows them."""
    sec = section(win, stage)
    m = sec.model
    return [(m.kept[r].id, m.cell(r, "score")) for r in range(len(m.kept))]


def section(win: Any, stage: str) -> Any:
    for sec in win.stages.visible_sections():
        if sec.summary is not None and sec.summary.name == stage:
            return sec
    raise AssertionError(f"no stage {stage} on screen")


def argv_of(q: Any) -> list[str]:
    """The `inspector query` arguments that ask the question `q` (a Question)."""
    out = [q.store]
    if q.table:
        out += ["--table", q.table]
    out += ["--preset", q.preset] if q.preset else ["--pipeline", q.pipeline_file]
    if q.text:
        out += ["--text", q.text]
    if q.vector is not None:
        out += ["--vector", json.dumps(q.vector)]
    if q.vector_of:
        out += ["--vector-of", q.vector_of]
    if q.embedder:
        out += ["--embedder", q.embedder]
    if q.system_config:
        out += ["--system-config", q.system_config]
    for k, v in q.set.items():
        out += ["--set", f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
    for k, v in q.widen.items():
        out += ["--widen", f"{k}={v}"]
    if q.exact:
        out.append("--exact")
    for role, col in q.columns.items():
        out += ["--column", f"{role}={col}"]
    if q.scopes is not None:
        out += ["--scope-list", json.dumps(q.scopes)]
    if q.limit is not None:
        out += ["--limit", str(q.limit)]
    if q.now is not None:
        out += ["--now", str(int(q.now)) if float(q.now).is_integer() else str(q.now)]
    for rid in q.expect:
        out += ["--expect", rid]
    return out


def query_json(capsys: Any, q: Any) -> dict[str, Any]:
    """What `inspector query --json` prints for the question."""
    from inspector.cli.main import main

    capsys.readouterr()
    code = main(["query", *argv_of(q), "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def move(win: Any, key: str, value: float) -> None:
    """Move a slider as a user would: the slider's own valueChanged drives the window."""
    win.sliders.sliders[key].setValue(value)
    win.sliders.flush()  # a drag asks once per frame; apply this value now
    win.vm.jobs.wait_idle(60)
    win.flush_plots()  # and what the plots do once the slider rests, without the wait


def rest(win: Any, timeout: float = 5.0) -> None:
    """Spin the event loop until the plots have caught up by themselves."""
    end = time.monotonic() + timeout
    while win.plots_pending:
        assert time.monotonic() < end, "the plots never caught up after the slider rested"
        QCoreApplication.processEvents()
        time.sleep(0.005)
