"""The one guarded writer (core.stores.safety.outputs): a write never lands inside a store by
any of its names, never goes through a link planted at the target, and replaces a file by
create-then-rename, so a failed write leaves the old file whole and no temporary behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.safety import outputs
from tests.storekit import snapshot, write_tuning_store


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return write_tuning_store(tmp_path / "store", n=24)


def _manifest(store: Path) -> Path:
    return next((store / "memories.lance" / "_versions").glob("*.manifest"))


def test_a_location_inside_a_named_store_is_found_by_every_name(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    link = tmp_path / "link-to-store"
    link.symlink_to(store)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    for name in (str(store), store.as_uri(), "store", "./store/", str(link)):
        for target in (store / "x.json", link / "x.json", tmp_path / "elsewhere/../store/x",
                       Path("store/memories.lance/y")):
            assert outputs.inside_store(target, [name]) is not None, (name, target)
        assert outputs.inside_store(tmp_path / "elsewhere" / "x.json", [name]) is None
    assert outputs.inside_store(store / "x", ["s3://bucket/store", "db://x", None]) is None


def test_a_link_at_the_target_is_judged_by_where_it_points(store: Path, tmp_path: Path) -> None:
    planted = tmp_path / "out.json"
    planted.symlink_to(_manifest(store))
    with pytest.raises(InspectorError, match=r"out\.json is inside the store .*store"):
        outputs.write_file(planted, "x", [str(store)], force=True)
    elsewhere = tmp_path / "mine.txt"
    elsewhere.write_text("mine")
    other = tmp_path / "other.json"
    other.symlink_to(elsewhere)
    with pytest.raises(InspectorError, match="exists"):
        outputs.write_file(other, "new", [str(store)])
    outputs.write_file(other, "new", [str(store)], force=True)
    assert not other.is_symlink() and other.read_text() == "new"
    assert elsewhere.read_text() == "mine"  # the link was replaced, not written through


def test_a_hard_link_at_the_target_is_replaced_never_written_through(store: Path,
                                                                     tmp_path: Path) -> None:
    before = snapshot(store)
    hard = tmp_path / "hard.json"
    os.link(_manifest(store), hard)
    outputs.write_file(hard, "replaced", [str(store)], force=True)
    assert hard.read_text() == "replaced" and snapshot(store) == before


def test_opened_stores_are_protected_without_being_named(store: Path, tmp_path: Path) -> None:
    from inspector.core.stores.opening import open_store

    open_store(f"file://{store}")
    with pytest.raises(InspectorError, match="inside the store"):
        outputs.write_file(store / "memories.lance" / "x.json", "x")
    with pytest.raises(InspectorError, match="inside the store"):
        outputs.output_folder(store / "exports")
    assert not (store / "exports").exists()


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "run.txt"
    target.write_text("old")

    def broken(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(InspectorError, match=r"Cannot write .*run\.txt: No space left"):
        outputs.write_file(target, broken, force=True)
    assert target.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["run.txt"]


@pytest.mark.parametrize("bad", ["/dev/null", "/proc/self", "folder"])
def test_devices_folders_and_pseudo_files_are_never_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    (tmp_path / "folder").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InspectorError) as err:
        outputs.write_file(bad, "x", force=True)
    assert bad in str(err.value) and len(str(err.value).splitlines()) == 1
