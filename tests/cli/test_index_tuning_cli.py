"""`sweep` and `report` on real indexed tables (issue 21: both refused IVF_PQ and HNSW tables,
the demo's own included). An approximate search at one depth is no prefix of another, so each
cell runs its own search: every cell must equal `inspector query` with the same settings, and
the truth is the exact search (checked against numpy)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.evidence.receipt import load
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
    return [c["id"] for c in doc["stages"][-1]["candidates"]]


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
    (q,) = doc["queries"]
    truth = _exact_truth()
    assert q["truth"] == truth  # the exact search, not the index's own
    for i, cell in enumerate(doc["cells"]):
        f, w = cell["at"]["fetch.overfetch"], cell["at"]["blend.weight"]
        want = _final(_json(capsys, "query", str(indexed), "--vector-of", ROW, *opts,
                            "--overfetch", str(f), "--blend", str(w), "--json"))
        assert q["returned"][i] == len(want), (f, w)
        if w == 0:  # scoped recall against the exact search, not the index's own
            assert q["values"]["scoped_recall"][i] == \
                pytest.approx(len(set(want) & set(truth)) / len(truth))
        got = q["values"]["index_recall"][i]  # undefined where the exact run returns nothing
        assert (got is None) == (cell["index_recall"] is None) and (got is None or 0 <= got <= 1)
    assert snapshot(indexed) == before


def test_report_on_an_indexed_table_holds_what_query_returns(capsys, indexed, tmp_path):
    before = snapshot(indexed)
    opts = (*SCOPE, "--filter", "pushdown", "--now", "1796113038032")
    out = tmp_path / "receipt"
    assert main(["report", str(indexed), "--vector-of", ROW, *opts, "--grid-overfetch", "1,2",
                 "--grid-blend", "0", "--out", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    receipt = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    want = _json(capsys, "query", str(indexed), "--vector-of", ROW, *opts, "--json")
    got = receipt["before"]
    assert _final(got) == _final(want) and got["counters"] == want["counters"]
    assert got["diagnosis"] == want["diagnosis"] and got["index_facet"] == want["index_facet"]
    ev = receipt["evidence"]["before"]
    assert ev["truth"] == _exact_truth()
    assert ev["metrics"]["scoped_recall@10"] == \
        pytest.approx(len(set(_final(want)) & set(_exact_truth())) / 10)
    assert len(receipt["evidence"]["sweep"]["cells"]) == 2
    again = load(out.with_suffix(".json"))  # the receipt reopens: its record, checked
    assert [c.id for c in again.before.stages[-1].candidates] == _final(want)
    assert snapshot(indexed) == before


def test_the_demo_s_indexed_table_takes_report_and_sweep(capsys, demo_path, tmp_path):
    """The demo store's own IVF_PQ table, as a user meets it first."""
    args = (str(demo_path), "--table", "memories_indexed", "--vector-of", "mem-02540")
    before = snapshot(Path(demo_path))
    want = _final(_json(capsys, "query", *args, "--overfetch", "2", "--json"))
    assert main(["report", *args, "--overfetch", "2", "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    receipt = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert _final(receipt["before"]) == want
    doc = _json(capsys, "sweep", *args, "--grid-overfetch", "1,2", "--grid-blend", "0,1",
                "--json")
    assert doc["queries"][0]["returned"][2] == len(want)  # over-fetch 2, blend 0
    assert snapshot(Path(demo_path)) == before
