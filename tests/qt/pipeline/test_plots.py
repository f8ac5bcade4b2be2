"""The plots draw the engine's own numbers: points grouped by the trace's outcomes, and
iso-score curves that satisfy base x ((1 - w) + w x importance) = level."""

from __future__ import annotations

import numpy as np

from inspector.core.engine.trace import OUTCOME_LABELS
from tests.qt.qtkit import move


def test_iso_score_curves_blend_to_their_level(window) -> None:
    move(window, "blend", 0.6)
    move(window, "min_score", 0.02)
    scatter, trace = window.scatter, window.vm.trace
    last = float(trace.score[trace.stage("final").rows[-1]]) if trace.counters["returned"] \
        else None
    for curve, level in ((scatter.cut_line, last), (scatter.min_line, 0.02)):
        x, y = curve.getData()
        if level is None:
            assert x is None or len(x) == 0
            continue
        blended = y * ((1 - 0.6) + 0.6 * x)  # the README's formula, written out here
        assert np.allclose(blended, level), "an iso-score curve is off its level"


def test_scatter_groups_are_the_engines_outcomes(window) -> None:
    move(window, "overfetch", 4.0)
    trace = window.vm.trace
    raw = trace.stage("raw").rows
    for outcome in OUTCOME_LABELS:
        if outcome == "not_fetched":
            continue
        want = sorted(str(trace.pool.ids[i]) for i in raw if trace.outcome(int(i)) == outcome)
        got = sorted(str(p.data()) for p in window.scatter.groups[outcome].points())
        assert got == want, outcome


def test_rank_shift_dots_wear_the_colours_of_their_key(window, ready) -> None:
    window.vm.load_suggested(1)
    ready(window.vm)
    move(window, "blend", 0.5)
    bump, trace, tk = window.bump, window.vm.trace, window.tokens
    key = dict((text, colour) for colour, text, *_ in bump.key(tk))
    returned = {str(trace.pool.ids[i]) for i in trace.stage("final").rows}
    points = bump.dots.points()
    assert len(points)
    for p in points:
        want = key["returned"] if str(p.data()) in returned else key["not returned"]
        assert p.brush().color().name() == want, p.data()


def test_rank_shift_shows_every_rank_when_there_are_few(window, ready) -> None:
    window.vm.load_suggested(1)  # 15 in-scope rows, limit 5
    ready(window.vm)
    n = len(window.vm.trace.stage("scoped").rows)
    _, (lo, hi) = window.bump.getPlotItem().viewRange()
    assert (lo, hi) == (0.5, n + 0.5)


def test_empty_plots_say_what_will_appear(qtbot, window) -> None:
    from inspector.qt.pipeline.plots import ScoreScatter
    from inspector.qt.pipeline.rank_chart import BumpChart

    scatter, bump = ScoreScatter(), BumpChart()
    qtbot.addWidget(scatter)
    qtbot.addWidget(bump)
    assert scatter.empty.isVisible() and "Run a query" in scatter.empty.toPlainText()
    assert bump.empty.toPlainText().startswith("Run a query")
    assert not bump.limit_line.isVisible()
    assert not window.scatter.empty.isVisible()  # with a trace the note is gone


def test_the_sweep_tab_before_any_run_claims_nothing(window) -> None:
    sweep = window.tuning_dock.sweep
    curve = sweep.curve
    assert not curve.safe.isVisible()  # no "safe F = 0" before a sweep
    assert curve.empty.isVisible()
    (x0, x1), _ = curve.getPlotItem().viewRange()
    assert (x0, x1) == (1, 10)  # over-fetch factors, not -0.4..0.4
    assert sweep.heatmap.empty.isVisible()


def test_label_room_keeps_rank_one_and_the_selected_row_a_line_apart() -> None:
    from inspector.qt.pipeline.rank_chart import (
        label_places,
        labelled_ranks,
        rank_ticks,
        spaced,
    )

    assert list(labelled_ranks(10, 30.0, 15.0)) == list(range(1, 11))  # room for all
    assert list(labelled_ranks(10, 10.0, 15.0)) == [1, 3, 5, 7, 9]
    assert list(labelled_ranks(10, 10.0, 15.0, selected=4)) == [1, 4, 6, 8, 10]
    # the selected row may move half a line to find room; rank 1 is placed first
    assert labelled_ranks(10, 10.0, 15.0, selected=2) == {1: 5.0, 2: 20.0, 4: 35.0,
                                                          6: 55.0, 8: 75.0, 10: 95.0}
    assert list(labelled_ranks(10, 10.0, 15.0, selected=14)) == [1, 3, 5, 7, 9, 14]
    # in a view 100 px high rank 1's label moves down to stay whole, and rank 10's up
    assert labelled_ranks(10, 10.0, 15.0, height=100.0) == {1: 7.5, 3: 25.0, 5: 45.0,
                                                           7: 65.0, 9: 85.0}
    assert label_places([10], 10.0, 15.0, height=100.0) == {10: 92.5}
    assert spaced([5, 1, 2, 9], 0.0, 15.0) == [5]  # no room at all: the first only
    assert rank_ticks(15, 20.0, 14.0) == list(range(1, 16))
    assert rank_ticks(15, 10.0, 14.0) == [1, 3, 5, 7, 9, 11, 13, 15]
    assert rank_ticks(40, 4.0, 14.0) == [1, 5, 10, 15, 20, 25, 30, 35, 40]
    assert rank_ticks(40, 2.0, 14.0) == [1, 10, 20, 30, 40]


def _labels(bump) -> dict[int, str]:
    return {r: lab.toPlainText() for r, lab in zip(bump.labelled, bump.labels, strict=False)}


def test_rank_shift_labels_never_overlap_and_follow_the_height(qtbot, window, ready) -> None:
    from PySide6.QtWidgets import QApplication

    from inspector.qt.harness.visual_checks import overlapping_texts
    from inspector.qt.pipeline.plots import MIN_PLOT
    from inspector.qt.pipeline.rank_chart import N_LABELS, BumpChart

    window.vm.load_suggested(1)  # 15 in-scope rows
    ready(window.vm)
    trace = window.vm.trace
    blended = trace.stage("blended").rows
    selected = str(trace.pool.ids[int(blended[3])])  # rank 4
    bump = BumpChart()
    qtbot.addWidget(bump)
    bump.resize(520, 700)
    bump.show()
    bump.set_trace(trace, selected)
    heights = [700, MIN_PLOT[1], 200, 260, 340, 700]
    counts = []
    for h in heights:  # set once: every later layout comes from the resize alone
        bump.resize(520, h)
        QApplication.processEvents()
        assert overlapping_texts(bump) == [], h
        shown = _labels(bump)
        assert 1 in shown and 4 in shown, (h, shown)
        for rank, text in shown.items():  # each label is its blended row's own text
            full = " ".join(str(trace.pool.columns["text"][int(blended[rank - 1])]).split())
            assert full.startswith(text.rstrip("…")), (rank, text)
        counts.append(len(shown))
    assert counts[0] == counts[-1] == N_LABELS  # tall: every top rank labelled
    assert counts[1] < N_LABELS  # short: thinned out


def test_rank_shift_texts_are_whole_at_a_small_windows_width(qtbot, window, ready) -> None:
    """At the width the chart has in a 1024x700 window: "limit", the row labels by the top
    and bottom edges and both column names painted whole (no "mit", no half a line)."""
    from PySide6.QtWidgets import QApplication

    from inspector.qt.harness.painted import cut_painted_problems, painted_texts
    from inspector.qt.harness.visual_checks import overlapping_texts
    from inspector.qt.pipeline.plots import MIN_PLOT
    from inspector.qt.pipeline.rank_chart import BumpChart

    window.vm.load_suggested(1)
    ready(window.vm)
    move(window, "blend", 0.5)
    bump = BumpChart()
    qtbot.addWidget(bump)
    bump.resize(280, 130)
    bump.show()
    bump.set_trace(window.vm.trace, None)
    for w, h in ((280, 130), (280, MIN_PLOT[1]), (MIN_PLOT[0], 160), (280, 400), (700, 400)):
        bump.resize(w, h)
        QApplication.processEvents()
        assert cut_painted_problems(bump) == [], (w, h)
        assert overlapping_texts(bump) == [], (w, h)
        shown = {t.text for t in painted_texts(bump)}
        assert "limit" in shown and 1 in bump.labelled, (w, h, shown)
        assert {"before", "after"} <= shown or {"before blending", "after blending"} <= shown
    assert {"before blending", "after blending"} <= shown  # wide: the long names


# ---- a click on the score scatter selects the row under the cursor ----

def _viewport_pos(scatter, x: float, y: float):
    """Where a data point (x, y) sits in the scatter's viewport, in pixels."""
    from PySide6.QtCore import QPointF

    vb = scatter.getPlotItem().getViewBox()
    return scatter.mapFromScene(vb.mapViewToScene(QPointF(float(x), float(y))))


def _isolated_rows(scatter, trace, room: float = 14.0) -> list[int]:
    """Raw rows whose point has no other point within `room` pixels (a click there can only
    mean that row), in raw order."""
    scatter.grab()  # painted, as on screen: the view's transform follows the new range
    raw = [int(i) for i in trace.stage("raw").rows]
    pos = {i: _viewport_pos(scatter, trace.importance_used[i], trace.base[i]) for i in raw}
    return [i for i in raw if all(np.hypot(pos[i].x() - pos[j].x(), pos[i].y() - pos[j].y())
                                  >= room for j in raw if j != i)]


def _click_point(qtbot, scatter, x: float, y: float) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()  # a selection or resize in flight lands first
    scatter.grab()  # and the view's transform is the painted one, whatever the machine's load
    at = _viewport_pos(scatter, x, y)
    qtbot.mouseMove(scatter.viewport(), at)  # as a hand does: the scene sees the hover first
    qtbot.mouseClick(scatter.viewport(), Qt.MouseButton.LeftButton, pos=at)


def _assert_click_selects(qtbot, window, i: int) -> None:
    scatter, trace = window.scatter, window.vm.trace
    rid = trace.pool.ids[i]
    with qtbot.waitSignal(window.vm.selection_changed, timeout=10_000) as sig:
        _click_point(qtbot, scatter, trace.importance_used[i], trace.base[i])
    assert str(sig.args[0]) == str(rid)
    assert str(window.vm.selected) == str(rid)
    assert window.detail.title.text() == f"Row {rid}"
    (ring,) = scatter.selected.points()  # the ring is drawn on the clicked point
    assert (ring.pos().x(), ring.pos().y()) == (float(trace.importance_used[i]),
                                                float(trace.base[i]))


def test_clicking_a_scatter_point_selects_that_row_and_shows_it_in_the_detail_pane(
        qtbot, window, ready) -> None:
    window.vm.load_suggested(1)  # 15 raw rows: returned and past the limit
    ready(window.vm)
    window.flush_plots()
    trace, vm = window.vm.trace, window.vm
    marked = {str(vm.selected), *vm.expected}  # rows under a ring or a star: tested below
    rows = [i for i in _isolated_rows(window.scatter, trace)
            if str(trace.pool.ids[i]) not in marked]
    returned = {int(i) for i in trace.stage("final").rows}
    # a returned row, then one past the limit: two outcome groups, and a change of selection
    for i in (next(i for i in rows if i in returned), next(i for i in rows if i not in returned)):
        _assert_click_selects(qtbot, window, i)


def test_clicking_an_expected_rows_star_selects_that_row(qtbot, window, ready) -> None:
    """The star drawn over an expected row's point is that row: a click on it selects it."""
    window.vm.load_suggested(1)
    ready(window.vm)
    window.flush_plots()
    trace, vm = window.vm.trace, window.vm
    (expected,) = vm.expected
    i = trace.row_of(expected)
    assert i is not None and trace.raw_rank[i] > 0 and str(vm.selected) != expected
    assert i in _isolated_rows(window.scatter, trace)
    assert len(window.scatter.expected.points()) == 1
    _assert_click_selects(qtbot, window, i)


# ---- past the limit and below min score wear their own colours, everywhere ----

def _fates_on_screen(window, ready):
    """The blend story with min score 0.42: 5 returned, 2 past the limit, 8 below min score."""
    window.vm.load_suggested(1)
    ready(window.vm)
    move(window, "min_score", 0.42)
    trace = window.vm.trace
    counts = {k: len(v) for k, v in trace.outcome_groups().items()}
    assert counts == {"returned": 5, "past_limit": 2, "below_min_score": 8, "out_of_scope": 0}
    return trace


def _semantic(tk) -> dict[str, str]:
    """What each outcome's colour means, as the table's header tip says: green returned, red
    below min score, blue past the limit, grey out of scope."""
    return {"returned": tk.returned, "past_limit": tk.scoped, "below_min_score": tk.cut,
            "out_of_scope": tk.out}


def test_outcome_palette_gives_past_limit_and_below_min_score_their_own_colours() -> None:
    from inspector.qt.theme import DARK, LIGHT, outcome_colour

    for tk in (LIGHT, DARK):
        got = {k: outcome_colour(tk, k) for k in _semantic(tk)}
        assert got == _semantic(tk)
        assert len(set(got.values())) == 4  # four outcomes, four colours


def test_scatter_points_past_the_limit_and_below_min_score_wear_their_colours(
        window, ready) -> None:
    trace = _fates_on_screen(window, ready)
    scatter, tk = window.scatter, window.tokens
    want = _semantic(tk)
    key = {text: colour for colour, text, *_ in scatter.key(tk)}
    for outcome, item in scatter.groups.items():
        assert item.opts["brush"].color().name() == want[outcome], outcome
        assert key[OUTCOME_LABELS[outcome]] == want[outcome], outcome  # the key says the same
        for p in item.points():
            assert trace.outcome(trace.row_of(p.data())) == outcome
            assert p.brush().color().name() == want[outcome], (outcome, p.data())
    for p in scatter.groups["below_min_score"].points():  # and a ring in the cut colour
        assert p.pen().color().name() == tk.cut
    assert len(scatter.groups["past_limit"].points()) == 2
    assert len(scatter.groups["below_min_score"].points()) == 8


def test_stage_table_dots_and_detail_pane_colour_each_outcome_alike(window, ready) -> None:
    from PySide6.QtCore import Qt

    trace = _fates_on_screen(window, ready)
    tk = window.tokens
    want = _semantic(tk)
    model = window.stages.view("blended").model
    seen = set()
    for r in range(model.live_count()):
        rid = model.row_id(r)
        fate = trace.outcome(trace.row_of(rid))
        dot = model.data(model.index(r, model.columns.index("#")),
                         Qt.ItemDataRole.DecorationRole)
        assert dot.toImage().pixelColor(5, 5).name() == want[fate], (r, rid, fate)
        if fate not in seen:  # the detail pane's verdict line in the same colour
            seen.add(fate)
            window.vm.select(rid)
            assert f"color: {want[fate]};" in window.detail.fate.styleSheet(), fate
    assert seen == {"returned", "past_limit", "below_min_score"}
