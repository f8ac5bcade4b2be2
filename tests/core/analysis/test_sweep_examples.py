"""Sweeps over query sets given by example or by explicit vectors: every cell derived from the
grid's head of the deep pool equals a fresh `pipeline.run` of that cell (the per-query path),
all by-example vectors come from one read, and a query-set file may hold a query's vector."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inspector.core.analysis.judgments import Judgments, load_judgments
from inspector.core.analysis.sweep import Grid, cases_from_judgments, run_sweep
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.evidence.file_schemas import judgments_schema
from inspector.core.stores.opening import open_store
from tests.storekit import CountingTable, write_tuning_store

GRID = Grid(overfetch=(1.0, 1.5, 3.0, 6.0), blend=(0.0, 0.3, 1.0), min_score=(0.0, 0.2))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_tuning_store(tmp_path_factory.mktemp("ex") / "s", n=600, dim=24))


def _examples(n: int) -> Judgments:
    out = Judgments()
    for i in range(n):
        words = ("keys rotate", "tokens deploy", "cache logs")[i % 3]
        out = out.with_query(f"{words} m{i * 37:04d}", f"repo{i % 5}",
                             vector_of=f"m{i * 37:04d}")
    return out


@pytest.mark.parametrize(("mode", "placement"), [("vector", "post"), ("vector", "pushdown"),
                                                  ("hybrid", "post")])
def test_every_cell_equals_a_fresh_run_of_that_cell(folder, mode, placement) -> None:
    store = open_store(folder)
    base = Params(mode=mode, limit=5, cap=0, filter=placement)
    cases = cases_from_judgments(store, _examples(6), mode)
    result = run_sweep(store, cases, base, GRID, truth_depth=300)
    checked = 0
    for q in result.queries:
        for (i, j, m), _ in np.ndenumerate(q.returned):
            cell = q.params.with_(overfetch=GRID.overfetch[i], blend=GRID.blend[j],
                                  min_score=GRID.min_score[m])
            fresh = run(store, q.case.query, cell)
            assert q.final_ids(i, j, m) == list(fresh.ids("final")), (q.case.name, i, j, m)
            checked += 1
    assert checked == 6 * 4 * 3 * 2


def test_by_example_vectors_are_read_at_once(folder) -> None:
    store = open_store(folder)
    store.table = CountingTable(store.table)
    cases = cases_from_judgments(store, _examples(8), "vector")
    assert store.table.searches == 1
    for case in cases:  # the same vector a single lookup gives
        row = case.query.source.split(":", 1)[1]
        assert np.array_equal(case.query.vector, open_store(folder).vector_of(row))


def test_a_missing_example_is_one_clear_error(folder) -> None:
    from inspector.core.errors import InspectorError

    store = open_store(folder)
    bad = _examples(3).with_query("gone", None, vector_of="no-such-row")
    with pytest.raises(InspectorError, match="No row with id = 'no-such-row'"):
        cases_from_judgments(store, bad, "vector")


def test_query_set_files_may_hold_explicit_vectors(folder, tmp_path: Path) -> None:
    import jsonschema

    store = open_store(folder)
    vec = [float(x) for x in np.random.default_rng(4).normal(size=24)]
    data = {"format": "inspector-judgments", "version": 1,
            "queries": [{"query": "my own vector", "scope": "repo1", "vector": vec,
                         "judgments": {"m0001": 1}}]}
    jsonschema.validate(data, judgments_schema())
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data))
    loaded = load_judgments(path)
    assert loaded.to_json()["queries"][0]["vector"] == vec  # written back as read
    (case,) = cases_from_judgments(store, loaded, "vector")
    assert case.query.source == "vector"
    assert np.array_equal(case.query.vector, np.asarray(vec, np.float32))
    bad = {"queries": [{"query": "q", "vector": ["x"]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, judgments_schema())
    path.write_text(json.dumps(bad))
    from inspector.core.errors import InspectorError

    with pytest.raises(InspectorError, match="list of finite numbers"):
        load_judgments(path)
