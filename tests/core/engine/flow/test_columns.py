"""A run over columns (`runner.outline`) keeps the ids its rows keep (`runner.run`), in the
same order, and tells the same rows kept and note per stage, or says it cannot (None) and the
rows answer: over random scopes, strategies,
depths, weights, defaults, thresholds, limits and what-if depths, on a store with what the
classic pipeline's rules trip on (twin vectors, missing, NaN and out-of-range importance,
text and integer ids, mixed-case and empty scopes)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from inspector.core.engine import pools
from inspector.core.engine.flow import runner
from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.flow.runs import Change, Runs
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store
from tests.storekit import snapshot, write_mixed_store

# the shipped pipelines whose route is the classic one: under LanceDB's tie rule (vector,
# unless a mode is set) and under the rule by id (the docs engine's hybrid)
COLUMN_PRESETS = ("lancedb", "memory-plugin", "importance-blend", "openclaw-search-defaults",
                  "other-plugin", "engine-memory", "docs-before-fix", "docs-overfetch")
WORDS = ("keys", "tokens rotate", "deploy cache logs", "note")
SCOPES: list[tuple[str, ...] | None] = [None, ("repo1",), ("Repo0",), ("repo0",), ("global",),
                                        ("agent:main",), ("repo5",)]
STRATEGIES = ("repo_prefix", "path_prefix", "agent_scope", "column")


def _runs(path: Path, preset: str, scopes: tuple[str, ...] | None, strategy: str,
          limit: int, vector: list[float], text: str | None = None, **more: Any) -> Runs:
    sets: dict[str, Any] = {"scope_rule.strategy": strategy, **more}
    if strategy == "column":
        sets["scope_rule.column"] = "repo"
    q = Question(store=str(path), preset=preset, vector=vector, text=text, limit=limit,
                 scopes=None if scopes is None else list(scopes), set=sets)
    runs, _, _ = runs_for(q, open_store(str(path)), PoolCache())
    return runs


def _both(runs: Runs, change: Change) -> tuple[Any, Any]:
    """(the ids over columns or None or the error, the ids over rows or the error), each
    stage's rows kept and note compared on the way."""
    full = runs._full(change)
    spec = runs._spec(full.sets) if full.sets else runs.spec
    args = dict(text=runs.text, vector=runs.vector, scopes=runs.scopes,
                limit=full.limit if full.limit is not None else runs.limit,
                now_ms=runs.now_ms, query_source=runs.source,
                vector_error=runs.vector_error, exact=full.exact, widen=dict(full.widen),
                live=runs.live)
    try:
        got = runner.outline(runs.store, spec, **args)
        cols: Any = None if got is None else list(got.ids)
    except InspectorError as exc:
        got, cols = None, f"error: {exc}"
    try:
        trace = runner.run(runs.store, spec, cache=runs.cache, **args)
        rows: Any = trace.final.ids
    except InspectorError as exc:
        trace, rows = None, f"error: {exc}"
    if got is not None and trace is not None:
        assert got.marks() == trace.marks()
    return cols, rows


@pytest.mark.parametrize("intid", [False, True])
def test_a_run_over_columns_keeps_the_rows_its_rows_keep(tmp_path: Path, intid: bool) -> None:
    import lancedb

    path = write_mixed_store(tmp_path / "s", n=260, intid=intid, seed=3)
    before = snapshot(path)
    stored = lancedb.connect(str(path)).open_table("memories").search().limit(None) \
        .to_arrow().column("vector").to_pylist()
    rng = random.Random(11 + intid)
    answered = 0
    long = 0
    by_columns: dict[str, int] = {}
    for n in range(48):
        pools.SOURCE.clear()
        preset = COLUMN_PRESETS[n % len(COLUMN_PRESETS)]
        near = rng.choice(stored)  # near a stored row: scores on both sides of a threshold
        vec = [x + rng.gauss(0, 0.3) for x in near]
        mode = rng.choice(["vector", "vector", "fts", "hybrid"])
        more = {} if preset in ("engine-memory", "docs-before-fix", "docs-overfetch") else \
            {"fetch.mode": mode, **({"tie_rule": "id"} if rng.random() < 0.3 else {})}
        more.update({"scope_rule.pushdown": rng.random() < 0.3,
                     "fetch.distance": rng.choice(["l2", "l2", "cosine"]),
                     "fetch.rrf_k": rng.choice([60, 1]), "fetch.fts_k": rng.choice([0, 7]),
                     "fetch.vec_k": rng.choice([0, 9])})
        runs = _runs(path, preset, rng.choice(SCOPES), rng.choice(STRATEGIES),
                     rng.choice([1, 3, 5, 10, 40]), vec, rng.choice(WORDS), **more)
        runs.live = rng.random() < 0.5
        rule = runs.spec.settings.get("tie_rule", "lancedb")
        mode = runs.spec.routes[0].stages[1].params.get("mode", "vector")
        for _ in range(8):
            sets = {"fetch.overfetch": rng.choice([1.0, 1.5, 2.0, 4.0, 7.3, 20.0]),
                    "fetch.cap": rng.choice([0, 5, 50, 120]),
                    "blend.weight": rng.choice([0.0, 0.1, 0.5, 0.95, 1.0]),
                    "blend.default_importance": rng.choice([0.7, 0.0, 1.0, 1.5]),
                    "min_score.min": rng.choice([0.0, 0.03, 0.05, 0.2, -1.0])}
            last = runs.spec.routes[0].stages[-1].name  # the limit: a what-if keeps more
            widen = rng.choice([(), (("fetch", 260),), (("fetch", 37),), ((last, 15),)])
            change = Change().with_sets(**sets)
            change = Change(change.sets, widen, limit=rng.choice([None, 2, 12]))
            cols, rows = _both(runs, change)
            # a column form for every change here but where LanceDB's own full-text order
            # is asked (a BM25 tie under its rule)
            assert cols is not None or (rule == "lancedb" and mode != "vector"), (preset, sets)
            if cols is None:
                continue
            assert cols == rows, (preset, runs.scopes, sets, widen)
            by_columns[f"{rule} {mode}"] = by_columns.get(f"{rule} {mode}", 0) + 1
            answered += not isinstance(rows, str)
            long += len(rows) >= 5 and not isinstance(rows, str)
    assert answered > 250 and long > 30  # most runs answered, many with rows to compare
    assert all(by_columns.get(k, 0) >= 8 for k in ("lancedb vector", "id vector", "id fts",
                                                    "id hybrid")), by_columns
    assert snapshot(path) == before


def test_the_ids_of_equal_scores_keep_the_leg_order(tmp_path: Path) -> None:
    """Rows 5 and 6 (and 40 and 41) have the same vector: equal distances, ordered by row id,
    and after the blend (weight 0: equal scores) a stable sort keeps that order."""
    path = write_mixed_store(tmp_path / "s", n=120, seed=1)
    import lancedb
    import numpy as np

    tbl = lancedb.connect(str(path)).open_table("memories")
    twin = np.asarray(tbl.search().where("id = 'm0005'").limit(1).to_arrow()
                      .column("vector").to_pylist()[0], np.float32)
    runs = _runs(path, "lancedb", None, "repo_prefix", 10, [float(x) for x in twin])
    cols, rows = _both(runs, Change())
    assert cols == rows
    assert cols[:2] == ["m0005", "m0006"]


@pytest.mark.parametrize("preset,sets", [
    ("memory-plugin", {"fetch.mode": "fts"}),  # LanceDB's own order of tied BM25 scores
    ("memory-plugin", {"fetch.mode": "hybrid"}),
    ("memory-plugin", {"min_score.drop_expired": True}),  # each row's expiry
    ("memory-lancedb-pro", {}),  # stages with no column form
])
def test_a_route_the_columns_cannot_take_is_answered_by_its_rows(
        tmp_path: Path, preset: str, sets: dict[str, Any]) -> None:
    path = write_mixed_store(tmp_path / "s", n=120)
    q = Question(store=str(path), preset=preset, text="keys", vector=[0.1] * 16, limit=5)
    runs, _, _ = runs_for(q, open_store(str(path)), PoolCache())
    change = Change().with_sets(**sets)
    cols, rows = _both(runs, change)
    assert cols is None
    assert runs.final_ids(change) == rows
    assert runs.count == 1  # the one run over rows, remembered


def test_final_ids_answer_from_columns_once_and_remember_them(tmp_path: Path,
                                                              monkeypatch: Any) -> None:
    path = write_mixed_store(tmp_path / "s", n=200)
    runs = _runs(path, "memory-plugin", ("repo1",), "repo_prefix", 5, [0.2] * 16)
    rows_made = []
    real = runner.run
    monkeypatch.setattr("inspector.core.engine.flow.runs.run",
                        lambda *a, **k: rows_made.append(1) or real(*a, **k))
    change = Change().with_sets(**{"fetch.overfetch": 3.0, "blend.weight": 0.4})
    first = runs.final_ids(change)
    assert runs.final_ids(change) == first
    assert rows_made == [] and runs.count == 1
    assert runs.run(change).final.ids == first  # the rows agree, and now a run is made
    assert rows_made == [1]


def test_a_disagreement_sends_the_question_to_its_rows(tmp_path: Path,
                                                       monkeypatch: Any) -> None:
    """`columns_agree` compares one run; where the columns answer otherwise (here a column
    form made wrong on purpose), what they answered goes and the rows answer from then on."""
    from inspector.core.engine.flow import registry
    from inspector.core.engine.flow.columns import Columns

    path = write_mixed_store(tmp_path / "s", n=200)
    runs = _runs(path, "memory-plugin", None, "repo_prefix", 5, [0.3] * 16)
    change = Change().with_sets(**{"blend.weight": 0.5, "min_score.min": 0.0})
    right = runs.final_ids(change)
    assert len(right) >= 3
    kind = registry.KINDS["limit"]

    def wrong(ctx: Any, cols: Columns, p: dict[str, Any]) -> Columns:
        return Columns(cols.pool, cols.at[1:ctx.limit + 1], cols.score[1:ctx.limit + 1])

    monkeypatch.setitem(registry.KINDS, "limit", registry.replace(kind, columns=wrong))
    assert not runs.columns_agree(change)
    assert not runs.columns
    assert runs.final_ids(change) == right  # from a run over rows now, not the memo
    other = Change().with_sets(**{"blend.weight": 0.6, "min_score.min": 0.0})
    assert runs.final_ids(other) == runs.run(other).final.ids


@pytest.mark.parametrize("weight", [0.0, 0.5])
def test_a_row_scoring_exactly_the_min_score_is_kept_over_columns_too(
        tmp_path: Path, weight: float) -> None:
    path = write_mixed_store(tmp_path / "s", n=150)
    runs = _runs(path, "memory-plugin", None, "repo_prefix", 10, [0.05] * 16)
    sets = {"blend.weight": weight, "min_score.min": 0.0, "fetch.overfetch": 3.0}
    scores = [s.score for s in runs.run(Change().with_sets(**sets)).stage("blend").rows]
    at = scores[4]  # the fifth row's blended score, exactly
    cols, rows = _both(runs, Change().with_sets(**{**sets, "min_score.min": at}))
    assert cols == rows
    assert len(rows) == 5


@pytest.mark.parametrize("sets", [{"fetch.scoped_overfetch": "0 * limit"},  # refused by the
                                  {"fetch.no_such": 1}])  # fetch; by the pipeline's settings
def test_a_refused_change_is_one_run_over_columns_as_over_rows(tmp_path: Path,
                                                               sets: dict[str, Any]) -> None:
    """A search's budget counts runs; a refusal counts as one either way, so a search spends
    it alike."""
    path = write_mixed_store(tmp_path / "s", n=80)
    counts, errors = [], []
    for columns in (True, False):
        runs = _runs(path, "memory-plugin", ("repo1",), "repo_prefix", 5, [0.1] * 16)
        runs.columns = columns
        with pytest.raises(InspectorError) as err:
            runs.final_ids(Change().with_sets(**sets))
        counts.append(runs.count)
        errors.append(str(err.value))
    assert counts == [1, 1]
    assert errors[0] == errors[1]


# every parameter of each kind with a column form, as its column form was written and tested
# for; a parameter added to such a kind fails here until its column form reads it (or says it
# needs the rows) and the comparison above draws it
REVIEWED = {
    "scope_rule": {"column", "map", "pushdown", "strategy", "strategy_unscoped"},
    "lancedb_pool": {"cap", "distance", "ef", "fts_k", "max_nprobes", "min_nprobes", "mode",
                     "nprobes", "overfetch", "refine_factor", "rrf_k", "scoped_overfetch",
                     "vec_k"},
    "scope_filter": set(),
    "importance_blend": {"default_importance", "weight"},
    "min_score": {"drop_expired", "min"},
    "limit": set(),
}


def test_the_kinds_with_column_forms_have_the_parameters_those_were_written_for() -> None:
    from inspector.core.engine.flow import registry

    have = {k: set(kind.by_name) for k, kind in registry.KINDS.items()
            if kind.columns is not None}
    assert have == REVIEWED
