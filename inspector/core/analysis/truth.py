"""Ground truth without judgments, for any pipeline: what the question should have returned.

The truth is the same pipeline with every stage that a what-if can deepen (its fetches and
the cuts before its last stage, `diagnosis.widenable`) searched as deep as the diagnosis
probes (PROBE_DEPTH rows, or the whole table): a filter placed after a cut then sees the whole
ranking, as if it ran inside the search (the diagnosis's "filter inside the search"). Where a
vector leg searches an ANN index, the truth is the exact search (the index bypassed). The
truth's scores, weights, thresholds and limit are the run's own: a change of a weight
changes the truth, a change of a depth of a stage searched that deep does not.

One question's truths are run through its fetch cache, each in a run of its own (not kept in
the question's memo: a deep run holds thousands of rows).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from inspector.core.engine.flow.columns import Outline
from inspector.core.engine.flow.insight.facet import indexed_legs
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import NO_CHANGE, Change, Runs, freeze, new_memo
from inspector.core.engine.flow.spec import PipelineSpec
from inspector.core.engine.pools import PROBE_DEPTH
from inspector.core.errors import InspectorError


def deep_stages(spec: PipelineSpec) -> list[str]:
    """Every stage a what-if can deepen before the last stage of its route (the last one
    too where it is a fetch), over every route: the stages the truth searches deep."""
    out: dict[str, None] = {}
    for route in spec.routes:
        last = route.stages[-1].name if route.stages else ""
        for st in route.stages:
            kind = kind_of(st.kind)
            if kind.widens and (st.name != last or kind.role == "fetch"):
                out[st.name] = None
    return list(out)


def probe_depth(rows: int | None) -> int:
    """How deep the truth searches: PROBE_DEPTH rows, or the whole table when smaller."""
    return max(1, min(int(rows or PROBE_DEPTH), PROBE_DEPTH))


def truth_change(runs: Runs, sets: dict[str, Any] | None = None) -> Change:
    """The change that asks the truth of the question under `sets` (parameters changed)."""
    depth = probe_depth(getattr(runs.store, "rows", None))
    index = getattr(runs.store, "vector_index", None)
    return Change(freeze(sets), tuple((s, depth) for s in deep_stages(runs.spec)),
                  exact=index is not None)


def run_once(runs: Runs, change: Change) -> FlowTrace:
    """The question's answer under `change`, through its fetch cache, remembered nowhere."""
    once = replace(runs, count=0, _memo=new_memo())
    try:
        return once.run(change)
    finally:
        runs.count += once.count


class Forgetful:
    """A question's runs that remember none of their answers (each a run of its own through
    the question's fetch cache): for searches that ask each change once and may run deep, so
    one query's searches hold one deep run at a time, not all of them. Each answer is an
    outline over columns where the route allows (`Runs.outline_once`: its final ids and each
    stage's rows kept and note, all such a search reads), else the run."""

    def __init__(self, runs: Runs) -> None:
        self.base = runs
        self.spec, self.store = runs.spec, runs.store

    @property
    def count(self) -> int:
        return self.base.count

    def run(self, change: Change = NO_CHANGE) -> FlowTrace | Outline:
        if self.base.columns:
            return self.base.outline_once(change)
        return run_once(self.base, change)

    def try_run(self, change: Change) -> FlowTrace | Outline | None:
        try:
            return self.run(change)
        except InspectorError:
            return None


def truth_trace(runs: Runs, sets: dict[str, Any] | None = None) -> FlowTrace | None:
    """The truth's run (None when the pipeline refuses it, e.g. a depth it cannot reach)."""
    try:
        return run_once(runs, truth_change(runs, sets))
    except InspectorError:
        return None


def truth_ids(runs: Runs, sets: dict[str, Any] | None = None) -> list[str] | None:
    """The ids the question should have returned under `sets`, best first (at most its
    limit); None when the truth cannot be run. Over columns where the route allows
    (`Runs.final_ids`), else a run remembered nowhere."""
    try:
        return runs.final_ids(truth_change(runs, sets), remember=False)
    except InspectorError:
        return None


def searched_index(t: FlowTrace, store: Any) -> bool:
    """True when a vector leg of this run searched the table's ANN index."""
    return bool(indexed_legs(t, getattr(store, "vector_index", None)))
