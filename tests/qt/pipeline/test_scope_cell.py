"""The raw stage's scope cell shows the value a row had instead of the scope as the engine
reports it (`Pool.scope_value`), never a value read back out of the rule's English sentence:
stored case kept, NULL and empty named, and repo names holding the rule's own words intact."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.engine.pool import Query
from inspector.core.evidence.bundle import pool_from_json, pool_to_json
from inspector.core.stores.opening import open_store
from inspector.qt.pipeline.stage_table import StageModel
from tests.storekit import rows_at_distance, write_table

REPOS = ["vault", "Platform-Docs", "a != 'b'", "x not under y", None, ""]


def _trace(tmp_path: Path):
    rows = rows_at_distance([f"m{i}" for i in range(len(REPOS))],
                            [0.1 * (i + 1) for i in range(len(REPOS))])
    rows = rows.append_column("repo", pa.array(REPOS, pa.string()))
    rows = rows.append_column("path", pa.array([f"p{i}/f.md" for i in range(len(REPOS))]))
    store = open_store(str(write_table(tmp_path / "s", rows.to_pydict())))
    p = Params(limit=6, scope="vault", scope_strategy="repo_prefix", filter="post")
    return run(store, Query(vector=[1.0, 0, 0, 0], source="vector"), p)


def test_the_engine_reports_the_value_each_row_had(tmp_path: Path) -> None:
    pool = _trace(tmp_path).pool
    got = dict(zip(pool.ids.tolist(), pool.scope_value, strict=True))
    assert got == {"m0": "", "m1": "Platform-Docs", "m2": "a != 'b'", "m3": "x not under y",
                   "m4": "NULL", "m5": "(empty)"}
    assert pool_from_json(pool_to_json(pool)).scope_value == pool.scope_value


def test_the_scope_cell_is_the_mark_and_that_value(qtbot, tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    model = StageModel("raw")
    model.set_trace(trace, frozenset())
    ids = trace.pool.ids
    cells = {ids[i]: model.scope_text(i) for i in range(trace.pool.size)}
    assert cells == {"m0": "✓ in", "m1": "✗ Platform-Docs", "m2": "✗ a != 'b'",
                     "m3": "✗ x not under y", "m4": "✗ NULL", "m5": "✗ (empty)"}
    # a receipt written before the engine reported the value says only that the row is out
    old = pool_to_json(trace.pool)
    del old["scope_value"]
    assert pool_from_json(old).scope_value == []
