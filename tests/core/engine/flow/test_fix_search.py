"""The smallest-change search itself, on a pipeline stand-in whose answers are known: where it
may stop early and where it must not."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from inspector.core.engine.flow.insight.search import Budget, smallest
from inspector.core.engine.flow.registry import ParamDecl
from inspector.core.engine.flow.runs import Change

LOST = "lost"


@dataclass
class FakeRuns:
    """Answers by one parameter's value: the final ids, and the stages' row counts."""

    key: str
    answer: Any  # value -> list of final ids
    count: int = 0

    def try_run(self, change: Change) -> Any:
        self.count += 1
        value = dict(change.sets)[self.key]
        ids = self.answer(value)
        final = SimpleNamespace(ids=ids, rows=ids, note="")
        return SimpleNamespace(final=final, stages=[final])


def _goal(t: Any) -> bool:
    return LOST in t.final.ids


def _sig(t: Any) -> Any:  # what explain watches: the final ids and the stages' counts
    return tuple(t.final.ids), tuple((len(s.rows), s.note) for s in t.stages)


def _refine(value: int) -> list[str]:
    """An approximate search: the same ten rows from refine 4 to 15, the lost row from 16."""
    if value >= 16:
        return [f"r{i}" for i in range(9)] + [LOST]
    if value >= 4:
        return [f"r{i}" for i in range(10)]
    return [f"r{i}" for i in range(10 + value, 20 + value)]


def test_an_index_knob_is_searched_past_values_that_return_the_same_rows() -> None:
    decl = ParamDecl("refine_factor", "int", 0, "", 0, 50_000, live=False, effect="index")
    runs = FakeRuns("fetch.refine_factor", _refine)
    got = smallest(runs, "fetch.refine_factor", decl, 0, _goal, _sig, Budget(runs, 160))
    assert got is not None and dict(got.change.sets)["fetch.refine_factor"] == 16


def test_a_threshold_is_searched_past_values_that_pass_no_new_row() -> None:
    """A min score of 0.8 over scores 0.95, 0.9 and the lost row's 0.57: lowering it 0.01
    twice passes nothing new, and 0.57 returns the row (`inspector query --expect` offered no
    min score for a row far below it, and said every parameter was searched over its range)."""
    decl = ParamDecl("min", "float", 0.3, "", -1e9, 1e9, effect="threshold", step=0.01)
    scores = {"r0": 0.95, "r1": 0.9, LOST: 0.5695}
    runs = FakeRuns("min_score.min", lambda v: [r for r, x in scores.items() if x >= v])
    got = smallest(runs, "min_score.min", decl, 0.8, _goal, _sig, Budget(runs, 160))
    assert got is not None and dict(got.change.sets)["min_score.min"] == 0.56
    # a row no threshold passes (a NaN score) is searched to the bound, within the budget
    runs = FakeRuns("min_score.min", lambda v: ["r0"])
    assert smallest(runs, "min_score.min", decl, 0.8, _goal, _sig, Budget(runs, 160)) is None
    assert 30 < runs.count <= 64


def test_a_depth_that_stopped_mattering_ends_its_search() -> None:
    """The early stop is kept where it is sound: a depth whose runs change nothing twice."""
    decl = ParamDecl("k", "int", 10, "", 1, 1_000_000, live=False, effect="depth")
    runs = FakeRuns("fetch.k", lambda v: [f"r{i}" for i in range(10)])
    assert smallest(runs, "fetch.k", decl, 10, _goal, _sig, Budget(runs, 160)) is None
    assert runs.count == 2


def test_nprobes_is_raised_from_lancedbs_default_not_from_one() -> None:
    decl = ParamDecl("nprobes", "int", 0, "", 0, 1_000_000, live=False, effect="index",
                     zero=20)
    runs = FakeRuns("fetch.nprobes",  # the row comes back by chance at 1 partition, and at 40+
                    lambda v: [LOST] if v == 1 or v >= 40 else ["r0"])
    got = smallest(runs, "fetch.nprobes", decl, 0, _goal, _sig, Budget(runs, 160))
    assert got is not None and dict(got.change.sets)["fetch.nprobes"] == 40
    assert got.size == 1.0  # 20 -> 40: a doubling of what LanceDB probes
