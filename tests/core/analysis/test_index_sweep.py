"""The nprobes axis of a sweep on a real IVF_PQ table: recall measured against numpy's exact
ranking, cell by cell equal to LanceDB searched with that nprobes."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.analysis.index_sweep import nprobes_sweep, parse_nprobes
from inspector.core.analysis.sweep import Case, Grid
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Query
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


def test_recall_per_nprobes_equals_lancedb_against_numpy(store):
    qs = QS
    cases = [Case(f"q{i}", Query(vector=q, source="vector")) for i, q in enumerate(qs)]
    base = Params(limit=10, cap=0, scope="main", scope_strategy="column",
                  scope_column="agentId", filter="pushdown")
    got = nprobes_sweep(store, cases, base, Grid(overfetch=(1.0, 3.0)), (1, 4, 64))
    for a, n in enumerate((1, 4, 64)):
        assert got.recall[a, 0] == pytest.approx(_bare(store.table, n, 10))
        assert got.recall[a, 1] == pytest.approx(_bare(store.table, n, 30))  # over-fetch 3
    assert got.recall[0, 0] < got.recall[2, 0]  # between clusters one partition is not enough
    assert got.to_json()["truth"] == "exact (flat) search"


def test_nprobes_axis_rejects_bad_values_and_flat_tables(store, tmp_path):
    with pytest.raises(InspectorError):
        parse_nprobes("0,x")
    assert parse_nprobes("5, 10") == (5, 10)
    flat = store.reopen()
    object.__setattr__(flat, "vector_index", None)  # a cached property: a flat table's value
    with pytest.raises(InspectorError, match="no vector index"):
        nprobes_sweep(flat, [], Params(), Grid(), (5,))
