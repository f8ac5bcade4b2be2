"""The index sweep over any pipeline on an ANN-indexed table: the index knobs the pipeline's
vector legs pass (nprobes, refine factor; ef on HNSW) are its default axes, each cell is its
own search, and its scoped recall is measured against the exact search (numpy's, here)."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.analysis import grid as G
from inspector.core.analysis.index_sweep import index_axes, run_index_sweep
from inspector.core.analysis.sweep import Case
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store
from tests import indexkit

# query points between clusters: the nearest "main" rows lie in more than one partition
QS = np.random.default_rng(5).standard_normal((4, indexkit.DIM)).astype(np.float32) * 3


def _bare(table, n: int, depth: int) -> float:
    """LanceDB's own mean recall at 10 over QS when asked for `depth` rows with nprobes n. An
    IVF_PQ search to depth 30 is not always a prefix-extension of one to depth 10 (PQ distances
    tie at the cut), so each column is compared with the search at its own depth."""
    return float(np.mean([indexkit.bare_recall(table, q, n, "main", depth=depth) for q in QS]))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    path = indexkit.build(tmp_path_factory.mktemp("sweep") / "ivf", "IVF_PQ",
                          accept=lambda t: _bare(t, 1, 10) < _bare(t, 64, 10))
    return open_store(str(path))


def _question(store, preset: str = "lancedb") -> Question:
    return Question(store=store.uri, preset=preset, limit=10, vector=[0.0] * indexkit.DIM,
                    scopes=["main"], set={"fetch.cap": 0, "scope_rule.strategy": "column",
                                          "scope_rule.column": "agentId",
                                          "scope_rule.pushdown": True})


def test_scoped_recall_per_nprobes_equals_lancedb_against_numpy(store) -> None:
    q = _question(store)
    cases = [Case(f"q{i}", q.model_copy(update={"vector": [float(x) for x in v]}))
             for i, v in enumerate(QS)]
    axes = G.parse_grid(resolve(q)[0], ["fetch.nprobes=1,4,64", "fetch.overfetch=1,3"])
    got = run_index_sweep(store, q, cases, axes)
    recall = got.aggregate["scoped_recall"].reshape(3, 2)
    for a, n in enumerate((1, 4, 64)):
        assert recall[a, 0] == pytest.approx(_bare(store.table, n, 10))
        assert recall[a, 1] == pytest.approx(_bare(store.table, n, 30))  # over-fetch 3
    assert recall[0, 0] < recall[2, 0]  # between clusters one partition is not enough
    index = got.aggregate["index_recall"].reshape(3, 2)
    assert index[0, 0] < index[2, 0] <= 1.0


def test_the_index_knobs_are_the_default_axes(store) -> None:
    spec = resolve(_question(store))[0]
    axes = index_axes(spec, store.vector_index)
    assert [a.key for a in axes] == ["fetch.nprobes", "fetch.refine_factor"]
    assert all(a.effect == "index" and 0 in a.values and 20 in a.values for a in axes)
    hnsw = type("Index", (), {"type": "IVF_HNSW_SQ"})()
    assert [a.key for a in index_axes(spec, hnsw)] == ["fetch.ef", "fetch.refine_factor"]
    llama = resolve(Question(store="-", preset="llamaindex-lancedb"))[0]
    assert [a.key.split(".")[1] for a in index_axes(llama, store.vector_index)] == \
        ["nprobes", "refine_factor"]


def test_a_flat_table_and_a_pipeline_without_knobs_are_refused(store) -> None:
    spec = resolve(_question(store))[0]
    with pytest.raises(InspectorError, match="no vector index"):
        index_axes(spec, None)
    docs = resolve(Question(store="-", preset="openclaw-mem-before-fix"))[0]
    with pytest.raises(InspectorError, match="passes no index knob"):
        index_axes(docs, store.vector_index)
