"""The one sweep over any pipeline: every cell is the question answered with those parameters
set (the same rows, the same scoped recall against the same truth), the default grid is read
from the declarations, a query's cells ask LanceDB once where the fetch is prefix-exact, the
safe depth is the smallest change that serves the query (each value run), and a query set
reports progress and stops when cancelled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inspector.core.analysis import grid as G
from inspector.core.analysis.metrics import ndcg_at_k, scoped_recall
from inspector.core.analysis.sweep import Case, iter_sweep, run_sweep, sweep_case
from inspector.core.analysis.truth import truth_ids
from inspector.core.engine import pools
from inspector.core.engine.flow.question import Question, answer, resolve, runs_for
from inspector.core.errors import InspectorError
from inspector.core.stores.demo import SCOPE_QUERY
from inspector.core.stores.opening import open_store
from tests.storekit import CountingTable


def _q(store_path: Path, preset: str, **more: Any) -> Question:
    return Question(store=str(store_path), preset=preset, text="rotate keys tokens",
                    vector_of="m0005", limit=5, **more)


def _axes(q: Question, *items: str) -> list[G.Axis]:
    return G.parse_grid(resolve(q)[0], list(items))


def _fresh(store_path: Path, q: Question, sets: dict[str, Any]) -> list[str]:
    """The cell as `inspector query --set ...` answers it: a new store, a new cache."""
    pools.SOURCE.clear()
    store = open_store(str(store_path))
    return answer(q.model_copy(update={"set": {**q.set, **sets}}), store, fixes=False,
                  facet_mode="off").trace.final.ids


@pytest.mark.parametrize(("preset", "scopes", "pushdown"), [
    ("lancedb", ["repo0"], False), ("lancedb", ["repo0"], True),
    ("docs-before-fix", ["repo0"], False), ("importance-blend", None, False)])
def test_every_cell_is_the_question_answered_with_those_settings(
        small_store: Path, preset: str, scopes: list[str] | None, pushdown: bool) -> None:
    q = _q(small_store, preset, scopes=scopes,
           set={"scope_rule.pushdown": pushdown, "scope_rule.strategy": "column",
                "scope_rule.column": "repo"} if scopes else {})
    axes = _axes(q, "fetch.overfetch=1,2,3.5,6", "blend.weight=0,0.5,1",
                 "min_score.min=0,0.3")
    store = open_store(str(small_store))
    qs = sweep_case(store, Case("q", q), axes)
    for i, cell in enumerate(G.cells(axes)):
        got = _fresh(small_store, q, cell)
        assert qs.final_ids(i) == got, cell
        runs, _, _ = runs_for(q.model_copy(update={"set": {**q.set, **cell}}),
                              open_store(str(small_store)))
        want = scoped_recall(got, truth_ids(runs), 5)
        have = qs.values["scoped_recall"][i]
        assert (np.isnan(have) and want is None) or have == pytest.approx(want), cell


def test_the_default_grid_is_a_depth_by_a_weight_from_the_declarations() -> None:
    spec = resolve(Question(store="-", preset="docs-before-fix"))[0]
    depth, weight = G.default_axes(spec)
    assert (depth.key, weight.key) == ("fetch.overfetch", "blend.weight")
    assert depth.values == tuple(float(x) for x in range(1, 11)) and depth.live
    assert weight.values == tuple(round(0.1 * i, 1) for i in range(11))
    blend = resolve(Question(store="-", preset="importance-blend"))[0]
    depth, weight = G.default_axes(blend)
    assert depth.current == 3.0 and depth.values[0] == 3.0 and 30.0 in depth.values
    assert weight.current == 0.5 and 0.5 in weight.values
    pro = resolve(Question(store="-", preset="memory-lancedb-pro"))[0]
    axes = G.default_axes(pro)
    assert [a.effect for a in axes] == ["depth", "weight"]
    decls = G.declared(pro)
    for a in axes:
        decl, _ = decls[a.key]
        assert all(decl.lo <= v <= decl.hi for v in a.values) and a.current in a.values


def test_the_classic_grid_options_name_the_stage_that_holds_them() -> None:
    spec = resolve(Question(store="-", preset="docs-before-fix"))[0]
    items = G.option_items(spec, {"grid_overfetch": "1,2", "grid_blend": "0,1",
                                  "grid_min_score": "0.1"})
    assert items == ["fetch.overfetch=1,2", "blend.weight=0,1", "min_score.min=0.1"]
    langchain = resolve(Question(store="-", preset="langchain-lancedb"))[0]
    with pytest.raises(InspectorError, match="--grid-overfetch: pipeline langchain-lancedb"):
        G.option_items(langchain, {"grid_overfetch": "1,2"})
    with pytest.raises(InspectorError, match="STAGE.PARAM=SPEC"):
        G.parse_grid(spec, ["fetch.nosuch=1,2"])
    with pytest.raises(InspectorError, match="must be a finite number in"):
        G.parse_grid(spec, ["blend.weight=0:2:0.5"])


def test_an_explicit_overfetch_cell_replaces_the_scoped_overfetch(small_store: Path) -> None:
    """docs-overfetch derives its over-fetch from a scoped expression; a cell of the over-fetch
    axis sets it as --overfetch does (the expression cleared), so the axis changes the rows."""
    q = _q(small_store, "docs-overfetch", scopes=["repo0"])
    axes = _axes(q, "fetch.overfetch=1,8")
    qs = sweep_case(open_store(str(small_store)), Case("q", q), axes)
    for i, cell in enumerate(G.cells(axes)):
        assert qs.final_ids(i) == _fresh(small_store, q, {**cell, "fetch.scoped_overfetch": ""})


def test_one_query_grid_searches_lancedb_once_on_a_flat_table(small_store: Path) -> None:
    """The truth's deep search runs first; the classic pool source answers every shallower
    over-fetch of every cell from it (a flat search is prefix-exact)."""
    pools.SOURCE.clear()
    store = open_store(str(small_store))
    q = _q(small_store, "lancedb", scopes=["repo0"])
    q = q.model_copy(update={"vector": [float(x) for x in store.vector_of("m0005")],
                             "vector_of": None})
    counting = CountingTable(store.table)
    store.table = counting
    qs = sweep_case(store, Case("q", q), G.default_axes(resolve(q)[0]))
    assert counting.searches == 1 and len(qs.returned) == 110 and qs.runs > 110


def test_the_safe_depth_of_the_demo_scoped_miss(demo_path: Path) -> None:
    """The story: docs-before-fix scoped to vault-agent returns nothing; over-fetch 5.6 with a
    cap of 56 (or a search 56 deep) returns the whole truth, and nothing smaller does."""
    store = open_store(str(demo_path))
    q = Question(store=str(demo_path), preset="docs-before-fix", scopes=["vault-agent"],
                 text=SCOPE_QUERY)
    qs = next(iter_sweep(store, [Case("scope", q)], G.default_axes(resolve(q)[0])))
    s = qs.safe
    assert not s.served and s.truth == 10
    assert s.sets == {"fetch.overfetch": 5.6, "fetch.cap": 56} and s.depth == 56
    assert s.argv == ("--set", "fetch.cap=56", "--set", "fetch.overfetch=5.6")
    runs, _, _ = runs_for(q, store)
    truth = truth_ids(runs)

    def recall(**sets: Any) -> float | None:
        got = answer(q.model_copy(update={"set": sets}), store, fixes=False).trace
        return scoped_recall(got.final.ids, truth, 10)

    assert recall(**{"fetch.overfetch": 5.6, "fetch.cap": 56}) == 1.0
    assert recall(**{"fetch.overfetch": 5.5, "fetch.cap": 56}) < 1.0
    assert recall(**{"fetch.overfetch": 5.6, "fetch.cap": 55}) < 1.0
    assert dict(s.curve)[1.0] == 0.0


def test_a_served_query_says_the_smallest_value_that_still_serves_it(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    q = Question(store=str(demo_path), preset="importance-blend",
                 text="which editor theme does the user prefer")
    qs = sweep_case(store, Case("theme", q), G.default_axes(resolve(q)[0]))
    s = qs.safe
    assert s.served and s.key == "fetch.overfetch" and s.value <= s.current
    runs, _, _ = runs_for(q, store)
    truth = truth_ids(runs)

    def served(f: float) -> bool:
        got = answer(q.model_copy(update={"set": {"fetch.overfetch": f}}), store,
                     fixes=False).trace
        return scoped_recall(got.final.ids, truth, q.limit or 10) == 1.0

    assert served(s.value) and (s.value == 1.0 or not served(round(s.value - 0.1, 1)))


def test_judged_queries_use_ndcg_as_the_objective(small_store: Path) -> None:
    store = open_store(str(small_store))
    q = _q(small_store, "lancedb")
    first = _fresh(small_store, q, {"fetch.overfetch": 30.0, "fetch.cap": 0})
    grades = {first[2]: 2.0, "m0000": 1.0}
    axes = _axes(q, "fetch.overfetch=1,2", "blend.weight=0,0.5")
    qs = sweep_case(store, Case("q", q, tuple(sorted(grades.items()))), axes)
    assert qs.objective == "ndcg"
    want = ndcg_at_k(_fresh(small_store, q, {"fetch.overfetch": 2.0, "blend.weight": 0.5}),
                     grades, 5)
    assert qs.values["ndcg"][3] == pytest.approx(want)


def test_progress_is_reported_and_cancel_stops_between_queries(small_store: Path) -> None:
    store = open_store(str(small_store))
    q = _q(small_store, "lancedb")
    cases = [Case(f"q{n}", q.model_copy(update={"vector_of": f"m00{n:02d}"})) for n in (3, 5, 7)]
    axes = _axes(q, "fetch.overfetch=1,2,4", "blend.weight=0,0.5")
    seen: list[tuple[int, int]] = []
    result = run_sweep(store, q, cases, axes, progress=lambda d, t, _: seen.append((d, t)),
                       cancelled=lambda: True)
    assert result.cancelled and len(result.queries) == 1 and seen == [(1, 3)]
    full = run_sweep(store, q, cases, axes)
    data = full.to_json()
    assert not full.cancelled and len(data["queries"]) == 3 and len(data["cells"]) == 6
    assert data["safe"]["queries"] == 3
    assert data["best"]["pick"]["fetch.overfetch"] in (1.0, 2.0, 4.0)


def test_grid_axes_parse_and_reject_bad_values() -> None:
    assert G.parse_axis("1:3:0.5", "x") == (1.0, 1.5, 2.0, 2.5, 3.0)
    assert G.parse_axis("3,1,1", "x") == (1.0, 3.0)
    with pytest.raises(InspectorError, match="grid must be"):
        G.parse_axis("1:x", "x")
    spec = resolve(Question(store="-", preset="lancedb"))[0]
    with pytest.raises(InspectorError, match="must be a finite number in"):
        G.parse_grid(spec, ["fetch.overfetch=0.5"])
    with pytest.raises(InspectorError, match="at most 2,000"):
        G.check_size(G.parse_grid(spec, ["fetch.overfetch=1:100:1", "blend.weight=0:1:0.01"]))
