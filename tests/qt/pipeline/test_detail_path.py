"""The detail pane's path (issue 34): each stage that saw the selected row beside what happened
to it there, read off the widgets as a person reads them, kept in step with every slider tick
and with a row that leaves early; a label is told only a text it does not show already (the
rich-text table it replaces was laid out whole on every tick)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel

from inspector.qt.pipeline.detail import row_path
from tests.qt.qtkit import move


def _shown(win: Any) -> list[tuple[str, str]]:
    """The (stage, what) pairs on screen, from the visible labels themselves."""
    path = win.detail.path
    stages = [w for w in path.findChildren(QLabel, "pathStage") if w.isVisibleTo(path)]
    whats = [w for w in path.findChildren(QLabel, "pathWhat") if w.isVisibleTo(path)]
    assert len(stages) == len(whats)
    return [(s.text(), w.text()) for s, w in zip(stages, whats, strict=True)]


def test_the_path_shows_every_stage_the_row_saw_and_follows_each_tick(window) -> None:
    vm = window.vm
    vm.load_suggested(1)  # importance-blend: a blend stage between the fetch and the limit
    vm.jobs.wait_idle(60)
    rid = vm.selected
    assert rid is not None
    for weight in (0.0, 0.6, 1.0):
        move(window, "blend.weight", weight)
        want = row_path(vm.trace, str(vm.selected))
        assert _shown(window) == want and len(want) >= 3
        blend = next(what for stage, what in want if stage == "blend")
        score = next(s.score for st in vm.trace.stages if st.name == "blend"
                     for s in st.rows if s.id == vm.selected)
        assert blend.endswith(f"{score:.4f}")  # the engine's own score, as the table shows it
        inputs = window.detail.path.inputs
        assert inputs.isVisibleTo(window.detail.path) and "multiplier" in inputs.text()


def test_a_row_that_left_early_shows_a_shorter_path_and_no_stale_lines(window) -> None:
    vm = window.vm
    vm.load_suggested(1)
    vm.jobs.wait_idle(60)
    full = _shown(window)  # the first row's: it went through every stage
    move(window, "min_score.min", 0.5)  # a threshold before the last stage drops rows
    last = vm.trace.stages[-1].name
    dropped = next((d.id for st in vm.trace.stages if st.name not in ("fetch", last)
                    for d in st.dropped), None)
    assert dropped is not None, "no row left before the last stage"
    vm.select(dropped)  # as a click on its row in a stage table selects it
    vm.jobs.wait_idle(60)
    want = row_path(vm.trace, dropped)
    assert _shown(window) == want
    assert want[-1][1].startswith("✗ ") and len(want) < len(full)
    assert window.detail.path.lines()[: len(want)] == \
        [f"{s}  {w}" for s, w in want]
