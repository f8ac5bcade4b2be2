"""A slider tick in the pipeline view changes each stage's table in place (rows added or
removed at the end, the rows that show something else repainted), never by resetting it, and
every cell then shows what a table built afresh from the engine's answer shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from inspector.core.engine.flow.answer import to_json
from inspector.qt.flow.stage_list import FlowStagesPanel
from tests.qt.flow.test_flow_window import (  # noqa: F401 - fixtures used by name
    as_engine,
    engine_view,
    fixture_dir,
    flow_win,
    live_for,
    shown,
    win,
)

_ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole,
          Qt.ItemDataRole.FontRole, Qt.ItemDataRole.TextAlignmentRole,
          Qt.ItemDataRole.ToolTipRole)


def _cells(model: Any) -> list[list[tuple[str, ...]]]:
    """Every cell as the view asks for it, role by role, as comparable text."""
    def key(v: Any) -> str:
        return v.name() if hasattr(v, "name") and not isinstance(v, str) else \
            v.toString() if hasattr(v, "toString") else str(v)
    return [[tuple(key(model.data(model.index(r, c), role)) for role in _ROLES)
             for c in range(model.columnCount())] for r in range(model.rowCount())]


def test_a_slider_tick_changes_the_stage_tables_in_place_and_as_a_fresh_run_shows_them(
        win: Any, fixture_dir: Path) -> None:  # noqa: F811
    sections = win.flow.panel.visible_sections()
    assert len(sections) == 13
    before = [_cells(s.model) for s in sections]
    structure: list[str] = []
    repainted: list[set[int]] = [set() for _ in sections]
    for k, sec in enumerate(sections):
        sec.model.dataChanged.connect(lambda a, b, *_r, k=k: repainted[k].update(
            range(a.row(), b.row() + 1)))
        for name in ("modelReset", "layoutChanged"):  # either repaints every row
            getattr(sec.model, name).connect(
                lambda *_a, k=k, n=name: (structure.append(n), repainted[k].update(
                    range(10_000))))
    sliders = win.flow.sliders
    after = before
    for key, value in (("fused.vector_weight", 0.4), ("decay_boost.half_life_days", 90.0),
                       ("hard_min_score.min", 0.5), ("fused.vector_weight", 0.9)):
        for rows in repainted:
            rows.clear()
        sliders.sliders[key].setValue(value)
        sliders.flush()
        win.vm.jobs.wait_idle(30)
        now = [_cells(s.model) for s in sections]
        for old, new, rows, sec in zip(after, now, repainted, sections, strict=True):
            kept = min(len(old), len(new))  # rows past it were inserted or removed
            changed = {r for r in range(kept) if old[r] != new[r]}
            assert changed <= rows, (sec.summary.name, sorted(changed - rows))
        after = now
    assert structure == [], "a slider tick reset a stage's table"
    assert after != before, "the ticks changed nothing: the test proves nothing"
    live = live_for(fixture_dir)
    live.sets.update(win.flow.session.sets)
    answer = live.answer()
    assert as_engine(shown(win)) == engine_view(to_json(answer)["stages"])
    fresh = FlowStagesPanel()  # the same answer in tables built afresh (a reset each)
    fresh.set_tokens(win.flow.panel.tokens)
    fresh.show_trace(answer, win.flow.session.expected, None, "")
    assert [_cells(s.model) for s in fresh.sections] == after
    fresh.deleteLater()


def test_the_detail_pane_follows_each_tick_with_the_engines_path_and_keeps_the_rows_text(
        win: Any, fixture_dir: Path) -> None:  # noqa: F811
    """The selected row's path (rank and score at every stage, or the drop that ended it) is
    the engine's after every tick; its text, which a tick does not change, is set once (a long
    text laid out again on every tick cost ~10 ms of it)."""
    from inspector.qt.flow.flow_detail import row_path

    s, detail = win.flow.session, win.flow.detail
    rid = s.trace.final.rows[0].id
    s.select(rid)
    text_sets: list[str] = []
    original = detail.text.setText
    detail.text.setText = lambda t: (text_sets.append(t), original(t))  # type: ignore[method-assign]
    paths = []
    try:
        for value in (0.4, 0.9, 0.55):
            win.flow.sliders.sliders["fused.vector_weight"].setValue(value)
            win.flow.sliders.flush()
            win.vm.jobs.wait_idle(30)
            assert s.selected == rid
            body = detail.body.text()
            path = row_path(s.trace, rid)
            assert path, "the selected row left every stage: the test proves nothing"
            for stage, what in path:
                assert f"<td>{stage}&nbsp;&nbsp;</td><td>{what}</td>" in body
            paths.append(path)
    finally:
        del detail.text.setText
    assert len({tuple(p) for p in paths}) > 1, "the ticks changed no score of the row"
    assert text_sets == [], "a tick set the row's unchanged text again"
    assert s.row(rid).row.text.split()[0] in detail.text.text()
