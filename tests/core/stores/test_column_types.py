"""Every column type is handled or refused by name, and a pinned version removed by a cleanup
is one clear sentence (issue 12, cases 5 and 6)."""

from __future__ import annotations

import datetime
import warnings
from decimal import Decimal

import lancedb
import pyarrow as pa
import pytest

from inspector.core.engine.flow.answer import to_json
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store
from inspector.core.stores.store import VersionGoneError
from tests.askkit import ask, final_ids
from tests.storekit import versioned_store

ORIGIN = [1.0, 0.0, 0.0, 0.0]


def _make(path, vector: pa.Array, **extra: pa.Array):
    n = len(vector)
    lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": [f"r{i}" for i in range(n)], "text": [f"keys {i}" for i in range(n)],
        "vector": vector, **extra}), on_bad_vectors="null")
    return open_store(str(path))


@pytest.mark.parametrize("dtype", [pa.float16(), pa.float32(), pa.float64()])
def test_float16_32_64_vectors_rank_the_same(tmp_path, dtype):
    rows = [[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0, 1, 0, 0]]
    store = _make(tmp_path / "s", pa.array(rows, pa.list_(dtype, 4)))
    assert final_ids(store, vector=ORIGIN, limit=3) == ["r0", "r1", "r2"]


def test_null_vectors_get_no_vector_hit(tmp_path):
    store = _make(tmp_path / "s", pa.array([[1, 0, 0, 0], None, [0, 1, 0, 0]],
                                           pa.list_(pa.float32(), 4)))
    assert final_ids(store, vector=ORIGIN, limit=3) == ["r0", "r2"]
    with pytest.raises(InspectorError, match="NULL"):
        store.vector_of("r1")


def test_a_variable_length_vector_column_is_refused_by_name(tmp_path):
    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
                        pa.field("emb", pa.list_(pa.float32()))])
    tbl = lancedb.connect(str(tmp_path / "s")).create_table("memories", schema=schema)
    tbl.add(pa.table({"id": ["a"], "text": ["x"], "emb": [[1.0, 2.0]]}, schema=schema))
    with pytest.raises(InspectorError, match="Column 'emb' is a variable-length list"):
        open_store(str(tmp_path / "s"))


@pytest.mark.parametrize("values,want", [
    (pa.array([1, 0], pa.int16()), [1.0, 0.5]),
    (pa.array([Decimal("0.5"), Decimal("1")], pa.decimal128(3, 1)), [0.75, 1.0]),
])
def test_integer_and_decimal_importance_are_numbers(tmp_path, values, want):
    store = _make(tmp_path / "s", pa.array([[1, 0, 0, 0], [0.9, 0.1, 0, 0]],
                                           pa.list_(pa.float32(), 4)), importance=values)
    a = ask(store, vector=ORIGIN, limit=2, blend=0.5, min_score=0)
    mult = {s.id: dict(s.inputs)["multiplier"] for s in a.trace.stage("blend").rows}
    assert [float(mult[r]) for r in ("r0", "r1")] == want
    assert not a.trace.warnings
    json_doc = to_json(a)
    assert {c["id"] for c in json_doc["stages"][-1]["candidates"]} == {"r0", "r1"}


def test_an_importance_column_of_text_is_ignored_with_a_warning(tmp_path):
    store = _make(tmp_path / "s", pa.array([[1, 0, 0, 0]], pa.list_(pa.float32(), 4)),
                  importance=pa.array(["0.9"]))
    assert store.roles.importance is None
    t = ask(store, vector=ORIGIN, limit=1, blend=0.5).trace
    assert any("column 'importance' (string)" in w and "ignored" in w for w in t.warnings)


def test_a_pinned_version_removed_by_cleanup_is_one_clear_sentence(tmp_path):
    path = versioned_store(tmp_path / "v")
    store = open_store(str(path), version=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lancedb.connect(str(path)).open_table("memories").optimize(
            cleanup_older_than=datetime.timedelta(0), delete_unverified=True)
    for mode in ("vector", "fts"):
        with pytest.raises(VersionGoneError) as got:
            ask(store, text="memory", vector=ORIGIN, mode=mode, limit=3)
        assert got.value.version == 1 and got.value.latest == store.latest_version()
        assert "removed by a cleanup" in str(got.value) and "lance error" not in str(got.value)
    with pytest.raises(VersionGoneError):
        store.vector_of("m1")
    assert final_ids(store.reopen(), vector=ORIGIN, limit=2)
