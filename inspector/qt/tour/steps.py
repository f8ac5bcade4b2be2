"""The tour's steps: for each story of the demo store, what each step does in the window, the
one sentence it says, and the widget it talks about (the tour points at it). The stories
are the demo store's suggested queries; the index story is there only when the store has it
(it is read off LanceDB's trained index, see core/stores/ann/demo.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QWidget


@dataclass(frozen=True)
class Step:
    story: str
    sentence: str
    apply: Callable[[Any], None]
    widget: Callable[[Any], QWidget]  # what the sentence talks about, as the window has it
    opens: int | None = None  # the suggested query (story) this step opens


def open_demo_story(win: Any, n: int) -> None:
    """One of the demo store's suggested queries (opening the demo store first if
    another store is open), and its answer: the next step changes a parameter, and a change
    made while the query is in flight re-ranks the previous query's rows."""
    opened = win.vm.opened
    if opened is None or not opened.demo or win.vm.store is None:
        win.vm.open_store(None, then="none")
        win.vm.jobs.wait_idle(60.0)
    win.vm.load_suggested(n)
    win.vm.jobs.wait_idle(60.0)


def _first_raw(win: Any) -> None:
    trace = win.vm.trace
    if trace is not None and len(trace.stage("raw").rows):
        win.vm.select(trace.pool.ids[int(trace.stage("raw").rows[0])])


def _select_expected(win: Any) -> None:
    if win.vm.expected:
        win.vm.select(win.vm.expected[0])


def _preset(win: Any, name: str) -> None:
    """A preset picked as the user picks it (the query bar's combo)."""
    win.route.preset_picked(name)
    win.vm.jobs.wait_idle(60.0)


def _stage(name: str) -> Callable[[Any], QWidget]:
    return lambda w: w.stages.view(name, min(w.vm.focus_lane, len(w.stages.lanes) - 1)).table


def _slider(key: str) -> Callable[[Any], QWidget]:
    return lambda w: w.sliders.sliders[key]


def _open(n: int) -> Callable[[Any], None]:
    return lambda w: open_demo_story(w, n)


TOUR = (
    Step("Scoped miss", "A docs search scoped to vault-agent returns nothing: the scope filter "
         "runs after a global top 10.", _open(0), _stage("final"), opens=0),
    Step("Scoped miss", "All 10 raw candidates come from other repos; the scope column says "
         "which rule removed each.", _first_raw, _stage("raw")),
    Step("Scoped miss", "Over-fetch 2.5 fetches 25 candidates, deep enough for the first "
         "vault-agent doc to be returned.", lambda w: w.vm.set_param("overfetch", 2.5),
         _slider("overfetch")),
    Step("Scoped miss", "Back at over-fetch 1, pushing the scope into the search returns "
         "vault-agent docs at once.", lambda w: (w.vm.set_param("overfetch", 1.0),
                                                 w.vm.set_param("filter", "pushdown")),
         lambda w: w.query_bar.filter),
    Step("Importance", "At blend weight 0 ranking ignores importance: the low-importance "
         "memory ranks first.", _open(1), _stage("final"), opens=1),
    Step("Importance", "Blend weight 0.5 multiplies each score by 0.5 + 0.5 × importance: "
         "the expected memory overtakes it.", lambda w: w.vm.set_param("blend", 0.5),
         _slider("blend")),
    Step("Importance", "The rank-shift chart shows who moved; the detail pane shows this "
         "row's score step by step.", _select_expected, lambda w: w.bump),
    Step("Tie", "One memory saved twice ties at the limit-1 cut, and LanceDB's row order "
         "returns the older, less important copy.", _open(2), _stage("final"), opens=2),
    Step("Tie", "The raw candidates mark the tie across the cut with !; the expected copy, "
         "just as far from the query, was not fetched.", _select_expected, _stage("raw")),
    Step("Tie", "The importance-blend preset breaks the tie by importance: the expected "
         "copy is returned.", lambda w: _preset(w, "importance-blend"), _stage("final")),
)

# the index story's steps, when the demo store has that story (its suggested query 3)
INDEX_TOUR = (
    Step("Lost to the index", "On the indexed table LanceDB's default IVF_PQ search misses a "
         "memory the exact search ranks in its top 3.", _open(3), lambda w: w.banner,
         opens=3),
    Step("Lost to the index", "The tuning dock's Index tab sweeps the index's knobs for this "
         "query; the banner names the one that brings the row back.",
         lambda w: w.tuning_dock.show_tab("index"), lambda w: w.tuning_dock),
)


def tour_for(win: Any) -> tuple[Step, ...]:
    """The steps for the store the window has (the demo store's stories, the index story
    when it has it)."""
    store = win.vm.store
    stories = store.suggested_queries if store is not None and win.vm.opened.demo else []
    has_index = any(str(q.get("name", "")).startswith("Lost to the index") for q in stories)
    return TOUR + (INDEX_TOUR if has_index else ())
