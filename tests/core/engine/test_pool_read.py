"""Issue 34 (sweeps): a batched scan's leg is positions into the rows its pass read
(`pool.ReadLeg`), and each query's pool takes its rows from them as a table of its own whose
columns become Python values only when read (`pool.TakenColumns`). Such a pool must be the
pool the leg's table makes, field for field, whatever the table holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine import pool as P
from inspector.core.engine import scope as scopes
from inspector.core.engine.flow.stages import classic
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Query, ReadLeg, TakenColumns, fetch_pool
from inspector.core.engine.pools import batched
from inspector.core.stores.opening import open_store
from tests.storekit import snapshot, write_table

N = 120
FIELDS = ("ids", "id_order", "importance", "importance_missing", "in_scope", "scope_rule",
          "scope_value", "pushdown_match", "vec_rank", "vec_dist", "fts_rank", "fts_score",
          "rowids", "warnings", "pushdown_sql", "pushdown_note", "mode", "placement")


def _importance(kind: str, rng: np.random.Generator) -> pa.Array:
    if kind == "float":  # missing, NaN, outside 0..1
        vals = [None if i % 7 == 0 else float("nan") if i % 11 == 0 else
                float(rng.uniform(-0.5, 1.5)) for i in range(N)]
        return pa.array(vals, pa.float64())
    if kind == "text":  # numbers as text, and text that is none
        vals = [None if i % 9 == 0 else "high" if i % 5 == 0 else f"{rng.uniform(0, 1):.3f}"
                for i in range(N)]
        return pa.array(vals, pa.string())
    return pa.array([int(rng.integers(0, 3)) for _ in range(N)], pa.int64())


def _ids(kind: str, rng: np.random.Generator) -> list[Any]:
    if kind == "int":
        return [int(x) for x in rng.permutation(10 ** 6)[:N]]
    stems = ["a", "B", "ä", "a\x00", "Zz", "é", "10", "9", "", "a b"]
    ids = [f"{stems[i % len(stems)]}{i // 3}" for i in range(N)]
    if kind == "repeated":  # the same id on several rows: pools merge them their own way
        ids[5] = ids[40] = ids[77]
    return ids


@pytest.fixture(params=[("text", "float"), ("int", "text"), ("repeated", "int"),
                        ("text", "absent")], ids=lambda p: "-".join(p))
def store(request, tmp_path: Path):
    id_kind, imp_kind = request.param
    rng = np.random.default_rng(len(id_kind) * 7 + len(imp_kind))
    cols: dict[str, Any] = {
        "id": _ids(id_kind, rng), "text": [f"row {i}" for i in range(N)],
        "vector": rng.normal(size=(N, 24)).astype(np.float32),
        "repo": [None if i % 13 == 0 else f"r{int(rng.integers(4))}" for i in range(N)],
        "path": [f"r{i % 4}/docs/{i}.md" for i in range(N)],
    }
    if imp_kind != "absent":
        cols["importance"] = _importance(imp_kind, rng)
    path = write_table(tmp_path / "s", cols)
    before = snapshot(path)
    yield open_store(str(path))
    assert snapshot(path) == before  # read-only


def _legs(store: Any, rng: np.random.Generator) -> tuple[pa.Table, list[ReadLeg]]:
    """Rows a pass reads (a random subset, as `batched._take` reads them) and legs into them
    in random orders, their distances with ties."""
    rowids = store.table.search().with_row_id(True).select(["id"]).limit(None).to_arrow()
    every = np.sort(rowids.column("_rowid").to_numpy(zero_copy_only=False))
    wanted = np.sort(rng.choice(every, N - 20, replace=False)).astype(np.uint64)
    cols = P.leg_columns(store, Params(mode="vector", scope_strategy="column",
                                       scope_column="repo"))
    cols += [c for c in ("text", "path") if c not in cols]
    read = batched._take(store, wanted, cols)
    legs = []
    for size in (0, 1, 2, 37, N - 20):
        at = rng.permutation(N - 20)[:size].astype(np.int64)
        dist = np.round(rng.uniform(0, 4, size), 1).astype(np.float32)
        legs.append(ReadLeg(read, at, np.sort(dist)))
    return read, legs


def _same(got: P.Pool, want: P.Pool) -> None:
    for name in FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            assert a is not None and b is not None, name
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), \
                name
        else:
            assert a == b, name
    assert list(got.columns) == list(want.columns)
    assert {c: repr(list(v)) for c, v in got.columns.items()} == \
        {c: repr(list(v)) for c, v in want.columns.items()}  # repr: NaN equals NaN
    for name in ("rows", "values"):
        assert np.array_equal(getattr(got.vec_leg, name), getattr(want.vec_leg, name))
    assert (got.vec_leg.depth, got.vec_leg.exhausted) == \
        (want.vec_leg.depth, want.vec_leg.exhausted)


@pytest.mark.parametrize("scope", [None, "r1", "nowhere"])
@pytest.mark.parametrize("placement", ["post", "pushdown"])
def test_a_pool_from_rows_read_once_is_the_pool_its_leg_table_makes(store, scope, placement
                                                                      ) -> None:
    rng = np.random.default_rng(3)
    read, legs = _legs(store, rng)
    q = Query(vector=np.zeros(24, np.float32), source="vector")
    p = Params(mode="vector", limit=10, scope=scope, scope_strategy="column",
               scope_column="repo", filter=placement)
    for leg in legs:
        for exhausted, past in ((False, 0.5), (True, float("nan"))):
            got = fetch_pool(store, q, p, vec_k=len(leg.at), fts_k=0,
                             vec_leg=(leg, exhausted, past))
            want = fetch_pool(store, q, p, vec_k=len(leg.at), fts_k=0,
                              vec_leg=(leg.table(), exhausted, past))
            _same(got, want)
            ids = leg.table().column("id").to_pylist()
            assert isinstance(got.columns, TakenColumns) == (len(set(ids)) == len(ids))


def test_taken_columns_are_read_only_where_asked_and_equal_a_whole_read(store) -> None:
    """A pool's columns are made when read, a subset of rows without the whole column
    (the rows a run shows, `classic._read_rows`), and the rows a run reads are the rows the
    leg table's pool reads."""
    rng = np.random.default_rng(5)
    read, legs = _legs(store, rng)
    leg = legs[3]
    q = Query(vector=np.zeros(24, np.float32), source="vector")
    p = Params(mode="vector", limit=10, scope="r2", scope_strategy="column",
               scope_column="repo")
    table = leg.table()
    ids = table.column("id").to_pylist()
    if len(set(ids)) < len(ids):  # repeated ids: the pool merges them from the leg's table
        got = fetch_pool(store, q, p, vec_k=len(leg.at), fts_k=0, vec_leg=(leg, False, 1.0))
        assert type(got.columns) is dict
        return
    cols = [c for c in table.column_names if c not in ("_rowid", "_distance")]
    taken = TakenColumns(table.select(cols))
    todo = [4, 0, 30, 4]
    for c in cols:
        assert taken.rows(c, todo) == [table.column(c)[i].as_py() for i in todo]
    assert not taken._made  # nothing whole made yet
    assert taken["repo"] == table.column("repo").to_pylist()
    assert list(taken._made) == ["repo"]
    assert taken.rows("repo", todo) == [taken["repo"][i] for i in todo]
    assert "repo" in taken and "nope" not in taken and len(taken) == len(cols)
    with pytest.raises(KeyError):
        taken["nope"]
    pools = [fetch_pool(store, q, p, vec_k=len(leg.at), fts_k=0, vec_leg=(x, False, 1.0))
             for x in (leg, table)]
    assert isinstance(pools[0].columns, TakenColumns)
    assert set(pools[0].columns._made) <= {"id", "repo", "importance"}  # what the pool read
    wanted = list(range(0, len(leg.at), 3))
    for pool in pools:
        classic._read_rows(pool, wanted)
    rows = [classic._read(pool)[0] for pool in pools]
    assert repr([rows[0][i] for i in wanted]) == repr([rows[1][i] for i in wanted])


def test_two_legs_merge_as_tables(store) -> None:
    """A read leg beside a full-text leg is merged as its table (the general merge)."""
    rng = np.random.default_rng(9)
    read, legs = _legs(store, rng)
    leg = legs[3]
    fts = legs[2].table().drop_columns(["_distance"]).append_column(
        "_score", pa.array([2.0, 1.0], pa.float32()))
    spec = scopes.ScopeSpec()
    push = scopes.pushdown(spec, store.roles, store.schema)
    cols = P.leg_columns(store, Params(mode="hybrid"))
    q, p = Query(text="row", vector=np.zeros(24, np.float32)), Params(mode="hybrid")
    got = P._merge(store, q, p, spec, push, cols, {"vec": leg, "fts": fts},
                   {"vec": False, "fts": False}, len(leg.at), 2, True)
    want = P._merge(store, q, p, spec, push, cols, {"vec": leg.table(), "fts": fts},
                    {"vec": False, "fts": False}, len(leg.at), 2, True)
    _same(got, want)
    assert not isinstance(got.columns, TakenColumns)
