"""The slider tick path: tables keep their length while only the depth changes and show the
rows past a stage as such, unchanged tables are not touched, plots catch up once the slider
rests (hidden ones when shown), and after every drag the window shows the engine's numbers."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from inspector.core.engine.trace import STAGES
from tests.qt.qtkit import assert_matches_engine, engine, move, past_rows, rest


def _deep_pool(window, ready) -> None:
    """The tick benchmark's setup: memory-plugin, limit 50, no cap, over-fetch 20."""
    vm = window.vm
    vm.set_preset("memory-plugin")
    vm.set_param("scope", None)
    vm.set_query("which editor theme does the user prefer")
    ready(vm)
    vm.set_param("limit", 50)
    vm.set_param("min_score", 0.0)
    move(window, "overfetch", 20.0)
    ready(vm)


def _drag(window, key: str, values: list[float]) -> None:
    """A drag: each position delivered and painted in its own turn of the event loop."""
    slider = window.sliders.sliders[key]
    for v in values:
        slider.setValue(v)
        QApplication.processEvents()


def _structure_spy(window) -> list[str]:
    seen: list[str] = []
    for stage in STAGES:
        model = window.stages.view(stage).model
        for name in ("rowsInserted", "rowsRemoved", "modelReset", "layoutChanged"):
            getattr(model, name).connect(lambda *_a, s=stage, n=name: seen.append(f"{s} {n}"))
    return seen


def test_an_overfetch_drag_keeps_every_table_length_and_marks_rows_past_the_stage(
        window, ready) -> None:
    _deep_pool(window, ready)
    lengths = {s: window.stages.view(s).model.rowCount() for s in STAGES}
    seen = _structure_spy(window)
    _drag(window, "overfetch", [20.0, 12.0, 5.5, 2.0, 1.0, 3.3, 1.5])
    window.sliders.flush()
    assert seen == [], "an over-fetch tick inserted, removed or reset rows"
    assert {s: window.stages.view(s).model.rowCount() for s in STAGES} == lengths
    raw = window.stages.view("raw").model
    want = engine(window)
    assert raw.live_count() == len(want.stage("raw")) < raw.rowCount()
    first = past_rows(window, "raw")[0]
    assert f"of depth {want.depths.pool}" in " ".join(c for c in first if c)
    rest(window)
    assert_matches_engine(window)  # every stage, the rows past it, counters and plots


def test_plots_wait_for_the_slider_to_rest_then_show_the_engines_numbers(
        window, ready) -> None:
    _deep_pool(window, ready)
    before = sorted(str(p.data()) for p in window.scatter.groups["returned"].points())
    _drag(window, "blend", [0.1, 0.3, 0.6, 0.9, 1.0])
    assert window.plots_pending, "the plots redrew on a drag tick"
    assert sorted(str(p.data()) for p in window.scatter.groups["returned"].points()) == before
    rest(window)  # the plots catch up by themselves once the slider rests
    assert not window.plots_pending
    assert_matches_engine(window)
    _drag(window, "overfetch", [15.0, 9.0, 4.0])
    rest(window)
    assert_matches_engine(window)


def test_a_hidden_plot_skips_ticks_and_catches_up_when_shown(window, ready) -> None:
    _deep_pool(window, ready)
    window.bump_box.hide()
    dots = sorted((str(p.data()), p.pos().y()) for p in window.bump.dots.points())
    move(window, "blend", 1.0)
    assert sorted((str(p.data()), p.pos().y()) for p in window.bump.dots.points()) == dots
    window.bump_box.show()
    assert not window.plots_pending
    assert_matches_engine(window)


def test_a_tick_that_changes_no_visible_cell_touches_no_table(window, ready) -> None:
    _deep_pool(window, ready)
    lowest = float(min(window.vm.trace.score[window.vm.trace.stage("blended").rows]))
    assert lowest > 0.002
    touched: list[str] = []
    for stage in STAGES:
        window.stages.view(stage).model.dataChanged.connect(
            lambda *_a, s=stage: touched.append(s))
    seen = _structure_spy(window)
    move(window, "min_score", 0.001)  # below every score: no row changes its outcome
    assert touched == [] and seen == []
    assert_matches_engine(window)


def test_a_shrinking_stage_repaints_the_rows_that_left_as_past_the_stage(window,
                                                                           ready) -> None:
    _deep_pool(window, ready)
    model = window.stages.view("raw").model
    ranges: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda a, b, *_r: ranges.append((a.row(), b.row())))
    move(window, "overfetch", 2.0)
    n = model.live_count()
    assert n == 100
    assert any(a <= n <= b for a, b in ranges), "the new end of the stage was not repainted"
    assert all(c is None for c in past_rows(window, "raw")[1])
    assert_matches_engine(window)


def test_clicking_a_row_past_the_stage_keeps_the_selection(window, qtbot, ready) -> None:
    _deep_pool(window, ready)
    move(window, "overfetch", 1.0)
    view = window.stages.view("final")
    model = view.model
    if model.live_count() == model.rowCount():
        view = window.stages.view("raw")
        model = view.model
    selected = window.vm.selected
    r = model.live_count() + 1
    view.table.scrollTo(model.index(r, 0))
    rect = view.table.visualRect(model.index(r, 0))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.vm.selected == selected


_ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole,
          Qt.ItemDataRole.FontRole, Qt.ItemDataRole.DecorationRole,
          Qt.ItemDataRole.BackgroundRole)


def _painted(model) -> dict[tuple[int, int], tuple[str, ...]]:
    """What every cell paints (text, colour, font, dot, background), as comparable text."""
    def key(v) -> str:
        return str(v.cacheKey()) if hasattr(v, "cacheKey") else \
            v.name() if hasattr(v, "name") and not isinstance(v, str) else \
            v.toString() if hasattr(v, "toString") else str(v)
    return {(r, c): tuple(key(model.data(model.index(r, c), role)) for role in _ROLES)
            for r in range(model.rowCount()) for c in range(model.columnCount())}


def test_a_blend_tick_repaints_every_cell_that_changed_and_no_raw_text(window, ready) -> None:
    """The repaint follows the cells: every cell that paints differently after a tick is in a
    dataChanged range (else the screen keeps the old value), and where a blend tick only
    changes rows' outcomes (raw, scoped) it repaints their "#" cell (the dot), not the row."""
    _deep_pool(window, ready)
    move(window, "blend", 0.0)
    models = {s: window.stages.view(s).model for s in STAGES}
    before = {s: _painted(m) for s, m in models.items()}
    emitted: dict[str, set[tuple[int, int]]] = {s: set() for s in STAGES}
    for s, m in models.items():
        m.dataChanged.connect(lambda a, b, *_r, s=s: emitted[s].update(
            (r, c) for r in range(a.row(), b.row() + 1)
            for c in range(a.column(), b.column() + 1)))
    move(window, "blend", 1.0)
    changed_rows = 0
    for s, m in models.items():
        after = _painted(m)
        changed = {cell for cell, v in after.items() if before[s][cell] != v}
        assert changed <= emitted[s], (s, sorted(changed - emitted[s])[:5])
        if s in ("raw", "scoped"):
            text = m.columns.index("text")
            assert not any(c == text for _r, c in emitted[s]), s
            changed_rows += len({r for r, _c in changed})
    assert changed_rows > 0, "the tick changed no outcome: the test proves nothing"
    assert_matches_engine(window)
