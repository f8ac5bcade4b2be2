"""Sweeps: every cell equals a single pipeline.run with the same parameters, truths are the
prefiltered ranking, the safe over-fetch is the smallest full-recall depth, and long sweeps
report progress and stop when cancelled."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.analysis.metrics import ndcg_at_k, scoped_recall
from inspector.core.analysis.sweep import (
    Case,
    Grid,
    fetch_case,
    iter_sweep,
    parse_axis,
    run_sweep,
)
from inspector.core.analysis.truth import truth_ids
from inspector.core.engine.inputs import build_params, build_query
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.engine.pool import Query
from inspector.core.engine.pools import exhaustive_pool
from inspector.core.errors import InspectorError
from inspector.core.stores.demo import SCOPE_QUERY
from inspector.core.stores.opening import open_store

GRID = Grid(overfetch=(1.0, 2.0, 3.5, 6.0), blend=(0.0, 0.5, 1.0), min_score=(0.0, 0.3))


def _case(store, mode: str, row: str = "m0005") -> Case:  # noqa: ANN001
    q = build_query(store, mode, text="rotate keys tokens", vector_of=row)
    return Case(name=f"{mode} {row}", query=Query(text=q.text, vector=q.vector), scope="repo0")


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
@pytest.mark.parametrize("placement", ["post", "pushdown"])
def test_every_cell_equals_a_single_run(small_store: Path, mode: str, placement: str) -> None:
    store = open_store(str(small_store))
    base = Params(mode=mode, limit=5, cap=0, filter=placement, fts_k=8, vec_k=8)
    case = _case(store, mode)
    qs = next(iter_sweep(store, [case], base, GRID))
    pool = fetch_case(store, case, base, GRID)
    assert qs.pool_size == pool.size
    for (i, j, m), _ in np.ndenumerate(qs.returned):
        p = case.params(base).with_(overfetch=GRID.overfetch[i], blend=GRID.blend[j],
                                    min_score=GRID.min_score[m])
        got = run(store, case.query, p).ids("final")
        assert qs.final_ids(i, j, m) == got, (i, j, m)
        truth = truth_ids(pool, p)
        want = scoped_recall(got, truth, p.limit)
        cell = qs.values["scoped_recall"][i, j, m]
        assert (np.isnan(cell) and want is None) or cell == pytest.approx(want)


def test_vector_truth_is_the_prefiltered_exhaustive_ranking(small_store: Path) -> None:
    store = open_store(str(small_store))
    p = Params(mode="vector", limit=6, scope="repo0", blend=0.5, min_score=0.0)
    q = _case(store, "vector").query
    truth = truth_ids(exhaustive_pool(store, q, p), p)
    pushed = run(store, q, p.with_(filter="pushdown", overfetch=store.rows / p.limit, cap=0))
    assert truth == pushed.ids("final") and len(truth) == 6


def test_safe_overfetch_is_the_smallest_depth_with_full_recall(small_store: Path) -> None:
    store = open_store(str(small_store))
    base = Params(mode="vector", limit=5, cap=0)
    case = _case(store, "vector", "m0003")
    qs = next(iter_sweep(store, [case], base, GRID))
    d = qs.safe.depth
    assert d is not None and qs.safe.overfetch == pytest.approx(d / 5)
    p = case.params(base)
    truth = truth_ids(fetch_case(store, case, base, GRID), p)

    def recall(depth: int) -> float | None:
        got = run(store, case.query, p.with_(overfetch=depth / 5)).ids("final")
        return scoped_recall(got, truth, 5)

    assert recall(d) == 1.0
    assert d == 5 or recall(d - 1) < 1.0
    curve = [r for _, r in qs.safe.curve]
    assert curve == sorted(curve)  # vector recall only grows with depth


def test_judged_queries_use_ndcg_as_the_objective(small_store: Path) -> None:
    store = open_store(str(small_store))
    base = Params(mode="vector", limit=5, cap=0)
    case = _case(store, "vector")
    first = run(store, case.query, case.params(base).with_(overfetch=30.0)).ids("final")
    grades = {str(first[2]): 2.0, "m0000": 1.0}
    judged = Case(case.name, case.query, case.scope, tuple(sorted(grades.items())))
    qs = next(iter_sweep(store, [judged], base, GRID))
    assert qs.objective == "ndcg"
    p = case.params(base).with_(overfetch=2.0, blend=0.5)
    want = ndcg_at_k(run(store, case.query, p).ids("final"), grades, 5)
    assert qs.values["ndcg"][1, 1, 0] == pytest.approx(want)


def test_progress_is_reported_and_cancel_stops_between_queries(small_store: Path) -> None:
    store = open_store(str(small_store))
    cases = [_case(store, "vector", f"m00{n:02d}") for n in (3, 5, 7)]
    seen: list[tuple[int, int]] = []
    result = run_sweep(store, cases, Params(mode="vector", limit=5), GRID,
                       progress=lambda d, t, _: seen.append((d, t)), cancelled=lambda: True)
    assert result.cancelled and len(result.queries) == 1 and seen == [(1, 3)]
    full = run_sweep(store, cases, Params(mode="vector", limit=5), GRID)
    assert not full.cancelled and len(full.queries) == 3
    assert full.aggregate["scoped_recall"].shape == GRID.shape
    data = full.to_json()
    assert data["safe"]["queries"] == 3 and len(data["queries"]) == 3
    assert data["best"]["pick"]["overfetch"] in GRID.overfetch


def test_demo_scope_story_needs_a_larger_overfetch(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    base = build_params(mode="vector", scope="vault-agent", limit=10, cap=0)
    case = Case("scope", build_query(store, "vector", text=SCOPE_QUERY))
    qs = next(iter_sweep(store, [case], base, Grid(blend=(0.0,))))
    curve = dict(qs.safe.curve)
    assert curve[1.0] == 0.0 and qs.safe.overfetch is not None and qs.safe.overfetch > 2
    assert qs.truth_complete and qs.truth_size == 10


def test_grid_axes_parse_and_reject_bad_values() -> None:
    assert parse_axis("1:3:0.5", "x") == (1.0, 1.5, 2.0, 2.5, 3.0)
    assert parse_axis("3,1,1", "x") == (1.0, 3.0)
    with pytest.raises(InspectorError, match="grid must be"):
        parse_axis("1:x", "x")
    with pytest.raises(InspectorError, match="Over-fetch must be"):
        Grid(overfetch=(0.5,)).resolved(Params())
