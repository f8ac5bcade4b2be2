"""Helpers for window tests: what a stage table shows, the question `inspector query --json`
is asked for the window's question, and moving a slider as a user would."""

from __future__ import annotations

import json
import time
from typing import Any

from PySide6.QtCore import QCoreApplication

from inspector.core.jsonio import dumps


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


def engine_json(win: Any) -> dict[str, Any]:
    """The one answer (schema 3) the engine gives for the window's question on its store, as
    `inspector query --json` prints it, without a process."""
    from inspector.core.engine.flow.answer import to_json
    from inspector.core.engine.flow.question import answer

    return json.loads(dumps(to_json(answer(win.vm.question.plain(), win.vm.store))))


def assert_shows(win: Any, j: dict[str, Any]) -> None:
    """The window shows exactly the answer `inspector query --json` gave: each stage's rows
    (ids, scores as the table prints them) and count, the counters, the diagnosis with its
    fixes, the expected rows."""
    vm = win.vm
    on_screen = [s for s in vm.trace.stages]
    assert [s.name for s in on_screen] == [s["name"] for s in j["stages"]]
    for st in j["stages"]:
        if st["role"] == "query":
            continue
        sec = section(win, st["name"])
        m = sec.model
        assert [(m.kept[r].id, m.cell(r, "score")) for r in range(len(m.kept))] == \
            [(c["id"], f"{c['score']:.4f}") for c in st["candidates"]], st["name"]
        assert f"({st['count']})" in sec.toggle.text() or f"→ {st['count']})" in \
            sec.toggle.text()
    counted = {name: n for name, n, _, _ in win.funnel.rows}
    for name, n in counted.items():
        assert j["counters"][name] == n
    d = j["diagnosis"]
    assert win.banner.title.text().endswith(d["title"]) or d["code"] == "ok"
    assert d["message"] in win.banner.message.text()
    assert [b.text() for b in win.banner.buttons] == [f["label"] for f in d["fixes"]]
    assert vm.answer is not None
    # the expected rows as the panel reads them (how many runs the search took is not shown:
    # the window's session remembers runs across answers)
    shown = json.loads(dumps(list(vm.answer.expected)))
    assert [{k: v for k, v in e.items() if k != "tried"} for e in shown] == \
        [{k: v for k, v in e.items() if k != "tried"} for e in j["expect"]]


