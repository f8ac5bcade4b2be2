"""`sweep` and `report` on real indexed tables (issue 21: both refused IVF_PQ and HNSW tables,
the demo's own included, "These parameters need a new query"). Where no deep pool answers a
cell exactly, the cell runs its own query: every cell must equal `inspector query` with the
same parameters, and the truth is the exact search (checked against numpy)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.analysis.sweep import Case, Grid, iter_sweep
from inspector.core.engine.inputs import build_params, build_query
from inspector.core.evidence.bundle import load
from inspector.core.stores.opening import open_store
from tests import indexkit
from tests.storekit import snapshot

SCOPE = ("--scope", indexkit.RARE, "--scope-strategy", "column", "--scope-column", "agentId")
ROW = "r00042"


@pytest.fixture(scope="module", params=["IVF_PQ", "IVF_HNSW_SQ"])
def indexed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexkit.build(tmp_path_factory.mktemp("tune_index") / request.param, request.param)


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code = main(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def _final(doc: dict) -> list[str]:
    (final,) = [s for s in doc["stages"] if s["name"] == "final"]
    return [c["id"] for c in final["candidates"]]


def _exact_truth(k: int = 10) -> list[str]:
    """The rare agent's exact top k around row 42, ranked in numpy (blend 0)."""
    ids, vecs, agents, _ = indexkit.data()
    mask = np.asarray(agents, dtype=object) == indexkit.RARE
    return indexkit.exact_ids(vecs, ids, vecs[int(ROW[1:])], k, mask)


@pytest.mark.parametrize("placement", ["post", "pushdown"])
def test_sweep_on_an_indexed_table_answers_every_cell_as_query_does(capsys, indexed, placement):
    before = snapshot(indexed)
    opts = (*SCOPE, "--filter", placement)
    doc = _json(capsys, "sweep", str(indexed), "--vector-of", ROW, *opts, "--grid-overfetch",
                "1,3", "--grid-blend", "0,0.5", "--json")
    assert doc["own_query"] == {"cells": 4, "of": 4, "overfetch": [1.0, 3.0], "queries": 1}
    (q,) = doc["queries"]
    assert q["own_query"] == [[[True], [True]], [[True], [True]]]
    store = open_store(str(indexed))
    params = build_params(preset=None, scope=indexkit.RARE, scope_strategy="column",
                          scope_column="agentId", filter=placement)
    (cells,) = iter_sweep(store, [Case("r", build_query(store, "vector", vector_of=ROW))],
                          params, Grid((1.0, 3.0), (0.0, 0.5)))
    truth = _exact_truth()
    for i, f in enumerate(("1", "3")):
        for j, w in enumerate(("0", "0.5")):
            want = _final(_json(capsys, "query", str(indexed), "--vector-of", ROW, *opts,
                                "--overfetch", f, "--blend", w, "--json"))
            assert cells.final_ids(i, j, 0) == want, (f, w)
            assert q["returned"][i][j][0] == len(want)
            if w == "0":  # scoped recall against the exact search, not the index's own
                assert q["values"]["scoped_recall"][i][j][0] == \
                    pytest.approx(len(set(want) & set(truth)) / len(truth))
    assert q["truth_size"] == len(truth)
    assert main(["sweep", str(indexed), "--vector-of", ROW, *opts, "--grid-overfetch", "1,3",
                 "--grid-blend", "0"]) == 0
    assert "2 of 2 cells were answered by their own query" in capsys.readouterr().out
    assert snapshot(indexed) == before


def test_report_on_an_indexed_table_holds_what_query_returns(capsys, indexed, tmp_path):
    before = snapshot(indexed)
    opts = (*SCOPE, "--filter", "pushdown")
    out = tmp_path / "receipt"
    assert main(["report", str(indexed), "--vector-of", ROW, *opts, "--grid-overfetch", "1,2",
                 "--grid-blend", "0", "--out", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    receipt = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    want = _json(capsys, "query", str(indexed), "--vector-of", ROW, *opts, "--json")
    got = receipt["trace"]
    assert _final(got) == _final(want) and got["counters"] == want["counters"]
    assert got["diagnosis"] == want["diagnosis"] and got["index_facet"] == want["index_facet"]
    assert receipt["truth"] == _exact_truth()
    assert receipt["metrics"]["scoped_recall@10"] == \
        pytest.approx(len(set(_final(want)) & set(_exact_truth())) / 10)
    assert receipt["sweep"]["own_query"]["cells"] == 2
    again = load(out.with_suffix(".json"))  # the receipt reopens and re-ranks offline
    assert list(again.pool.ids) == [c["id"] for c in got["stages"][0]["candidates"]]
    assert snapshot(indexed) == before


def test_the_demo_s_indexed_table_takes_report_and_sweep(capsys, demo_path, tmp_path):
    """The demo store's own IVF_PQ table, as a user meets it first."""
    args = (str(demo_path), "--table", "memories_indexed", "--vector-of", "mem-02540")
    before = snapshot(Path(demo_path))
    want = _final(_json(capsys, "query", *args, "--overfetch", "2", "--json"))
    assert main(["report", *args, "--overfetch", "2", "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    receipt = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert _final(receipt["trace"]) == want
    doc = _json(capsys, "sweep", *args, "--grid-overfetch", "1,2", "--grid-blend", "0,1",
                "--json")
    assert doc["own_query"]["cells"] == 4
    assert doc["queries"][0]["returned"][1][0][0] == len(want)
    assert snapshot(Path(demo_path)) == before
