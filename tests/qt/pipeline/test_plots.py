"""The plots draw the engine's own numbers for the stage a slider drives: each row's score
before the stage against after it, grouped by what became of it, and its rank before and
after; a click on a point selects that row."""

from __future__ import annotations

import numpy as np

from tests.qt.qtkit import move


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


def test_the_rank_chart_without_a_trace_names_no_earlier_stage(qtbot, window) -> None:
    """After an answer the bottom axis names the plotted stage; cleared (a store switched,
    a question with no answer yet) it names none: the switch-store shot kept "before scope"
    and "after scope" under another store's empty chart."""
    bump = window.bump
    bump.resize(900, 400)

    def ticks() -> list[str]:
        return [t for _, t in bump.getPlotItem().getAxis("bottom")._tickLevels[0]]

    stage = next(s for s in window.vm.trace.stages if s.role != "fetch" and s.rows_in)
    bump.set_trace(window.vm.trace, stage, None)
    assert ticks() == [f"before {stage.name}", f"after {stage.name}"]
    bump.set_trace(None, None, None)
    assert ticks() == ["before", "after"]


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


# ---- a click on the score scatter selects the row under the cursor ----

def _viewport_pos(scatter, x: float, y: float):
    """Where a data point (x, y) sits in the scatter's viewport, in pixels."""
    from PySide6.QtCore import QPointF

    vb = scatter.getPlotItem().getViewBox()
    return scatter.mapFromScene(vb.mapViewToScene(QPointF(float(x), float(y))))


def _click_point(qtbot, scatter, x: float, y: float) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()  # a selection or resize in flight lands first
    scatter.grab()  # and the view's transform is the painted one, whatever the machine's load
    at = _viewport_pos(scatter, x, y)
    qtbot.mouseMove(scatter.viewport(), at)  # as a hand does: the scene sees the hover first
    qtbot.mouseClick(scatter.viewport(), Qt.MouseButton.LeftButton, pos=at)


# ---- past the limit and below min score wear their own colours, everywhere ----

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




def _importance(window) -> None:
    window.vm.load_suggested(1)  # importance-blend, 15 rows, limit 5
    window.vm.jobs.wait_idle(60)
    move(window, "blend.weight", 0.5)


def test_scatter_groups_are_the_driven_stages_rows(window) -> None:
    _importance(window)
    trace, scatter = window.vm.trace, window.scatter
    blend = trace.stage("blend")
    assert scatter.stage == "blend"
    before = {s.id: s.score for s in blend.rows_in}
    after = {s.id: s.score for s in blend.rows}
    final = set(trace.final.ids)
    for group, item in scatter.groups.items():
        for p in item.points():
            rid = p.data()
            assert (p.pos().x(), p.pos().y()) == (before[rid], after.get(rid, before[rid]))
            want = "dropped" if rid not in after else "returned" if rid in final else "kept"
            assert want == group, rid
    shown = sorted(p.data() for item in scatter.groups.values() for p in item.points())
    assert shown == sorted(before)


def test_the_threshold_line_is_the_cut_stages_own(window) -> None:
    _importance(window)
    move(window, "min_score.min", 0.42)
    window.vm.drive("min_score.min")
    window._plots_stale = {window.scatter_box, window.bump_box}
    window.flush_plots()
    scatter = window.scatter
    assert scatter.stage == "min_score" and scatter.min_line.isVisible()
    assert scatter.min_line.value() == 0.42
    dropped = [p.data() for p in scatter.groups["dropped"].points()]
    st = window.vm.trace.stage("min_score")
    assert sorted(dropped) == sorted(d.id for d in st.dropped)


def test_rank_shift_dots_wear_the_colours_of_their_key(window) -> None:
    _importance(window)
    bump, trace, tk = window.bump, window.vm.trace, window.tokens
    key = dict((text, colour) for colour, text, *_ in bump.key(tk))
    returned = set(trace.final.ids)
    points = bump.dots.points()
    assert len(points)
    for p in points:
        want = key["returned"] if str(p.data()) in returned else key["not returned"]
        assert p.brush().color().name() == want, p.data()
    blend = trace.stage("blend")
    right = {p.data(): p.pos().y() for p in points if p.pos().x() == 1}
    for rank, s in enumerate(blend.rows, start=1):
        if s.id in right:
            assert right[s.id] == rank


def test_rank_shift_labels_never_overlap_and_follow_the_height(qtbot, window) -> None:
    from PySide6.QtWidgets import QApplication

    from inspector.qt.harness.visual_checks import overlapping_texts
    from inspector.qt.pipeline.plots import MIN_PLOT
    from inspector.qt.pipeline.rank_chart import N_LABELS, BumpChart

    _importance(window)
    trace = window.vm.trace
    blend = trace.stage("blend")
    selected = blend.rows[3].id  # rank 4
    bump = BumpChart()
    qtbot.addWidget(bump)
    bump.resize(520, 700)
    bump.show()
    bump.set_trace(trace, blend, selected)
    counts = []
    for h in (700, MIN_PLOT[1], 200, 260, 340, 700):
        bump.resize(520, h)
        QApplication.processEvents()
        assert overlapping_texts(bump) == [], h
        shown = {r: lab.toPlainText() for r, lab in zip(bump.labelled, bump.labels,
                                                        strict=False)}
        assert 1 in shown and 4 in shown, (h, shown)
        for rank, text in shown.items():  # each label is its row's own text
            full = " ".join(blend.rows[rank - 1].row.text.split())
            assert full.startswith(text.rstrip("…")), (rank, text)
        counts.append(len(shown))
    assert counts[0] == counts[-1] == N_LABELS  # tall: every top rank labelled
    assert counts[1] < N_LABELS  # short: thinned out


def _viewport_pos(scatter, x: float, y: float):
    from PySide6.QtCore import QPointF

    vb = scatter.getPlotItem().getViewBox()
    return scatter.mapFromScene(vb.mapViewToScene(QPointF(float(x), float(y))))


def test_clicking_a_scatter_point_selects_that_row_and_shows_it_in_the_detail_pane(
        qtbot, window) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    _importance(window)
    scatter, vm = window.scatter, window.vm
    scatter.grab()
    pts = [(p.data(), p.pos().x(), p.pos().y()) for item in scatter.groups.values()
           for p in item.points()]
    pos = {rid: _viewport_pos(scatter, x, y) for rid, x, y in pts}
    marked = {vm.selected, *vm.question.expect}
    alone = [rid for rid in pos if rid not in marked and all(
        np.hypot(pos[rid].x() - q.x(), pos[rid].y() - q.y()) >= 14
        for other, q in pos.items() if other != rid)]
    assert alone
    rid = alone[0]
    QApplication.processEvents()
    with qtbot.waitSignal(vm.selection_changed, timeout=10_000) as sig:
        qtbot.mouseMove(scatter.viewport(), pos[rid])
        qtbot.mouseClick(scatter.viewport(), Qt.MouseButton.LeftButton, pos=pos[rid])
    assert sig.args[0] == rid and vm.selected == rid
    assert window.detail.title.text() == f"Row {rid}"
    (ring,) = scatter.selected.points()
    x, y = next((x, y) for r, x, y in pts if r == rid)
    assert (ring.pos().x(), ring.pos().y()) == (x, y)
