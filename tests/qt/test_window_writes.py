"""The window's own files (File > Export trace, view, stage tables; the receipt; saved
judgments) and its settings go through the core's guarded writer: a link planted at the
chosen file, into the open store, is refused in one sentence and the store keeps its bytes;
settings whose file lies inside the open store are not written."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from inspector.core.errors import InspectorError
from tests.storekit import snapshot, write_tuning_store


def _victims(store: Path) -> list[Path]:
    table = store / "memories.lance"
    return [next((table / "_versions").glob("*.manifest")),
            table / "_versions" / "latest_version_hint.json",
            next((table / "data").glob("*.lance"))]


def _planted(tmp_path: Path, name: str, victim: Path) -> Path:
    link = tmp_path / "out" / name
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(victim)
    return link


def test_the_windows_files_never_go_through_a_link_into_the_store(window, ready, qtbot,
                                                                   tmp_path: Path) -> None:
    store = write_tuning_store(tmp_path / "store", n=60)
    vm = window.vm
    vm.open_store(str(store))
    ready(vm)
    vm.use_as_query("m0001")
    ready(vm)
    assert vm.trace is not None and vm.error is None
    before = snapshot(store)
    manifest, hint, data = _victims(store)
    for write, name, victim in ((window.export_json, "trace.json", manifest),
                                (window.export_png, "view.png", hint)):
        link = _planted(tmp_path, name, victim)
        with pytest.raises(InspectorError, match=f"{name} is inside the store"):
            write(str(link))
    _planted(tmp_path, "answer.json", data)
    with pytest.raises(InspectorError, match="answer.json is inside the store"):
        window.export_tables(str(tmp_path / "out"))
    panel = window.tuning_dock.judgments
    assert panel.save(str(_planted(tmp_path, "judgments.json", manifest))) is False
    assert "inside the store" in vm.error
    vm.error = None
    window.tuning_receipts.export(str(_planted(tmp_path, "receipt.json", hint)))
    qtbot.waitUntil(lambda: vm.error is not None and not vm.busy, timeout=30_000)
    assert "receipt.json is inside the store" in vm.error
    assert snapshot(store) == before
    assert all(p.is_symlink() for p in (tmp_path / "out").iterdir())


def test_settings_inside_the_open_store_are_not_written(window, ready,
                                                        tmp_path: Path) -> None:
    store = write_tuning_store(tmp_path / "store", n=60)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                      str(store / "settings"))
    before = snapshot(store)
    window.vm.open_store(str(store))
    ready(window.vm)
    window.save_settings()
    assert "Settings are not saved" in window.status_label.text()
    assert snapshot(store) == before and not (store / "settings").exists()
