"""The index facet of any pipeline: on an IVF_PQ table a pipeline preset reports the exact
final list a flat LanceDB search gives, the rows the index lost, and fixes among the system's
own index knobs that were run (LlamaIndex's nprobes and refine_factor are its constructor's,
settable with --set, --nprobes and --refine-factor); a knob that changes nothing is never
offered."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

DIM = 32


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, np.ndarray]:
    """LlamaIndex's table shape (id, doc_id, vector, text, metadata struct), 3,000 rows in
    clusters, with an IVF_PQ index of 16 partitions."""
    import lancedb
    from lancedb.index import IvfPq

    from inspector.core.stores.opening import open_store
    from tests.storekit import vectors_column

    rng = np.random.default_rng(7)
    n = 3000
    centres = rng.normal(size=(16, DIM))
    vecs = (centres[rng.integers(16, size=n)] + 0.6 * rng.normal(size=(n, DIM))).astype(
        np.float32)
    meta = pa.array([{"user_id": f"u{i % 4}", "year": 2020 + i % 6} for i in range(n)])
    table = pa.table({"id": [f"n{i:05d}" for i in range(n)],
                      "doc_id": [f"d{i // 3}" for i in range(n)],
                      "vector": vectors_column(vecs), "text": [f"node {i}" for i in range(n)],
                      "metadata": meta})
    path = tmp_path_factory.mktemp("ivf") / "store"
    tbl = lancedb.connect(str(path)).create_table("vectors", table)
    tbl.create_index("vector", config=IvfPq(distance_type="l2", num_partitions=16,
                                            num_sub_vectors=4))
    return open_store(str(path), "vectors"), vecs


def _flat(store: Any, vec: np.ndarray, k: int, where: str | None = None) -> list[str]:
    q = store.table.search(vec, vector_column_name="vector").bypass_vector_index().limit(k)
    if where:
        q = q.where(where, prefilter=True)
    got = q.with_row_id(True).to_arrow()
    order = np.lexsort((got.column("_rowid").to_numpy(), got.column("_distance").to_numpy()))
    return [got.column("id")[int(i)].as_py() for i in order]


def test_a_pipeline_preset_reports_the_exact_final_list_beside_the_indexed_one(
        indexed: tuple[Any, np.ndarray]) -> None:
    from inspector.core.engine.flow.question import Question, answer

    store, vecs = indexed
    lost_somewhere = 0
    for row in (3, 333, 1200, 2500):
        q = Question(store=store.uri, preset="llamaindex-lancedb", vector=vecs[row].tolist(),
                     limit=10, set={"where": "metadata.user_id = 'u1'"})
        got = answer(q, store)
        fc = got.facet
        assert fc is not None and fc.index_type == "IVF_PQ"
        assert list(fc.exact_final) == _flat(store, vecs[row], 10, "metadata.user_id = 'u1'")
        assert [leg.stage for leg in fc.legs] == ["fetch"]
        assert set(fc.lost_final) == set(fc.exact_final) - set(got.trace.final.ids)
        lost_somewhere += bool(fc.lost_final)
        if fc.lost_final:
            d = got.diagnosis
            assert d.code == "lost_to_index"
            for f in d.fixes:  # every knob offered returns the exact search's rows
                assert f.full or f.returns == len(fc.exact_final)
                assert f.to_json()["argv"][:1] in (["--set"], ["--exact"])
            own = [f for f in d.fixes if f.kind == "own"]
            assert all("refine_factor" in f.label or "nprobes" in f.label for f in own)
            assert d.fixes[-1].to_json()["argv"] == ["--exact"]
    assert lost_somewhere  # the index does lose rows on this table


def test_llamaindex_index_knobs_are_its_constructor_arguments(
        indexed: tuple[Any, np.ndarray], capsys: pytest.CaptureFixture[str]) -> None:
    """--nprobes and --refine-factor reach LlamaIndex's fetch (LanceDBVectorStore(nprobes=,
    refine_factor=)); with every partition probed and refined, the indexed answer is the
    exact one."""
    from inspector.cli.main import main

    store, vecs = indexed
    base = ["query", store.uri, "--table", "vectors", "--preset", "llamaindex-lancedb",
            "--vector", json.dumps(vecs[333].tolist()), "--limit", "10", "--json"]
    capsys.readouterr()
    assert main([*base, "--nprobes", "16", "--refine-factor", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["params"]["stages"]["fetch"]["nprobes"] == 16
    assert out["params"]["stages"]["fetch"]["refine_factor"] == 50
    ids = [c["id"] for c in out["stages"][-1]["candidates"]]
    assert ids == _flat(store, vecs[333], 10)
    assert out["index_facet"]["lost_final"] == []
    assert main([*base, "--set", "fetch.refine_factor=50", "--set", "fetch.nprobes=16"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in again["stages"][-1]["candidates"]] == ids


def test_a_knob_that_changes_nothing_is_not_offered(indexed: tuple[Any, np.ndarray]) -> None:
    """nprobes past the index's partitions searches nothing more: the search stops raising
    it (no fix says "raise nprobes" that was not run and shown to work)."""
    from inspector.core.engine.flow.question import Question, answer

    store, vecs = indexed
    for row in range(0, 3000, 150):
        q = Question(store=store.uri, preset="importance-blend", vector=vecs[row].tolist(),
                     limit=10, set={"scope_rule.strategy": "none", "min_score.min": 0.0})
        got = answer(q, store)
        if got.diagnosis.code != "lost_to_index":
            continue
        for f in got.diagnosis.fixes:
            again = answer(q.model_copy(update={"set": {**q.set, **dict(f.change.sets)},
                                                "exact": f.change.exact}), store)
            assert again.trace.final.ids == list(got.facet.exact_final), f.label
        return
    pytest.fail("no query on this table lost a row to the index")


def test_the_facet_is_off_on_large_tables_unless_asked(indexed: tuple[Any, np.ndarray],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.core.engine.flow.insight import facet
    from inspector.core.engine.flow.question import Question, answer

    store, vecs = indexed
    monkeypatch.setattr(facet, "AUTO_MAX_ROWS", 100)
    q = Question(store=store.uri, preset="llamaindex-lancedb", vector=vecs[5].tolist())
    got = answer(q, store)
    assert got.facet is None
    assert any("not compared with an exact search" in w for w in got.trace.warnings)
    assert answer(q, store, facet_mode="on").facet is not None
    assert not math.isnan(len(got.trace.final.ids))


def test_the_facet_compares_nothing_on_a_flat_table(tmp_path: Path) -> None:
    from inspector.core.engine.flow.question import Question, answer
    from inspector.core.stores.opening import open_store
    from tests.storekit import write_mixed_store

    store = open_store(str(write_mixed_store(tmp_path / "s", 60)), None)
    got = answer(Question(store=store.uri, preset="importance-blend", vector_of="m0003"),
                 store)
    assert got.facet is None
    assert not any("exact search" in w for w in got.trace.warnings)


def test_a_row_no_knob_brings_back_still_has_the_exact_search_as_its_fix(
        indexed: tuple[Any, np.ndarray], monkeypatch: pytest.MonkeyPatch) -> None:
    """An expected row the index lost, where no parameter of the system's returns it (here:
    the knob search finds nothing), gets the what-if exact search as its fix, run: the demo
    store's indexed story is such a row on some trainings of its index, and the engine said
    "no fix" there while `--exact` returned it."""
    from inspector.core.engine.flow.insight import expect
    from tests.askkit import ask, final_ids

    store, vecs = indexed
    for row in (3, 333, 1200, 2500):
        given = {"preset": "llamaindex-lancedb", "vector": vecs[row].tolist(), "limit": 10,
                 "sets": {"where": "metadata.user_id = 'u1'"}}
        lost = ask(store, **given, facet="on").facet.lost_final
        if not lost:
            continue
        monkeypatch.setattr(expect, "candidates", lambda *_a, **_k: [])
        monkeypatch.setattr(expect, "_limit_fix", lambda *_a, **_k: None)
        (e,) = ask(store, **given, expect=[lost[0]], fixes=True).expected
        fix = e["fix"]
        assert fix is not None and fix["kind"] == "what_if" and fix["argv"] == ["--exact"]
        assert lost[0] in final_ids(store, **given, exact=True)
        assert fix["rank"] == final_ids(store, **given, exact=True).index(lost[0]) + 1
        return
    pytest.fail("no query on this table lost a row to the index")
