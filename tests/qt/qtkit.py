"""Helpers for window tests: what a stage table shows, the engine's answer for the window's
current parameters, and moving a slider as a user would."""

from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import QCoreApplication, Qt

from inspector.core.engine.inputs import build_query
from inspector.core.engine.pipeline import run
from inspector.core.engine.trace import STAGES


def shown(win, stage: str, lane: int = 0) -> list[tuple[str, str]]:
    """(id, displayed score text) per row, as the stage table shows them."""
    model = win.stages.view(stage, lane).model
    col = model.columns.index("score" if "score" in model.columns else "base")
    return [(str(model.row_id(r)),
             model.data(model.index(r, col), Qt.ItemDataRole.DisplayRole))
            for r in range(model.live_count())]


def past_rows(win, stage: str, lane: int = 0) -> list[list[object]]:
    """What every table row past the stage's rows shows, cell by cell."""
    model = win.stages.view(stage, lane).model
    return [[model.data(model.index(r, c), Qt.ItemDataRole.DisplayRole)
             for c in range(model.columnCount())]
            for r in range(model.live_count(), model.rowCount())]


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
        assert_past_rows_marked(win, stage, lane)
    assert win.funnel.lanes[lane][1] == expected.counters
    assert win.vm.traces[lane].diagnosis == expected.diagnosis
    # hidden plots (a docked dock took their room) catch up when shown: compared then
    if lane == win.vm.focus_lane and not win.plots_pending and win.scatter.isVisible():
        assert_plots_match(win, expected)


def assert_past_rows_marked(win, stage: str, lane: int = 0) -> None:
    """Rows past the stage's rows are blank and the first says where the stage ends."""
    model = win.stages.view(stage, lane).model
    past = past_rows(win, stage, lane)
    for n, cells in enumerate(past):
        texts = [c for c in cells if c]
        assert texts == ([model.past_note()] if n == 0 else []), (stage, n, cells)
        assert model.row_id(model.live_count() + n) is None


def assert_plots_match(win, expected) -> None:
    """The scatter's outcome groups and the rank-shift dots are the engine's rows."""
    raw = expected.stage("raw").rows
    for outcome, item in win.scatter.groups.items():
        want = sorted(str(expected.pool.ids[i]) for i in raw
                      if expected.outcome(int(i)) == outcome)
        got = sorted(str(p.data()) for p in item.points())
        assert got == want, f"scatter group {outcome} differs from pipeline.run"
        for pt in item.points():
            i = expected.row_of(pt.data())
            assert (pt.pos().x(), pt.pos().y()) == (
                float(expected.importance_used[i]), float(expected.base[i]))
    scoped = expected.stage("scoped").rows
    right = {str(p.data()): p.pos().y() for p in win.bump.dots.points() if p.pos().x() == 1}
    for i in scoped:
        rid = str(expected.pool.ids[i])
        if rid in right:
            assert right[rid] == float(expected.rank_after[i]), "rank shift differs"
    if len(scoped):
        assert np.isclose(win.bump.limit_line.value(), expected.params.limit + 0.5)


def rest(win, timeout: float = 5.0) -> None:
    """Let the sliders rest: spin the event loop until the plots have caught up by themselves."""
    end = time.monotonic() + timeout
    while win.plots_pending:
        assert time.monotonic() < end, "the plots never caught up after the slider rested"
        QCoreApplication.processEvents()
        time.sleep(0.005)


def move(win, key: str, value: float) -> None:
    """Move a slider as a user would: the slider's own valueChanged drives the window."""
    win.sliders.sliders[key].setValue(value)
    win.sliders.flush()  # moves are coalesced per event-loop turn; apply this one now
    win.flush_plots()  # and what the plots do once the slider rests, without the wait
