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
    from inspector.qt.pipeline.plots import BumpChart, ScoreScatter

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
    from inspector.qt.pipeline.label_room import labelled_ranks, rank_ticks, spaced

    assert labelled_ranks(10, 30.0, 15.0) == list(range(1, 11))  # room for all
    assert labelled_ranks(10, 10.0, 15.0) == [1, 3, 5, 7, 9]
    assert labelled_ranks(10, 10.0, 15.0, selected=4) == [1, 4, 6, 8, 10]
    assert labelled_ranks(10, 10.0, 15.0, selected=2) == [1, 3, 5, 7, 9]  # rank 1 first
    assert labelled_ranks(10, 10.0, 15.0, selected=14) == [1, 3, 5, 7, 9, 14]
    assert spaced([5, 1, 2, 9], 0.0, 15.0) == [5]  # no room at all: the first only
    assert rank_ticks(15, 20.0, 14.0) == list(range(1, 16))
    assert rank_ticks(15, 10.0, 14.0) == [1, 3, 5, 7, 9, 11, 13, 15]
    assert rank_ticks(40, 4.0, 14.0) == [1, 5, 10, 15, 20, 25, 30, 35, 40]
    assert rank_ticks(40, 2.0, 14.0) == [1, 10, 20, 30, 40]


def _labels(bump) -> dict[int, str]:
    return {round(lab.pos().y()): lab.toPlainText() for lab in bump.labels
            if lab.toPlainText()}


def test_rank_shift_labels_never_overlap_and_follow_the_height(qtbot, window, ready) -> None:
    from PySide6.QtWidgets import QApplication

    from inspector.qt.harness.visual_checks import overlapping_texts
    from inspector.qt.pipeline.plots import MIN_PLOT, N_LABELS, BumpChart

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
