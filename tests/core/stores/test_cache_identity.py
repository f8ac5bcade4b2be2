"""Private copies cannot be mixed up: keyed by the store's resolved location and the version's
creation, checked before use, and pruned by age and size (issue 12, cases 1 and 10)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa

from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.engine.pool import Query
from inspector.core.stores.fts import fts_table
from inspector.core.stores.opening import open_store
from inspector.core.stores.safety import cache
from tests.storekit import snapshot, vectors_column


def _table(ids: list[str], word: str) -> pa.Table:
    vecs = np.eye(4, dtype=np.float32)[np.arange(len(ids)) % 4]
    return pa.table({"id": ids, "text": [f"{word} note {i}" for i in ids],
                     "vector": vectors_column(vecs)})


def _fts_ids(store) -> list[str]:
    t = run(store, Query(text="note"), Params(mode="fts", limit=20))
    return sorted(t.ids("final"))


def test_two_stores_opened_by_the_same_relative_path_never_share_a_copy(tmp_path, monkeypatch):
    for folder, prefix in (("one", "a"), ("two", "b")):
        (tmp_path / folder).mkdir()
        lancedb.connect(str(tmp_path / folder / "store")).create_table(
            "memories", _table([f"{prefix}{i}" for i in range(3)], "alpha"))
    before = {f: snapshot(tmp_path / f) for f in ("one", "two")}
    monkeypatch.chdir(tmp_path / "one")
    assert _fts_ids(open_store("store")) == ["a0", "a1", "a2"]
    monkeypatch.chdir(tmp_path / "two")
    assert _fts_ids(open_store("store")) == ["b0", "b1", "b2"]
    assert {f: snapshot(tmp_path / f) for f in ("one", "two")} == before


def test_a_recreated_table_at_the_same_path_gets_a_fresh_copy(tmp_path):
    path = tmp_path / "store"
    db = lancedb.connect(str(path))
    db.create_table("memories", _table(["old0", "old1"], "alpha"))
    assert _fts_ids(open_store(str(path))) == ["old0", "old1"]
    db.drop_table("memories")
    time.sleep(0.01)
    db.create_table("memories", _table(["new0", "new1", "new2"], "beta"))
    store = open_store(str(path))
    assert store.version == 1
    assert _fts_ids(store) == ["new0", "new1", "new2"]
    hybrid = run(store, Query(text="note", vector=np.eye(4, dtype=np.float32)[0]),
                 Params(mode="hybrid", limit=10))
    assert all(str(i).startswith("new") for i in hybrid.ids("final"))


def test_a_copy_that_does_not_match_its_source_is_rebuilt(tmp_path):
    path = tmp_path / "store"
    lancedb.connect(str(path)).create_table("memories", _table(["a0", "a1"], "alpha"))
    where = Path(fts_table(open_store(str(path)))[1])
    ready = cache.read_ready(where)
    ready["identity"]["location"] = "/somewhere/else"
    (where / cache.READY).write_text(json.dumps(ready))
    fresh = open_store(str(path))
    assert _fts_ids(fresh) == ["a0", "a1"]
    assert cache.read_ready(where)["identity"]["location"] == str(path.resolve())


def test_prune_removes_old_copies_then_the_least_recently_used_over_the_limit(tmp_path):
    root = cache.cache_root()
    made = []
    for i in range(4):
        d = root / "fts" / f"entry{i}"
        d.mkdir(parents=True)
        (d / "data").write_bytes(b"x" * 1000)
        cache.write_ready(d, {"n": i})
        os.utime(d / cache.READY, (1_000_000 + i, 1_000_000 + i))
        made.append(d)
    now = 1_000_000 + 10
    old = root / "sqlite" / "ancient"
    old.mkdir(parents=True)
    cache.write_ready(old, {"n": "old"})
    os.utime(old / cache.READY, (0, 0))
    removed = cache.prune(keep=(made[0],), now=now, limit=2500)
    assert old in removed
    assert not made[1].exists() and not made[2].exists()  # least recently used first
    assert made[0].exists() and made[3].exists()  # kept (in use) and the newest


def test_the_size_limit_is_documented_and_configurable(monkeypatch):
    monkeypatch.setenv("INSPECTOR_CACHE_MAX_MB", "3")
    assert cache.max_bytes() == 3 * 1024 * 1024
    monkeypatch.setenv("INSPECTOR_CACHE_MAX_MB", "nonsense")
    assert cache.max_bytes() == cache.DEFAULT_MAX_MB * 1024 * 1024
