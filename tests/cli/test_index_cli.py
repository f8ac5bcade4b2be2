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
    assert doc["store"]["index"] == "IVF_PQ" and doc["stages"][1]["facts"]["index"] == "IVF_PQ"
    knobs = doc["params"]["stages"]["fetch"]
    assert (knobs["nprobes"], knobs["refine_factor"], knobs["ef"]) == (0, 0, 0)  # LanceDB's
    facet = doc["index_facet"]
    assert facet["index_type"] == "IVF_PQ" and facet["legs"][0]["depth"] == 10
    assert doc["counters"]["lostToIndex"] == facet["lostToIndex"]
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--nprobes", "7",
                "--refine-factor", "3", "--json")
    knobs = doc["params"]["stages"]["fetch"]
    assert (knobs["nprobes"], knobs["refine_factor"]) == (7, 3)
    assert doc["index_facet"]["knobs"]["nprobes"] == 7
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--exact", "--json")
    assert doc["what_if"] == {"widen": {}, "exact": True}
    assert doc["stages"][1]["facts"]["index"] is None and doc["index_facet"] is None
    assert snapshot(path) == before


def test_query_knobs_are_validated(capsys, path):
    assert main(["query", str(path), "--vector-of", "r00042", "--nprobes", "-1"]) == 2
    assert "fetch.nprobes must be a whole number in [0, 1,000,000], not -1" in \
        capsys.readouterr().err


def test_the_index_facet_runs_when_asked_and_says_when_it_did_not(capsys, path, monkeypatch):
    """A large indexed table is answered at LanceDB's own cost: `auto` skips the exact
    comparison past AUTO_MAX_ROWS and says so; `on` runs it anyway; `off` never."""
    from inspector.core.engine.flow.insight import facet

    monkeypatch.setattr(facet, "AUTO_MAX_ROWS", 10)
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--json")
    assert doc["index_facet"] is None and "lostToIndex" not in doc["counters"]
    assert any("not compared with an exact search" in w for w in doc["warnings"])
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--index-facet", "on",
                "--json")
    assert doc["index_facet"]["legs"][0]["depth"] == 10
    monkeypatch.setattr(facet, "AUTO_MAX_ROWS", 10**9)
    doc = _json(capsys, "query", str(path), "--vector-of", "r00042", "--index-facet", "off",
                "--json")
    assert doc["index_facet"] is None
    assert any("--index-facet off" in w for w in doc["warnings"])


def test_sweep_over_nprobes_gives_recall_against_the_exact_search(capsys, path):
    """`sweep --grid-nprobes` (issue 21: it always failed with a TypeError): an axis over the
    fetch stage's nprobes, each cell its own search, scoped recall against the exact search
    (LanceDB's own recall against numpy's exact ranking, here)."""
    before = snapshot(path)
    doc = _json(capsys, "sweep", str(path), "--vector-of", "r00042", "--scope", "rare",
                "--scope-strategy", "column", "--scope-column", "agentId",
                "--filter", "pushdown", "--cap", "0", "--grid-nprobes", "1,64",
                "--grid-overfetch", "1,4", "--json")
    assert [(a["key"], a["values"]) for a in doc["axes"]] == \
        [("fetch.overfetch", [1.0, 4.0]), ("fetch.nprobes", [1, 64])]
    assert len(doc["queries"]) == 1
    q = doc["question"]  # the question it swept around (issue 18)
    assert q["vector_of"] == "r00042" and q["set"]["scope_rule.pushdown"] is True
    recall = {(c["at"]["fetch.nprobes"], c["at"]["fetch.overfetch"]): c["scoped_recall"]
              for c in doc["cells"]}
    table = lancedb.connect(str(path)).open_table("memories")
    v = indexkit.data()[1][42]
    for n in (1, 64):
        for f, d in ((1.0, 10), (4.0, 40)):
            assert recall[(n, f)] == pytest.approx(
                indexkit.bare_recall(table, v, n, indexkit.RARE, depth=d)), (n, f)
    assert recall[(64, 1.0)] > recall[(1, 1.0)], "all 64 partitions find more rare rows"
    assert all(c["index_recall"] is not None for c in doc["cells"])
    assert main(["sweep", str(path), "--vector-of", "r00042", "--grid-index"]) == 0
    out = capsys.readouterr().out
    assert "fetch.nprobes \\ fetch.refine_factor" in out and "recall against the exact" in out
    assert main(["sweep", str(path), "--vector-of", "r00042", "--grid-nprobes",
                 "5,5000000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--grid-nprobes 5,5000000" in err
    assert "fetch.nprobes must be a whole number in [0, 1,000,000]" in err
    assert snapshot(path) == before
