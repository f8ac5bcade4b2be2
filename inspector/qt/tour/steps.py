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
    """One of the demo store's suggested queries, and its answer (opening the demo store's
    main table first when another store or table is open: the stories are listed there)."""
    vm = win.vm
    stories = vm.store.suggested_queries if vm.store is not None else []
    if vm.opened is None or not vm.opened.demo or n >= len(stories):
        vm.open_store(None, then="none")
        vm.jobs.wait_idle(60.0)
    vm.load_suggested(n)
    vm.jobs.wait_idle(60.0)


def _first_fetched(win: Any) -> None:
    t = win.vm.trace
    fetch = next((st for st in t.stages if st.role == "fetch" and st.rows), None) \
        if t is not None else None
    if fetch is not None:
        win.vm.select(fetch.rows[0].id)


def _select_expected(win: Any) -> None:
    if win.vm.question.expect:
        win.vm.select(win.vm.question.expect[0])


def _preset(win: Any, name: str) -> None:
    """A preset picked as the user picks it (the query bar's combo)."""
    qb = win.query_bar
    i = qb.preset.findData(name)
    qb.preset.setCurrentIndex(i)
    qb.preset.activated.emit(i)
    win.vm.jobs.wait_idle(60.0)


def _set(win: Any, **sets: Any) -> None:
    """Parameters set as a slider or a fix sets them (STAGE__PARAM=value; None: the
    pipeline's own)."""
    for key, value in sets.items():
        win.vm.set_param(key.replace("__", "."), value)
    win.vm.jobs.wait_idle(60.0)


def _stage(name: str) -> Callable[[Any], QWidget]:
    def find(w: Any) -> QWidget:
        for sec in w.stages.visible_sections():
            if sec.summary is not None and sec.summary.name == name:
                return sec.table if sec.is_open else sec
        return w.stages
    return find


def _slider(key: str) -> Callable[[Any], QWidget]:
    return lambda w: w.sliders.sliders.get(key) or w.sliders


def _open(n: int) -> Callable[[Any], None]:
    return lambda w: open_demo_story(w, n)


TOUR = (
    Step("Scoped miss", "A docs search scoped to vault-agent returns nothing: the scope stage "
         "filters after the fetch's global top 10.", _open(0), _stage("scope"), opens=0),
    Step("Scoped miss", "All 10 fetched rows come from other repos; the scope stage says "
         "which rule dropped each.", _first_fetched, _stage("fetch")),
    Step("Scoped miss", "Over-fetch 2.5 fetches 25 rows, deep enough for the first "
         "vault-agent doc to be returned.", lambda w: _set(w, fetch__overfetch=2.5),
         _slider("fetch.overfetch")),
    Step("Scoped miss", "Back at over-fetch 1, pushing the scope into the search (the "
         "banner's first fix, run before it was offered) returns a full page.",
         lambda w: _set(w, fetch__overfetch=None, scope_rule__pushdown=True),
         lambda w: w.banner),
    Step("Importance", "At blend weight 0 ranking ignores importance: the low-importance "
         "memory ranks first.", _open(1), _stage("final"), opens=1),
    Step("Importance", "Blend weight 0.5 multiplies each score by 0.5 + 0.5 × importance: "
         "the expected memory overtakes it.", lambda w: _set(w, blend__weight=0.5),
         _slider("blend.weight")),
    Step("Importance", "The rank chart shows who moved in the blend; the detail pane shows "
         "this row's score through every stage.", _select_expected, lambda w: w.bump),
    Step("Tie", "One memory saved twice ties at the limit-1 cut, and LanceDB's row order "
         "returns the older, less important copy.", _open(2), _stage("final"), opens=2),
    Step("Tie", "The fetch marks the tie across the cut with =; the expected copy, just as "
         "far from the query, is cut.", _select_expected, _stage("fetch")),
    Step("Tie", "The importance-blend preset breaks the tie by importance: the expected "
         "copy is returned.", lambda w: _preset(w, "importance-blend"), _stage("final")),
)

# the index story's steps, when the demo store has that story (its suggested query 3)
INDEX_TOUR = (
    Step("Lost to the index", "On the indexed table LanceDB's default IVF_PQ search misses a "
         "memory the exact search ranks in its top 3.", _open(3), lambda w: w.banner,
         opens=3),
    Step("Lost to the index", "The index bar sets the exact search beside this one; its "
         "buttons are the diagnosis's index fixes, each run before it is offered.",
         lambda w: None, lambda w: w.index_bar),
)
def tour_for(win: Any) -> tuple[Step, ...]:
    """The steps for the store the window has (the demo store's stories, the index story
    when it has it)."""
    store = win.vm.store
    demo = win.vm.opened is not None and win.vm.opened.demo
    stories = store.suggested_queries if store is not None and demo else []
    has_index = any(str(q.get("name", "")).startswith("Lost to the index") for q in stories)
    return TOUR + (INDEX_TOUR if has_index else ())
