"""A missing file is named as what it is (issue 21): a data file deleted from a table whose
versions are all still listed is damage, not "removed by a cleanup" (which a cleanup that
removed the pinned version still says: tests/core/stores/test_column_types.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.cli.main import main
from inspector.core.stores.opening import open_store
from inspector.core.stores.store import StoreDamagedError, VersionGoneError
from tests.askkit import ask
from tests.storekit import versioned_store

ORIGIN_VECTOR = np.array([1, 0, 0, 0], np.float32)


def _damaged(tmp_path: Path) -> tuple[Path, str]:
    """The versioned store with the data file of its first write deleted."""
    path = versioned_store(tmp_path / "v")
    first = min((path / "memories.lance" / "data").iterdir(), key=lambda f: f.stat().st_mtime)
    first.unlink()
    return path, f"data/{first.name}"


@pytest.mark.parametrize("mode", ["vector", "fts"])
def test_a_deleted_data_file_is_damage_named_by_its_file(tmp_path, mode):
    path, missing = _damaged(tmp_path)
    store = open_store(str(path))
    with pytest.raises(StoreDamagedError) as got:
        ask(store, text="memory", vector=ORIGIN_VECTOR, mode=mode, limit=3)
    assert not isinstance(got.value, VersionGoneError)
    text = str(got.value)
    assert f"is damaged: version {store.version} refers to a data file that is missing " \
        f"({missing})" in text, text
    assert "cleanup" not in text and "lance error" not in text


def test_the_command_line_says_damage_in_one_line(tmp_path, capsys):
    path, missing = _damaged(tmp_path)
    assert main(["query", str(path), "--vector", "[1, 0, 0, 0]"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is damaged" in err and missing in err, err
    assert "removed by a cleanup" not in err


def test_a_missing_file_named_without_its_leading_slash_is_still_named(tmp_path):
    # LanceDB's local object store names the file "tmp/…/memories.lance/data/….lance" (no
    # leading "/") when the table's only data files are gone: the message names it all the same
    from tests.storekit import write_random_store

    path = write_random_store(tmp_path / "s", n=50, dim=4)
    store = open_store(str(path))
    gone = sorted(f"data/{f.name}" for f in (path / "memories.lance" / "data").iterdir())
    for f in (path / "memories.lance" / "data").iterdir():
        f.unlink()
    with pytest.raises(StoreDamagedError) as got:
        store.table.search(ORIGIN_VECTOR, vector_column_name="vector").limit(3).to_arrow()
    text = str(got.value)
    assert "refers to a data file that is missing (data/" in text, text
    assert any(f"({name})" in text for name in gone), text
    assert "(unknown)" not in text
