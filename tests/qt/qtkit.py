"""Helpers for window tests: what a stage table shows, the engine's answer for the window's
current parameters, and moving a slider as a user would."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.core.engine.inputs import build_query
from inspector.core.engine.pipeline import run
from inspector.core.engine.trace import STAGES


def shown(win, stage: str, lane: int = 0) -> list[tuple[str, str]]:
    """(id, displayed score text) per row, as the stage table shows them."""
    model = win.stages.view(stage, lane).model
    col = model.columns.index("score" if "score" in model.columns else "base")
    return [(str(model.row_id(r)),
             model.data(model.index(r, col), Qt.ItemDataRole.DisplayRole))
            for r in range(model.rowCount())]


def engine(win, lane: int = 0):
    vm = win.vm
    p = vm.lane_params(lane)
    query = build_query(vm.store, p.mode, text=vm.text or None, vector_of=vm.vector_of)
    return run(vm.store, query, p)


def assert_matches_engine(win, lane: int = 0) -> None:
    expected = engine(win, lane)
    for stage in STAGES:
        got = shown(win, stage, lane)
        rows = expected.stage(stage).rows
        values = expected.score if stage in ("blended", "final") else expected.base
        want = [(str(expected.pool.ids[i]), f"{values[i]:.4f}") for i in rows]
        assert got == want, f"stage {stage} differs from pipeline.run"
        title = win.stages.view(stage, lane).title.text()
        assert title.endswith(f"({len(rows)})")
    assert win.funnel.lanes[lane][1] == expected.counters
    assert win.vm.traces[lane].diagnosis == expected.diagnosis


def move(win, key: str, value: float) -> None:
    """Move a slider as a user would: the slider's own valueChanged drives the window."""
    win.sliders.sliders[key].setValue(value)
    win.sliders.flush()  # moves are coalesced per event-loop turn; apply this one now
