"""Versions in the window: the versions panel lists them, opens one as of a version, compares the
current query on two versions (the row a write pushed out), and a second writer's new version
is noticed, reloaded on request, and never shown before that."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lancedb
import numpy as np
import pytest
from PySide6.QtCore import Qt

from inspector.core.analysis.version_diff import find_push_out
from inspector.core.stores.opening import open_store
from inspector.core.stores.options import OpenOptions
from tests.askkit import final_ids, question
from tests.storekit import rows_at_distance as _rows
from tests.storekit import versioned_store

DIM = 4
QUERY = "[1, 0, 0, 0]"
GIVEN = {"mode": "vector", "limit": 5}
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def versioned(tmp_path: Path) -> Path:
    """v1: m0..m4; v2: n0, n1 arrive closer (m3, m4 pushed out of the top 5); v3: m0 deleted."""
    return versioned_store(tmp_path / "store")


@pytest.fixture
def win(qtbot):
    from inspector.qt.window import MainWindow

    w = MainWindow(restore=False)
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    return w


def _open(win, ready, path: Path, version: int | None = None) -> None:
    vm = win.vm
    win.store_features.open(str(path), None, OpenOptions.make(version=version))
    vm.jobs.wait_idle(60)
    if vm.question.vector is None:
        vm.put(limit=5)
        vm.set_query(QUERY)  # typed as a user types it: a JSON array is the vector itself
        vm.jobs.wait_idle(60)
    assert vm.error is None and vm.trace is not None


def _final(vm) -> list[str]:
    return list(vm.trace.final.ids)


def test_versions_panel_lists_versions_and_compares_two_of_them(win, qtbot, ready, versioned):
    feats, vm = win.store_features, win.vm
    _open(win, ready, versioned, version=1)
    assert vm.store.version == 1 and _final(vm) == ["m0", "m1", "m2", "m3", "m4"]
    assert feats.pinned_label.text() == "v1 (as of)"
    panel = feats.versions
    feats.dock.show()
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 3, timeout=10_000)
    shown = [(panel.table.topLevelItem(n).text(0), panel.table.topLevelItem(n).text(2))
             for n in range(3)]
    assert shown == [("v3", "6"), ("v2", "7"), ("v1", "5")]
    assert "answering" in panel.table.topLevelItem(2).text(3)
    assert panel.pinned.text().startswith("Answering from v1 (latest v3)")

    panel.a.setCurrentIndex(panel.a.findData(1))
    panel.b.setCurrentIndex(panel.b.findData(2))
    qtbot.mouseClick(panel.compare_button, LEFT)
    qtbot.waitUntil(lambda: panel.diff is not None, timeout=10_000)
    d = panel.diff
    assert (d.version_a, d.version_b) == (1, 2)
    assert [str(x) for x in d.only_a] == ["m3", "m4"] and [str(x) for x in d.only_b] == \
        ["n0", "n1"]
    rows = {panel.diff_view.topLevelItem(n).text(0): panel.diff_view.topLevelItem(n)
            for n in range(panel.diff_view.topLevelItemCount())}
    assert rows["m3"].text(3) == "pushed out / deleted" and rows["m3"].text(2) == "—"
    assert rows["n0"].text(3) == "came in" and rows["n0"].text(1) == "—"
    assert rows["m0"].text(1) == "#1" and rows["m0"].text(2) == "#3"  # moved down two
    assert "2 only in v1" in panel.summary.text()

    # the first pushed-out row is picked; ask which write pushed it out
    assert str(panel.target_row()) == "m3"
    qtbot.mouseClick(panel.push_button, LEFT)
    qtbot.waitUntil(lambda: panel.push is not None, timeout=10_000)
    store = open_store(str(versioned), version=1)
    q = question(store, vector=np.array([1, 0, 0, 0], np.float32), **GIVEN)
    want = find_push_out(store, q, "m3", [1, 2])
    assert (panel.push.last_with, panel.push.first_without) == (want.last_with,
                                                                want.first_without) == (1, 2)
    assert "gone at <b>v2</b>" in panel.push_label.text() and "n0, n1" in panel.push_label.text()

    # open as of v2 from the list: the window answers from it and says so
    item = next(panel.table.topLevelItem(n) for n in range(3)
                if panel.table.topLevelItem(n).text(0) == "v2")
    panel.table.setCurrentItem(item)
    qtbot.mouseClick(panel.open_button, LEFT)
    qtbot.waitUntil(lambda: vm.store.version == 2 and not vm.busy, timeout=10_000)
    ready(vm)
    assert _final(vm) == ["n0", "n1", "m0", "m1", "m2"]
    assert feats.pinned_label.text() == "v2 (as of)"
    assert win.windowTitle().endswith("@ v2")


def test_a_second_writer_is_noticed_and_reload_moves_to_the_new_version(win, qtbot, ready,
                                                                       tmp_path):
    path = tmp_path / "live"
    lancedb.connect(str(path)).create_table(
        "memories", _rows([f"m{i}" for i in range(6)], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]))
    feats, vm = win.store_features, win.vm
    _open(win, ready, path)
    before = _final(vm)
    assert before == ["m0", "m1", "m2", "m3", "m4"] and feats.pinned_label.text() == "v1 pinned"
    assert feats.watch.timer.isActive() and feats.watch.timer.interval() == 5000
    _checked(qtbot, win)
    assert not feats.newer_notice.isVisible(), "no notice while nothing changed"

    # another process's write: a closer row arrives as version 2
    lancedb.connect(str(path)).open_table("memories").add(_rows(["w0"], [0.001]))
    feats.watch.check()
    qtbot.waitUntil(feats.newer_notice.isVisible, timeout=10_000)
    assert "newer version <b>v2</b>" in feats.newer_notice.label.text()
    assert "stay on v1" in feats.newer_notice.label.text()

    # until Reload, answers stay on the pinned version, even when the query runs again
    vm.run_again()
    vm.jobs.wait_idle(60)
    assert vm.store.version == 1 and _final(vm) == before

    qtbot.mouseClick(feats.newer_notice.button(0), LEFT)
    qtbot.waitUntil(lambda: vm.store.version == 2 and not vm.busy, timeout=10_000)
    ready(vm)
    assert _final(vm) == ["w0", "m0", "m1", "m2", "m3"] != before
    want = final_ids(open_store(str(path)), vector=np.array([1, 0, 0, 0], np.float32), **GIVEN)
    assert _final(vm) == want
    assert not feats.newer_notice.isVisible() and feats.pinned_label.text() == "v2 pinned"


def _checked(qtbot, win) -> None:
    """One poll for a newer version, waited for until its answer was handled (the 'newer'
    job settled): a notice that does not show afterwards was not going to show."""
    jobs = win.vm.jobs
    with qtbot.waitSignal(jobs.channel_changed, timeout=10_000,
                          check_params_cb=lambda channel, busy: channel == "newer" and not busy):
        win.store_features.watch.check()


def test_polling_stops_while_the_window_is_hidden(win, qtbot):
    watch = win.store_features.watch
    assert watch.timer.isActive()
    win.hide()
    assert not watch.timer.isActive()
    win.show()
    assert watch.timer.isActive()
    win.close()
    assert not watch.timer.isActive()


def test_a_dismissed_notice_stays_away_until_a_newer_write(win, qtbot, ready, tmp_path):
    path = tmp_path / "live"
    lancedb.connect(str(path)).create_table("memories", _rows(["m0", "m1"], [0.1, 0.2]))
    feats = win.store_features
    _open(win, ready, path)
    tbl = lancedb.connect(str(path)).open_table("memories")
    tbl.add(_rows(["w0"], [0.3]))
    feats.watch.check()
    qtbot.waitUntil(feats.newer_notice.isVisible, timeout=10_000)
    feats.newer_notice.close_button.click()
    _checked(qtbot, win)
    assert not feats.newer_notice.isVisible()
    tbl.add(_rows(["w1"], [0.4]))
    feats.watch.check()
    qtbot.waitUntil(feats.newer_notice.isVisible, timeout=10_000)
    assert "v3" in feats.newer_notice.label.text()


def _inspector(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path / "home"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    return subprocess.run([sys.executable, "-m", "inspector", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_shot_takes_the_store_options(versioned, tmp_path):
    out = tmp_path / "v1.png"
    query = ["--vector", QUERY, "--limit", "5"]
    done = _inspector(["shot", str(versioned), "--out", str(out), "--as-of", "1", *query],
                      tmp_path)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 10_000
    done = _inspector(["shot", str(versioned), "--out", str(out), "--as-of", "9", *query],
                      tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == ("inspector: Table 'memories' has no version 9; its versions "
                                   "are 1-3.")


def test_inspector_store_passes_the_store_options_to_the_window(monkeypatch, versioned):
    from inspector import cli
    from inspector.qt import app as qt_app

    got = {}
    monkeypatch.setattr(qt_app, "launch", lambda store, table, options, pipeline: got.update(
        store=store, table=table, options=options, pipeline=pipeline) or 0)
    assert cli.main([str(versioned), "--as-of", "2", "--storage-option", "region=eu-west-1",
                     "--docs-model", "m"]) == 0
    assert got["store"] == str(versioned) and got["options"] == OpenOptions.make(
        {"region": "eu-west-1"}, 2, "m") and got["pipeline"] is None


def test_a_version_cleaned_up_under_the_window_offers_the_latest(win, ready, versioned):
    import datetime
    import warnings

    vm, feats = win.vm, win.store_features
    _open(win, ready, versioned, version=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lancedb.connect(str(versioned)).open_table("memories").optimize(
            cleanup_older_than=datetime.timedelta(0), delete_unverified=True)
    vm.run_again()
    vm.jobs.wait_idle(60)
    assert "removed by a cleanup" in (vm.error or "") and vm.trace is None
    notice = feats.newer_notice
    assert notice.isVisible() and "v1</b> was cleaned up" in notice.label.text()
    notice.button(0).click()  # Open latest
    ready(vm)
    assert vm.error is None and vm.store.version == vm.store.latest_version() > 1
    assert _final(vm)
