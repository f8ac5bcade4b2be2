"""Sweeps over query sets given by example or by explicit vectors: every example of a set is
read in one read and asked as its row's vector, each cell of each query is that question
answered with the cell's settings, and a query-set file may hold a query's vector."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inspector.core.analysis import grid as G
from inspector.core.analysis.judgments import Judgments, load_judgments
from inspector.core.analysis.sweep import cases_from_judgments, run_sweep
from inspector.core.engine.flow.question import Question, answer, resolve
from inspector.core.errors import InspectorError
from inspector.core.evidence.file_schemas import judgments_schema
from inspector.core.stores.opening import open_store
from tests.storekit import CountingTable, write_tuning_store


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_tuning_store(tmp_path_factory.mktemp("ex") / "s", n=600, dim=24))


def _base(folder: str, preset: str = "lancedb") -> Question:
    return Question(store=folder, preset=preset, limit=5,
                    set={"scope_rule.strategy": "column", "scope_rule.column": "repo"})


def _examples(n: int) -> Judgments:
    out = Judgments()
    for i in range(n):
        words = ("keys rotate", "tokens deploy", "cache logs")[i % 3]
        out = out.with_query(f"{words} m{i * 37:04d}", f"repo{i % 5}",
                             vector_of=f"m{i * 37:04d}")
    return out


@pytest.mark.parametrize(("preset", "pushdown"), [("lancedb", False), ("lancedb", True),
                                                  ("docs-before-fix", False)])
def test_every_cell_of_every_query_is_a_fresh_answer(folder: str, preset: str,
                                                     pushdown: bool) -> None:
    store = open_store(folder)
    base = _base(folder, preset)
    base = base.model_copy(update={"set": {**base.set, "scope_rule.pushdown": pushdown}})
    axes = G.parse_grid(resolve(base)[0], ["fetch.overfetch=1,3,6", "blend.weight=0,1"])
    result = run_sweep(store, base, cases_from_judgments(base, _examples(4), store), axes)
    checked = 0
    for q in result.queries:
        for i, cell in enumerate(G.cells(axes)):
            fresh = answer(q.case.question.model_copy(update={"set": {**base.set, **cell}}),
                           open_store(folder), fixes=False, facet_mode="off")
            assert q.final_ids(i) == fresh.trace.final.ids, (q.case.name, cell)
            checked += 1
    assert checked == 4 * 6


def test_by_example_vectors_are_read_at_once(folder: str) -> None:
    store = open_store(folder)
    store.table = CountingTable(store.table)
    cases = cases_from_judgments(_base(folder), _examples(8), store)
    assert store.table.searches == 1
    for case, jq in zip(cases, _examples(8).queries, strict=True):
        assert case.question.vector_of is None and case.question.scopes == [jq.scope]
        want = open_store(folder).vector_of(jq.vector_of or "")
        assert np.array_equal(np.asarray(case.question.vector), want)


def test_a_missing_example_is_one_clear_error(folder: str) -> None:
    bad = _examples(3).with_query("gone", None, vector_of="no-such-row")
    with pytest.raises(InspectorError, match="No row with id = 'no-such-row'"):
        cases_from_judgments(_base(folder), bad, open_store(folder))


def test_a_query_without_a_scope_asks_the_base_questions(folder: str) -> None:
    base = _base(folder).model_copy(update={"scopes": ["repo2"]})
    (case,) = cases_from_judgments(base, Judgments().with_query("keys", None))
    assert case.question.scopes == ["repo2"] and case.question.text == "keys"


def test_query_set_files_may_hold_explicit_vectors(folder: str, tmp_path: Path) -> None:
    import jsonschema

    vec = [float(x) for x in np.random.default_rng(4).normal(size=24)]
    data = {"format": "inspector-judgments", "version": 1,
            "queries": [{"query": "my own vector", "scope": "repo1", "vector": vec,
                         "judgments": {"m0001": 1}}]}
    jsonschema.validate(data, judgments_schema())
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data))
    loaded = load_judgments(path)
    assert loaded.to_json()["queries"][0]["vector"] == vec  # written back as read
    (case,) = cases_from_judgments(_base(folder), loaded, open_store(folder))
    assert case.question.vector == vec and case.grades == (("m0001", 1.0),)
    bad = {"queries": [{"query": "q", "vector": ["x"]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, judgments_schema())
    path.write_text(json.dumps(bad))
    with pytest.raises(InspectorError, match="list of finite numbers"):
        load_judgments(path)
