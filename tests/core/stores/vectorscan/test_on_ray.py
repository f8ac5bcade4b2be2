"""The batched scan split by fragment over a local Ray cluster with two workers gives the
single-machine result exactly (skipped when Ray, the optional extra `scale`, is absent)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.pools import batched
from inspector.core.stores.opening import open_store
from inspector.core.stores.vectorscan import scan as S
from inspector.core.stores.vectorscan.on_ray import row_ranges
from tests.storekit import vectors_column

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _store(path: Path, dim: int = 32) -> Path:
    rng = np.random.default_rng(9)
    tbl = None
    for f, n in enumerate((300, 150, 250, 200)):  # four fragments
        vecs = rng.normal(size=(n, dim)).astype(np.float32)
        vecs[::9] = 0.5  # ties across fragments
        data = pa.table({"id": [f"f{f}-{i}" for i in range(n)],
                         "text": [f"note {i} keys" for i in range(n)],
                         "repo": [f"repo{i % 4}" for i in range(n)],
                         "path": [f"repo{i % 4}/d/{i}.md" for i in range(n)],
                         "importance": rng.uniform(0, 1, n), "vector": vectors_column(vecs)})
        if tbl is None:
            tbl = lancedb.connect(str(path)).create_table("memories", data)
        else:
            tbl.add(data)
    assert tbl is not None
    tbl.delete("id IN ('f0-3', 'f2-17', 'f3-0')")
    return path


def test_row_ranges_follow_fragments_when_there_are_enough() -> None:
    ids = np.array([0, 1, 2, 1 << 32, (1 << 32) + 5, 2 << 32, 3 << 32, (3 << 32) + 1])
    assert row_ranges(ids, 2) == [(0, (1 << 32) + 5), (2 << 32, (3 << 32) + 1)]
    assert row_ranges(np.arange(10), 3) == [(0, 2), (3, 5), (6, 9)]


def test_ray_scan_equals_the_single_machine_scan(tmp_path: Path, local_ray: Any) -> None:
    store = open_store(str(_store(tmp_path / "db")))
    q = np.random.default_rng(1).normal(size=(5, 32)).astype(np.float32)
    req = S.ScanRequest(q, 120, "l2", rows=store.rows)
    here = batched.run_scan(store, req)
    there = batched.run_scan(store, req, batched.ScanPlan(mode="ray"))
    for i in range(5):
        assert np.array_equal(here.rowids[i], there.rowids[i])
        assert np.array_equal(here.distances[i], there.distances[i])
    assert np.array_equal(here.available, there.available)
