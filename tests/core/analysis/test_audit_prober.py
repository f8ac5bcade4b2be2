"""One prober for every pipeline: where the outrank shortcut and the batched scan serve a probe
is read from the pipeline's stages (a pipeline file of the classic stages under other names
takes them; one stage more is refused by name, and the probes still take scanned legs); the
fixes of never-recalled memories come from one deep scan and equal the ones their own searches
give; `fixes` bounds them; on an IVF_PQ table a probe the index loses is `lost_to_index`, for a
real system's vector leg and a classic one, as `inspector query --vector-of ID` says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.analysis.audit import Prober, runs
from inspector.core.engine.flow.spec import load_file
from inspector.core.stores.opening import open_store
from tests.clikit import cli_json
from tests.storekit import vectors_column

NOW = 1.79e12
DIM = 24  # a dimension the scan reproduces LanceDB in
VERDICTS = ("counts", "by_scope", "never_recallable", "found")

PIPELINE = """schema = 1
name = "renamed-classic"
title = "The classic stages under names of their own"

[limit]
default = 10
min = 1
max = 1000

[settings]
tie_rule = "lancedb"

[[routes]]
name = "vector"

[[routes.stages]]
name = "rule"
kind = "scope_rule"
strategy = "column"
column = "agentId"

[[routes.stages]]
name = "leg"
kind = "lancedb_pool"
mode = "vector"
overfetch = 3.0

[[routes.stages]]
name = "in_scope"
kind = "scope_filter"

[[routes.stages]]
name = "weigh"
kind = "importance_blend"
weight = 0.5

[[routes.stages]]
name = "floor"
kind = "min_score"
min = 0.5
{extra}
[[routes.stages]]
name = "top"
kind = "limit"
"""
WINDOW = """
[[routes.stages]]
name = "win"
kind = "window"
per_limit = 100.0
"""


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 random rows, a crowd of 15 copies (the least important past the limit) and four
    exact twins: most probes are found alone, some are crowded out."""
    rng = np.random.default_rng(11)
    n = 300
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    imp = rng.uniform(0, 1, n)
    v[1:15] = v[0]
    imp[0:15] = [0.05, 0.1] + [0.8] * 13
    v[20:24] = v[19]
    path = tmp_path_factory.mktemp("prober") / "db"
    import lancedb

    lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": [f"p{i:03d}" for i in range(n)], "text": [f"memory {i}" for i in range(n)],
        "importance": imp, "agentId": [f"agent-{i % 2}" for i in range(n)],
        "vector": vectors_column(v)}))
    return path


def _spec(tmp_path: Path, extra: str = "", sets: dict[str, Any] | None = None) -> Any:
    from inspector.core.engine.flow.spec import apply_set

    f = tmp_path / f"pipeline{len(list(tmp_path.glob('*.toml')))}.toml"
    f.write_text(PIPELINE.format(extra=extra))
    return apply_set(load_file(str(f)), sets or {})


def _audit(store: Any, spec: Any, scan: bool, **kw: Any) -> dict[str, Any]:
    return runs.recall_audit(Prober(store, spec, 10, NOW, scan=scan), own_scope=False, **kw)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_the_stages_not_the_name_decide_the_shortcut(store_path: Path, tmp_path: Path) -> None:
    store = open_store(str(store_path), "memories")
    spec = _spec(tmp_path)
    fast, slow = _audit(store, spec, True), _audit(store, spec, False)
    for key in VERDICTS:
        assert _same(fast[key], slow[key]), key
    how = fast["scan"]
    assert how["shortcut"] > 250 and how["scanned"] + how["shortcut"] == 300
    assert fast["counts"]["crowded_out"] + fast["counts"]["shadowed"] > 0


@pytest.mark.parametrize(("extra", "sets", "why"), [
    (WINDOW, {}, "stage win (window) is not one the outrank proof covers"),
    ("", {"floor.drop_expired": True}, "its min score also drops expired rows"),
])
def test_a_stage_the_proof_does_not_cover_is_named_and_its_probes_scanned(
        store_path: Path, tmp_path: Path, extra: str, sets: dict[str, Any], why: str) -> None:
    store = open_store(str(store_path), "memories")
    spec = _spec(tmp_path, extra, sets)
    fast, slow = _audit(store, spec, True), _audit(store, spec, False)
    for key in VERDICTS:
        assert _same(fast[key], slow[key]), key
    how = fast["scan"]
    assert how["shortcut"] == 0 and how["scanned"] == 300 and how["batched"]
    [(reason, n)] = how["shortcut_refused"].items()
    assert reason.startswith(why) and n == 300


def test_fixes_read_one_deep_scanned_pool_and_equal_their_own_searches(
        store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each fix searched its changes over one pool from one deep scan: the vector searches
    left are the runs that change the pool's placement (the pushdown flag), at most one a
    probe; with the scan off every depth the search tries is a LanceDB search."""
    from inspector.core.engine import pool, pools

    store = open_store(str(store_path), "memories")
    spec = _spec(tmp_path)
    searched = []
    real = pool._vector_leg

    def counted(*a: Any, **k: Any) -> Any:
        searched.append(a[2])
        return real(*a, **k)

    monkeypatch.setattr(pool, "_vector_leg", counted)
    pools.SOURCE.clear()
    fast = _audit(store, spec, True, fixes=3)
    fast_searches, searched[:] = len(searched), []
    pools.SOURCE.clear()
    slow = _audit(store, spec, False, fixes=3)
    with_fix = [r for r in fast["never_recallable"] if "fix" in r["detail"]]
    assert fast["fixes"] == len(with_fix) == 3 < len(fast["never_recallable"])
    assert all(r["detail"]["fix"]["fix"] is not None for r in with_fix)
    assert fast["never_recallable"] == slow["never_recallable"]  # fixes included
    assert fast_searches <= 3 < len(searched) - 300  # past the probes' own 300 searches


def test_no_fixes_when_asked_for_none(store_path: Path, tmp_path: Path) -> None:
    store = open_store(str(store_path), "memories")
    res = _audit(store, _spec(tmp_path), True, fixes=0)
    assert res["fixes"] == 0 and res["never_recallable"]
    assert not any("fix" in r["detail"] for r in res["never_recallable"])


@pytest.fixture(scope="module")
def ivf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """LlamaIndex's table shape, 3,000 rows in 300 tight clusters of ten, IVF_PQ with four
    sub-vectors: the index cannot tell a cluster's rows apart, so it loses many probes' own
    rows."""
    import lancedb
    from lancedb.index import IvfPq

    rng = np.random.default_rng(7)
    n = 3000
    centres = rng.normal(size=(300, 32))
    vecs = (centres[np.arange(n) // 10] + 0.05 * rng.normal(size=(n, 32))).astype(np.float32)
    path = tmp_path_factory.mktemp("ivf") / "store"
    tbl = lancedb.connect(str(path)).create_table("vectors", pa.table({
        "id": [f"n{i:05d}" for i in range(n)], "doc_id": [f"d{i // 3}" for i in range(n)],
        "vector": vectors_column(vecs), "text": [f"node {i}" for i in range(n)],
        "metadata": pa.array([{"user_id": f"u{i % 4}"} for i in range(n)])}))
    tbl.create_index("vector", config=IvfPq(distance_type="l2", num_partitions=16,
                                            num_sub_vectors=4))
    return path


@pytest.mark.parametrize("preset", ["llamaindex-lancedb", "importance-blend"])
def test_a_probe_the_index_loses_is_lost_to_index_as_a_query_says(
        ivf: Path, preset: str, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--table", "vectors", "--preset", preset, "--limit", "1"]
    res = cli_json(capsys, "audit", "recall", str(ivf), *common, "--sample", "40",
                   "--fixes", "0", "--json")
    lost = [r for r in res["never_recallable"] if r["class"] == "lost_to_index"]
    assert len(lost) > 5 and not res["scan"]["batched"] and "vector index" in res["method"]
    for r in lost[:4] + res["found"][:2]:
        out = cli_json(capsys, "query", str(ivf), *common, "--vector-of", r["id"], "--text",
                       f"node {int(r['id'][1:])}", "--json")
        ids = [c["id"] for c in out["stages"][-1]["candidates"]]
        if r["class"] == "found":
            assert ids.index(r["id"]) + 1 == r["rank"]
            continue
        assert r["id"] not in ids and r["id"] in out["index_facet"]["lost_final"]
        assert r["code"] == "lost_to_index" and r["detail"]["index"] == "IVF_PQ"
    off = cli_json(capsys, "audit", "recall", str(ivf), *common, "--sample", "40",
                   "--fixes", "0", "--index-facet", "off", "--json")
    assert off["counts"]["lost_to_index"] == 0
    assert off["scan"]["index_unchecked"] == len(off["never_recallable"]) > 0
    assert "not compared with an exact search" in off["method"]
