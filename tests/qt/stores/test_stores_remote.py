"""An s3:// store opened through File > Open… on an S3 server (moto) this test starts on
127.0.0.1: storage options from the dialog, credentials from the environment, the same results
as the engine, Open Recent with the non-secret options, and no secret in the settings."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from PySide6.QtCore import Qt

from inspector.core.stores.options import OpenOptions
from inspector.qt import settings as cfg
from inspector.qt.settings import recalled
from tests.qt.qtkit import engine_json
from tests.storekit import moto_s3, vectors_column

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")
lancedb = pytest.importorskip("lancedb")

BUCKET = "window-memory"
URI = f"s3://{BUCKET}/agents/main"
ENV_KEY, ENV_SECRET = "AKIAWINDOWTEST", "env-secret-DO-NOT-SAVE"
ROW_SECRET = "row-secret-DO-NOT-SAVE"
QVEC = "[" + ", ".join(["0.3"] * 8) + "]"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """A moto S3 server on loopback with a LanceDB memories table; yields its endpoint."""
    with moto_s3(BUCKET, key="x") as (endpoint, _):
        opts = {"aws_access_key_id": "x", "aws_secret_access_key": "x",
                "aws_region": "us-east-1", "aws_endpoint": endpoint, "allow_http": "true"}
        vecs = np.random.default_rng(2).normal(size=(40, 8)).astype(np.float32)
        lancedb.connect(URI, storage_options=opts).create_table("memories", pa.table({
            "id": [f"r{i:02d}" for i in range(40)],
            "text": [f"remote memory {i}" for i in range(40)],
            "vector": vectors_column(vecs), "importance": [0.5] * 40,
            "agentId": ["main" if i % 3 else "helper" for i in range(40)]}))
        yield endpoint


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ENV_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", ENV_SECRET)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.delenv("INSPECTOR_STORAGE_OPTIONS", raising=False)


def _settings_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_s3_store_opens_through_the_dialog_and_secrets_never_reach_the_settings(
        window, qtbot, ready, s3, aws_env, isolated):
    vm, feats = window.vm, window.store_features
    dlg = feats.open_dialog()
    dlg.location.setText(URI)
    assert dlg.options_box.isEnabled() and not dlg.docs_model.isEnabled()
    dlg.add_option("aws_endpoint", s3)
    dlg.add_option("region", "us-east-1")
    dlg.add_option("aws_secret_access_key", ROW_SECRET)  # works now, is never remembered
    assert dlg.options.item(2, 0).font().italic()
    qtbot.mouseClick(dlg.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dlg.isVisible() or dlg.error.isVisible(), timeout=30_000)
    assert not dlg.error.isVisible(), dlg.error.text()
    ready(vm)
    assert (vm.store.uri, vm.store.table_name, vm.store.rows) == (URI, "memories", 40)
    vm.put(preset="docs-before-fix", limit=6, scopes=["main"],
           set={"scope_rule.strategy": "column", "fetch.mode": "vector"})
    vm.set_query(QVEC)
    vm.jobs.wait_idle(60)
    assert vm.error is None and vm.trace is not None
    want = engine_json(window)
    assert [st.ids for st in vm.trace.stages] == \
        [[c["id"] for c in st["candidates"]] for st in want["stages"]]
    assert feats.pinned_label.text() == "v1 pinned"

    window.save_settings()
    cfg.settings().sync()
    text = _settings_text(isolated)
    assert s3 in text and URI in text, "the endpoint and URI are remembered"
    for secret in (ROW_SECRET, ENV_SECRET, ENV_KEY):
        assert secret not in text
    table, opts = recalled(URI)
    assert table == "memories" and dict(opts.storage) == {"aws_endpoint": s3,
                                                          "region": "us-east-1"}

    # Open Recent: the remembered (non-secret) options plus the environment's credentials
    vm.open_store(None)
    ready(vm)
    vm.set_query(QVEC)  # a vector of the demo's dimension: the other store drops it, says so
    vm.jobs.wait_idle(60)
    window.recent_menu.aboutToShow.emit()
    act = next(a for a in window.recent_menu.actions() if a.text() == URI)
    act.trigger()
    qtbot.waitUntil(lambda: vm.store is not None and vm.store.uri == URI, timeout=30_000)
    ready(vm)
    vm.set_query(QVEC)
    vm.jobs.wait_idle(60)
    assert vm.error is None and vm.store.rows == 40 and vm.trace.final.ids


def test_unreachable_endpoint_is_one_sentence_in_the_dialog(window, qtbot, aws_env):
    dlg = window.store_features.open_dialog()
    dlg.location.setText(URI)
    dlg.add_option("aws_endpoint", f"http://127.0.0.1:{_free_port()}")
    dlg.add_option("client_max_retries", "0")  # the same sentence, without 5 s of retries
    dlg.request_open()
    qtbot.waitUntil(dlg.error.isVisible, timeout=60_000)
    text = dlg.error.text()
    assert dlg.isVisible() and "\n" not in text and "Traceback" not in text
    assert "127.0.0.1" in text


def test_a_secret_in_the_uri_shows_nowhere_in_the_window(window, qtbot, s3, aws_env,
                                                          isolated) -> None:
    """s3://KEY:SECRET@bucket/...: the title, the store header and its tooltip, the status
    bar and the settings never show the secret."""
    secret = "Win5ecretInUri"
    vm, feats = window.vm, window.store_features
    feats.open(f"s3://{ENV_KEY}:{secret}@{BUCKET}/agents/main", None,
               OpenOptions.make({"aws_endpoint": s3, "region": "us-east-1"}))
    vm.jobs.wait_idle()
    assert vm.store is not None and vm.store.rows == 40
    shown = [window.windowTitle(), window.query_bar.store_label.text(),
             window.query_bar.store_label.toolTip(), window.status_label.text()]
    assert all(secret not in text for text in shown), shown
    assert f"{BUCKET}/agents/main" in window.windowTitle()
    window.save_settings()
    for f in isolated.rglob("*"):
        if f.is_file():
            assert secret not in f.read_text(errors="replace")
