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
