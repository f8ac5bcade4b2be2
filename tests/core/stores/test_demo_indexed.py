"""The demo's indexed table: real IVF_PQ training and a story that holds. (How long it takes
to build is a benchmark's figure: the cold start's first launch, bench/startup.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.engine.ann import facet as index_facet
from inspector.core.engine.expect import analyse
from inspector.core.engine.inputs import build_params, build_query
from inspector.core.engine.pipeline import run
from inspector.core.stores.ann import demo as demo_indexed
from inspector.core.stores.opening import open_store
from inspector.core.stores.store import META_KEY


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    path = tmp_path_factory.mktemp("demo_indexed")
    return path, demo_indexed.build_indexed(path, META_KEY)


def test_builds_a_trained_ivf_pq_table(built):
    path, _ = built
    store = open_store(str(path), demo_indexed.TABLE)
    assert store.rows >= 5000 and store.vector_index.type == "IVF_PQ"
    assert store.vector_index.indexed_rows == store.rows and store.embedder["name"] == "hash-v1"


def test_the_suggested_story_is_an_in_scope_memory_lost_to_the_index_with_its_fix(built):
    path, stories = built
    assert len(stories) == 1
    s = stories[0]
    assert s["table"] == demo_indexed.TABLE and s["expect"]
    store = open_store(str(path), s["table"])
    p = build_params(preset=s["preset"], limit=s["limit"], scope=s["scope"],
                     min_score=s["min_score"])
    query = build_query(store, p.mode, text=s["text"])
    trace = index_facet.attach(store, query, run(store, query, p))
    rid = s["expect"][0]
    assert rid not in trace.ids("final") and rid in trace.index_facet.lost_final
    assert trace.diagnosis.code == "index_recall"
    (e,) = analyse(store, query, trace, [rid])
    # the true rank, from numpy over the agent's rows (ties by row order, as LanceDB's)
    tbl = store.table.to_arrow()
    vecs = np.stack(tbl.column("vector").to_numpy(zero_copy_only=False))
    mine = np.flatnonzero(np.asarray(tbl.column("agentId").to_pylist()) == "main")
    d = ((vecs[mine].astype(np.float64) - query.vector) ** 2).sum(axis=1)
    order = mine[np.lexsort((mine, d))]
    ids = [tbl.column("id")[int(i)].as_py() for i in order]
    assert e.dropped_at == "index"
    # LanceDB ranks by float32 distances: allow only a reordering among near-equal distances
    true = ids.index(rid)
    ranked = np.sort(d)
    assert np.isclose(ranked[e.exhaustive_rank - 1], ranked[true], rtol=1e-5), \
        (e.exhaustive_rank, true + 1)

    def works(fix: str) -> bool:
        knob, value = fix.split()[:2]
        return rid in run(store, query, p.with_(**{knob[2:].replace("-", "_"): int(value)})
                          ).ids("final")

    for fix in (e.index_fix, s["story"].rsplit("): ", 1)[-1]):  # ours, and the story's own
        if "only --exact" not in fix:
            assert works(fix.split(" brings")[0].strip()), fix
    assert rid in run(store, query, p.with_(exact=True)).ids("final")
