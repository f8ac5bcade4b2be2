"""Table versions: list, open as of a version (validated, never written), pin at open, notice a
newer version, and the same query on two versions side by side."""

from __future__ import annotations

from pathlib import Path

import lancedb
import numpy as np
import pytest

from inspector.core.analysis.version_diff import compare_versions, diff_traces, find_push_out
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store
from inspector.core.stores.versions import list_versions
from tests.askkit import final_ids, question
from tests.storekit import rows_at_distance as _rows
from tests.storekit import snapshot, versioned_store

DIM = 4
Q = np.array([1, 0, 0, 0], np.float32)


@pytest.fixture
def versioned(tmp_path: Path) -> Path:
    """v1: m0..m4; v2: n0, n1 arrive closer (m3, m4 pushed out of the top 5); v3: m0 deleted."""
    return versioned_store(tmp_path / "store")


def test_versions_are_listed_with_time_and_rows(versioned):
    store = open_store(str(versioned))
    got = list_versions(store)
    assert [(v.version, v.rows) for v in got] == [(1, 5), (2, 7), (3, 6)]
    assert all(v.timestamp is not None for v in got)
    assert got[0].to_json()["timestamp"].startswith("20")


def test_open_as_of_a_version_is_validated_and_never_writes(versioned):
    before = snapshot(versioned)
    old = open_store(str(versioned), version=1)
    assert (old.version, old.rows) == (1, 5)
    with pytest.raises(InspectorError, match=r"has no version 9; its versions are 1-3\."):
        open_store(str(versioned), version=9)
    with pytest.raises(InspectorError, match="whole number"):
        open_store(str(versioned), version="2")  # type: ignore[arg-type]
    old.reopen(2)
    assert snapshot(versioned) == before


def test_store_is_pinned_at_open_and_notices_a_newer_version(versioned):
    store = open_store(str(versioned))
    assert store.version == 3 and not store.has_newer()
    p = {"limit": 10, "cap": 0}
    ids_before = _final(store, p)
    lancedb.connect(str(versioned)).open_table("memories").add(_rows(["w0"], [0.0]))
    assert store.version == 3 and store.rows == 6
    assert _final(store, p) == ids_before  # still answering from version 3
    assert store.latest_version() == 4 and store.has_newer()
    moved = store.reopen()
    assert moved.version == 4 and _final(moved, p)[0] == "w0"


def _final(store, p: dict) -> list[str]:
    return final_ids(store, vector=Q, **p)


def test_same_query_on_two_versions_shows_who_pushed_a_memory_out(versioned):
    before = snapshot(versioned)
    store = open_store(str(versioned))
    p = question(store, vector=Q, limit=3, cap=0)
    diff = compare_versions(store, p, 1, 2)
    assert (diff.version_a, diff.version_b) == (1, 2)
    assert diff.a.final.ids == ["m0", "m1", "m2"]
    assert diff.b.final.ids == ["n0", "n1", "m0"]
    assert diff.only_a == ("m1", "m2") and diff.only_b == ("n0", "n1")
    assert [(m.id, m.rank_a, m.rank_b) for m in diff.moved] == [("m0", 1, 3)]
    latest = compare_versions(store, p, 2)
    assert latest.version_b == 3 and latest.only_a == ("m0",)
    doc = diff.to_json()
    assert doc["only_a"] == ["m1", "m2"] and doc["a"]["store"]["version"] == 1
    out = find_push_out(store, p, "m1")
    assert (out.last_with, out.first_without) == (1, 2)
    assert set(out.entered) == {"n0", "n1"} and out.checked == (1, 2)
    never = find_push_out(store, p, "m4")
    assert never.first_without is None
    assert diff_traces(diff.a, diff.a).only_a == ()
    assert snapshot(versioned) == before


def test_full_text_search_on_a_table_written_in_several_appends(versioned):
    store = open_store(str(versioned))
    assert len(final_ids(store, text="memory", mode="fts", limit=3)) == 3
