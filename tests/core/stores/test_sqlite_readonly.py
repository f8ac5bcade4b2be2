"""SQLite docs stores are read without creating or touching any file beside them, in every
journal mode, and in a read-only folder (issue 12, case 2)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.core.stores.opening import describe_tables, open_store
from inspector.core.stores.safety.sqlite_ro import IMMUTABLE, SNAPSHOT
from tests.storekit import build_docs_db, snapshot


def _wal_store(folder: Path, keep_shm: bool) -> Path:
    """A WAL-mode docs store whose last writes sit in its -wal (a writer killed before a
    checkpoint); with or without its -shm."""
    folder.mkdir()
    db = folder / "docs.sqlite"
    build_docs_db(db, n=60)
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("UPDATE docs_chunks SET title = 'late title' WHERE id = 1")
    con.commit()
    # copy the files while the connection is open: a -wal that was never checkpointed
    shot = folder.parent / f"{folder.name}-copy"
    shot.mkdir()
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{db}{suffix}").exists() and (suffix != "-shm" or keep_shm):
            shutil.copyfile(f"{db}{suffix}", shot / f"docs.sqlite{suffix}")
    con.close()
    shutil.rmtree(folder)
    shot.rename(folder)
    return db


@pytest.mark.parametrize("keep_shm", [False, True])
def test_a_wal_store_is_read_from_a_snapshot_and_its_folder_stays_byte_identical(tmp_path,
                                                                                keep_shm):
    db = _wal_store(tmp_path / "docs", keep_shm)
    assert Path(f"{db}-wal").stat().st_size > 0
    before = snapshot(db.parent)
    store = open_store(str(db))
    assert store.source.read_mode == SNAPSHOT
    late = store.table.search().where("id = 1").select(["title"]).to_arrow()
    assert late.column(0).to_pylist() == ["late title"]  # the WAL's committed write is seen
    assert describe_tables(str(db))[0].read_mode == SNAPSHOT
    assert snapshot(db.parent) == before


def test_a_store_in_a_read_only_folder_opens(tmp_path):
    db = _wal_store(tmp_path / "docs", keep_shm=False)
    before = snapshot(db.parent)
    os.chmod(db.parent, stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(db.parent, os.W_OK):
            pytest.skip("running as a user that can write anywhere")
        assert open_store(str(db)).rows == 60
    finally:
        os.chmod(db.parent, stat.S_IRWXU)
    assert snapshot(db.parent) == before


def test_a_store_without_a_log_is_opened_immutable(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    db = tmp_path / "docs" / "docs.sqlite"
    build_docs_db(db, n=30)
    before = snapshot(db.parent)
    assert main(["tables", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["read_mode"] == IMMUTABLE
    assert main(["tables", str(db)]) == 0
    assert "SQLite opened immutable" in capsys.readouterr().out
    assert snapshot(db.parent) == before


def test_tables_says_a_wal_store_is_read_from_a_snapshot(tmp_path, capsys):
    db = _wal_store(tmp_path / "docs", keep_shm=True)
    assert main(["tables", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["read_mode"] == SNAPSHOT


def test_text_that_is_not_utf8_is_read_with_replacement_characters(tmp_path):
    (tmp_path / "docs").mkdir()
    db = tmp_path / "docs" / "docs.sqlite"
    build_docs_db(db, n=30)
    con = sqlite3.connect(db)
    con.execute("UPDATE docs_chunks SET text = CAST(X'6B657973FF20626164' AS TEXT) WHERE id = 2")
    con.commit()
    con.close()
    store = open_store(str(db))
    got = store.table.search().where("id = 2").select(["text"]).to_arrow().column(0)[0]
    assert got.as_py() == "keys\ufffd bad"
