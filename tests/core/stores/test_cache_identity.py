"""Private copies cannot be mixed up: keyed by the store's resolved location and the version's
creation (or a docs file's content), checked before use, and pruned by age and size (issue 12,
cases 1 and 10; issue 21)."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.core.stores.fts import fts_table
from inspector.core.stores.opening import open_store
from inspector.core.stores.safety import cache
from tests.askkit import final_ids
from tests.storekit import build_docs_db, snapshot, vectors_column


def _table(ids: list[str], word: str) -> pa.Table:
    vecs = np.eye(4, dtype=np.float32)[np.arange(len(ids)) % 4]
    return pa.table({"id": ids, "text": [f"{word} note {i}" for i in ids],
                     "vector": vectors_column(vecs)})


def _fts_ids(store) -> list[str]:
    return sorted(final_ids(store, text="note", mode="fts", limit=20))


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
    hybrid = final_ids(store, text="note", vector=np.eye(4, dtype=np.float32)[0],
                       mode="hybrid", limit=10)
    assert all(str(i).startswith("new") for i in hybrid)


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


def _same_size_rewrite(db: Path, how: str) -> None:
    """Change the file's content without changing its size, then put its mtime back."""
    st = os.stat(db)
    if how == "sqlite":  # an UPDATE through SQLite, same-length text
        con = sqlite3.connect(db)
        con.execute("UPDATE docs_chunks SET title = 'Page Z' WHERE id = 1")
        con.commit()
        con.close()
    else:  # another docs file of the same size written over this one, in place
        other = db.with_name("other.sqlite")
        build_docs_db(other, n=60, seed=11)
        data = other.read_bytes()
        assert len(data) == st.st_size
        with open(db, "r+b") as fh:
            fh.write(data)
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(db).st_size, os.stat(db).st_mtime_ns, os.stat(db).st_ino) == \
        (st.st_size, st.st_mtime_ns, st.st_ino)


@pytest.mark.parametrize("full_hash", [True, False])
@pytest.mark.parametrize("how", ["sqlite", "bytes"])
def test_a_docs_file_rewritten_at_the_same_size_and_mtime_is_not_answered_from_the_old_copy(
        tmp_path, monkeypatch, how, full_hash):
    from inspector.core.stores.safety import sqlite_ro

    if not full_hash:  # a large file: only its header, WAL header and inode times are read
        monkeypatch.setattr(sqlite_ro, "FULL_HASH_BYTES", 0, raising=False)
    db = tmp_path / "docs.sqlite"
    build_docs_db(db, n=60, seed=3)
    first = open_store(str(db))
    title = first.table.search().where("id = 1").select(["title"]).to_arrow().column(0)
    texts = first.table.search().select(["text"]).limit(None).to_arrow().column(0).to_pylist()
    assert title.to_pylist() == ["Page 0"]
    _same_size_rewrite(db, how)
    assert first.has_newer()
    fresh = open_store(str(db))
    got = fresh.table.search().select(["id", "title", "text"]).limit(None).to_arrow()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    want = con.execute("SELECT id, title, text FROM docs_chunks ORDER BY id").fetchall()
    con.close()
    assert sorted(zip(*(got.column(c).to_pylist() for c in ("id", "title", "text")),
                      strict=True)) == want
    assert [t for (_i, _t, t) in want] != texts or how == "sqlite"
