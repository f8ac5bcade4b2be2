"""Opening stores: clear errors for every bad input, role detection, and never a write."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.opening import describe_tables, open_store
from inspector.core.stores.roles import detect_roles


def _basic(n=3, dim=4):
    return {"id": [f"r{i}" for i in range(n)], "text": ["t"] * n,
            "vector": np.ones((n, dim), np.float32)}


def test_missing_path_is_an_error_and_is_not_created(tmp_path):
    target = tmp_path / "no" / "such" / "store"
    with pytest.raises(InspectorError, match="does not exist"):
        open_store(str(target))
    assert not target.exists() and not (tmp_path / "no").exists()


def test_a_file_is_not_a_store(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello")
    with pytest.raises(InspectorError, match="is a file, not a LanceDB store folder"):
        open_store(str(f))


def test_empty_folder_and_non_lance_folder_are_refused_without_listing_them(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InspectorError, match="is an empty folder"):
        open_store(str(empty))
    other = tmp_path / "other"
    other.mkdir()
    (other / "readme.md").write_text("x")
    (other / "data.csv").write_text("x")
    with pytest.raises(InspectorError, match=r"holds no LanceDB tables \(no TABLE.lance") as err:
        open_store(str(other))
    assert "readme" not in str(err.value) and "data.csv" not in str(err.value)


def test_missing_table_names_the_tables_that_exist(make_store):
    path = make_store(_basic(), name="memories")
    with pytest.raises(InspectorError, match=r"Table 'nope' not found .*tables: memories"):
        open_store(str(path), "nope")


def test_roles_are_detected_by_name_and_type(make_store):
    path = make_store({**_basic(), "importance": pa.array([0.1, None, 0.9], pa.float64()),
                       "category": ["fact"] * 3, "createdAt": [1.0, 2.0, 3.0],
                       "agentId": ["a"] * 3, "repo": ["r"] * 3, "path": ["r/x"] * 3})
    store = open_store(str(path))
    assert store.roles.as_dict() == {
        "id": "id", "text": "text", "vector": "vector", "importance": "importance",
        "category": "category", "created": "createdAt", "scope": None, "agent": "agentId",
        "repo": "repo", "path": "path"}
    assert (store.rows, store.dim, store.version) == (3, 4, 1)


def test_role_overrides_are_checked(make_store):
    path = make_store({**_basic(), "weight": [0.5, 0.6, 0.7], "label": ["a", "b", "c"]})
    store = open_store(str(path), roles={"importance": "weight"})
    assert store.roles.importance == "weight"
    with pytest.raises(InspectorError, match="'nope' given for importance is not in the table"):
        open_store(str(path), roles={"importance": "nope"})
    with pytest.raises(InspectorError, match="cannot serve as importance"):
        open_store(str(path), roles={"importance": "label"})
    with pytest.raises(InspectorError, match="Unknown column role"):
        open_store(str(path), roles={"colour": "label"})


def test_no_vector_column_and_two_vector_columns_are_clear_errors(make_store):
    no_vec = make_store({"id": ["a"], "text": ["t"]})
    with pytest.raises(InspectorError, match="has no vector column"):
        open_store(str(no_vec))
    emb = pa.FixedSizeListArray.from_arrays(pa.array([1.0, 2.0], pa.float32()), 2)
    two = pa.table({"id": ["a"], "text": ["t"], "emb_a": emb, "emb_b": emb})
    with pytest.raises(InspectorError, match="2 vector columns"):
        detect_roles(two.schema)
    assert detect_roles(two.schema, {"vector": "emb_b"}).vector == "emb_b"


def test_several_tables_need_a_choice_unless_one_is_memories(make_store, tmp_path):
    import lancedb

    path = make_store(_basic(), name="a")
    lancedb.connect(str(path)).create_table("b", pa.table({"id": ["x"]}))
    with pytest.raises(InspectorError, match=r"several tables \(a, b\)"):
        open_store(str(path))
    assert [t.name for t in describe_tables(str(path))] == ["a", "b"]


def test_query_by_example_reads_the_row_vector(make_store):
    cols = _basic()
    cols["vector"] = np.arange(12, dtype=np.float32).reshape(3, 4)
    store = open_store(str(make_store(cols)))
    assert store.vector_of("r1").tolist() == [4.0, 5.0, 6.0, 7.0]
    with pytest.raises(InspectorError, match="No row with id = 'zz'"):
        store.vector_of("zz")


def test_integer_ids_work_for_query_by_example(make_store):
    store = open_store(str(make_store({"id": pa.array([7, 8], pa.int64()), "text": ["a", "b"],
                                       "vector": np.eye(2, dtype=np.float32)})))
    assert store.vector_of("8").tolist() == [0.0, 1.0]
    with pytest.raises(InspectorError, match="not an integer"):
        store.vector_of("x")
