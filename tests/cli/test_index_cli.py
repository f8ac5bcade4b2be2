"""The command line on a real indexed table: the index in `tables`, `params.index` and the
facet in the query JSON, the knobs reaching LanceDB, and --expect naming the index."""

from __future__ import annotations

import json
from pathlib import Path

import lancedb
import pytest

from inspector.cli import main
from tests import indexkit
from tests.storekit import snapshot


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    q = indexkit.data()[1][42]  # r00042, an "ops" row far from the rare agent's clusters
    return indexkit.build(tmp_path_factory.mktemp("cli_index") / "ivf", "IVF_PQ",
                          accept=lambda t: indexkit.bare_recall(t, q, 1, indexkit.RARE)
                          < indexkit.bare_recall(t, q, 64, indexkit.RARE))


def _json(capsys, *args: str) -> dict:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_tables_lists_the_vector_index(capsys, path):
    (t,) = _json(capsys, "tables", str(path), "--json")
    (ix,) = t["vector_indexes"]
    assert (ix["type"], ix["column"], ix["metric"], ix["sub_vectors"]) == \
        ("IVF_PQ", "vector", "l2", 4)
    assert main(["tables", str(path)]) == 0
    assert "index   IVF_PQ on vector (l2 metric, sub-vectors 4" in capsys.readouterr().out


def test_query_json_carries_the_index_the_knobs_and_the_facet(capsys, path):
    before = snapshot(path)
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--json")
    ix = doc["params"]["index"]
    assert ix["type"] == "IVF_PQ" and ix["used"] and ix["nprobes"] == 20
    assert ix["refine_factor"] is None and ix["ef"] is None and not ix["prefix_exact"]
    assert doc["index_facet"]["depth"] == 10
    assert doc["counters"]["lostToIndex"] == doc["index_facet"]["lostToIndex"]
    assert all("exact_rank" in c for c in doc["stages"][0]["candidates"])
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--nprobes", "7",
                "--refine-factor", "3", "--json")
    ix = doc["params"]["index"]
    assert (ix["nprobes"], ix["refine_factor"], ix["prefix_exact"]) == (7, 3, False)
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--exact", "--json")
    assert doc["params"]["exact"] is True and doc["params"]["index"]["used"] is False
    assert doc["index_facet"] is None
    assert snapshot(path) == before


def test_query_knobs_are_validated(capsys, path):
    assert main(["query", str(path), "--vector-of", "r00042", "--nprobes", "0"]) == 2
    assert "nprobes" in capsys.readouterr().err


def test_the_index_facet_runs_when_asked_and_says_when_it_did_not(capsys, path, monkeypatch):
    """A large indexed table is answered at LanceDB's own cost: `auto` skips the exact
    comparison past AUTO_MAX_ROWS and says so; `on` runs it anyway; `off` never."""
    from inspector.core.engine.ann import facet

    monkeypatch.setattr(facet, "AUTO_MAX_ROWS", 10)
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--json")
    assert doc["index_facet"] is None and "lostToIndex" not in doc["counters"]
    assert any("not compared with an exact search" in w for w in doc["warnings"])
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--index-facet", "on",
                "--json")
    assert doc["index_facet"]["depth"] == 10
    monkeypatch.setattr(facet, "AUTO_MAX_ROWS", 10**9)
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--index-facet", "off",
                "--json")
    assert doc["index_facet"] is None
    assert any("--index-facet off" in w for w in doc["warnings"])


def test_sweep_over_nprobes_gives_recall_against_the_exact_search(capsys, path):
    """`sweep --grid-nprobes` (issue 21: it always failed with a TypeError)."""
    before = snapshot(path)
    doc = _json(capsys, "sweep", str(path), "--vector-of", "r00042", "--scope", "rare",
                "--scope-strategy", "column", "--scope-column", "agentId",
                "--filter", "pushdown", "--grid-nprobes", "1,64", "--grid-overfetch", "1,4",
                "--json")
    assert doc["nprobes"] == [1, 64] and doc["overfetch"] == [1.0, 4.0]
    assert doc["truth"] == "exact (flat) search" and doc["queries"] == 1
    assert (doc["question"]["vector_of"], doc["question"]["params"]["filter"]) == \
        ("r00042", "pushdown")  # the question it swept around (issue 18)
    assert all(0 <= v <= 1 for row in doc["recall"] for v in row if v is not None)
    one, every = doc["recall"]
    table = lancedb.connect(str(path)).open_table("memories")
    q = indexkit.data()[1][42]
    for row, n in ((one, 1), (every, 64)):
        assert row == pytest.approx([indexkit.bare_recall(table, q, n, indexkit.RARE, depth=d)
                                     for d in (10, 40)])
    assert every[0] > one[0], "probing all 64 partitions finds more of the rare agent's rows"
    assert main(["sweep", str(path), "--vector-of", "r00042", "--grid-nprobes", "5,20",
                 "--grid-overfetch", "1,2"]) == 0
    assert "nprobes" in capsys.readouterr().out
    assert main(["sweep", str(path), "--vector-of", "r00042", "--grid-nprobes",
                 "5,5000000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nprobes 5,000,000 is above" in err
    assert snapshot(path) == before
