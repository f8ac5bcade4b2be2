"""File > Open… as a person uses it: a SQLite docs store through the dialog with a docs preset,
one-sentence errors that keep the dialog open, the default OpenClaw location with its preset
suggested, agent_scope suggestions, and hosted embedders without a key."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from PySide6.QtCore import Qt

from inspector.core.stores.options import OpenOptions
from tests.qt.qtkit import engine_json
from tests.storekit import vectors_column

LEFT = Qt.MouseButton.LeftButton
DIM = 12
WORDS = ("rotate", "signing", "keys", "tokens", "deploy", "canary", "cache", "redis", "quota")
REPOS = ("platform-docs", "vault-agent", "billing-api")


def build_docs_sqlite(path: Path, n: int = 90) -> Path:
    """The docs engine's schema: docs_chunks, an FTS5 table over it, docs_embeddings."""
    rng = np.random.default_rng(5)
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE docs_chunks (id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL,
            chunk_id TEXT NOT NULL, repo TEXT NOT NULL, path TEXT NOT NULL, doc_kind TEXT,
            heading_path TEXT, title TEXT, text TEXT NOT NULL, source_kind TEXT,
            source_ref TEXT, ts_hint INTEGER, content_hash TEXT, updated_at TEXT);
        CREATE VIRTUAL TABLE docs_fts USING fts5(text, title, heading_path, path, repo,
            doc_kind, content='docs_chunks', content_rowid='id');
        CREATE TABLE docs_embeddings (chunk_rowid INTEGER NOT NULL, model TEXT NOT NULL,
            dim INTEGER NOT NULL, vector BLOB NOT NULL, norm REAL NOT NULL, text_hash TEXT,
            created_at TEXT);""")
    for i in range(n):
        repo = REPOS[0] if i % 3 else REPOS[1 + (i // 3) % 2]
        p = f"{repo}/docs/page{i % 7}.md"
        words = " ".join(rng.choice(WORDS, size=int(rng.integers(3, 8))))
        con.execute("INSERT INTO docs_chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (i + 1, f"{repo}:{p}", f"{repo}:{p}#{i}", repo, p, "guide", "Guide",
                     f"Page {i}", words, "git", "abc", 1_700_000_000 + i, f"h{i}", "2026"))
        v = rng.normal(size=DIM).astype("<f4")
        con.execute("INSERT INTO docs_embeddings VALUES (?,?,?,?,?,?,?)",
                    (i + 1, "hash-v1", DIM, v.tobytes(), float(np.linalg.norm(v)), f"h{i}", "x"))
    con.execute("INSERT INTO docs_fts(rowid, text, title, heading_path, path, repo, doc_kind) "
                "SELECT id, text, title, heading_path, path, repo, doc_kind FROM docs_chunks")
    con.commit()
    con.close()
    return path


def _open_through_dialog(win, qtbot, location: str, table: str = ""):
    dlg = win.store_features.open_dialog()
    dlg.location.setText(location)
    dlg.table.setText(table)
    return dlg


def test_sqlite_docs_store_opens_through_the_dialog_and_runs_a_docs_preset(window, qtbot, ready,
                                                                         tmp_path):
    db = build_docs_sqlite(tmp_path / "docs.sqlite")
    before = db.read_bytes()
    vm, feats = window.vm, window.store_features
    dlg = _open_through_dialog(window, qtbot, str(db))
    assert dlg.docs_model.isEnabled() and not dlg.options_box.isEnabled()
    assert not dlg.version.isEnabled(), "a SQLite docs store has no versions"
    qtbot.mouseClick(dlg.open_button, LEFT)
    qtbot.waitUntil(lambda: not dlg.isVisible(), timeout=30_000)
    ready(vm)
    assert vm.store.uri == str(db) and vm.error is None
    assert [window.query_bar.table.itemText(i) for i in range(window.query_bar.table.count())] \
        == ["docs_chunks"], "tables come from Store.table_names(), which knows SQLite"
    assert feats.pinned_label.text() == "SQLite file"
    qtbot.waitUntil(feats.shape_notice.isVisible, timeout=10_000)
    assert "Docs engine (SQLite)" in feats.shape_notice.label.text()

    assert vm.question.preset == "docs-before-fix"  # the store's own: its shape's preset
    vm.put(preset="docs-pushdown", limit=8, scopes=["vault-agent"])
    vm.set_query("rotate signing keys")
    vm.jobs.wait_idle(60)
    assert vm.error is None
    want = engine_json(window)
    assert [st.ids for st in vm.trace.stages] == \
        [[c["id"] for c in st["candidates"]] for st in want["stages"]]
    assert vm.trace.final.ids and db.read_bytes() == before


def test_an_open_error_is_one_sentence_and_the_dialog_stays_open(window, qtbot, ready, tmp_path):
    vm = window.vm
    uri_before = vm.store.uri
    dlg = _open_through_dialog(window, qtbot, str(tmp_path / "nowhere"))
    qtbot.mouseClick(dlg.open_button, LEFT)
    qtbot.waitUntil(dlg.error.isVisible, timeout=10_000)
    assert dlg.isVisible() and dlg.open_button.isEnabled()
    assert dlg.error.text() == (f"No store at {tmp_path / 'nowhere'}: the folder does not exist; "
                                 f"still showing the demo store (memories).")
    assert window.error_bar.isVisible() and vm.store.uri == uri_before
    assert not (tmp_path / "nowhere").exists(), "opening never creates a folder"
    dlg.add_option("", "orphan")
    dlg.location.setText("s3://bucket/prefix")
    dlg.request_open()
    assert dlg.error.text() == "Storage option row 1 has a value but no name."


def _openclaw(folder: Path) -> Path:
    folder.mkdir(parents=True)
    n = 12
    vecs = np.random.default_rng(1).normal(size=(n, 8)).astype(np.float32)
    lancedb.connect(str(folder)).create_table("memories", pa.table({
        "id": [f"u{i}" for i in range(n)], "text": [f"fact {i}" for i in range(n)],
        "vector": vectors_column(vecs), "importance": [0.7] * n,
        "category": ["fact"] * n, "createdAt": [1.7e12 + i for i in range(n)],
        "agentId": ["main" if i % 2 else "helper" for i in range(n)],
        "scope": ["" if i % 3 == 0 else ("proj" if i % 3 == 1 else None) for i in range(n)]}))
    return folder


def test_default_openclaw_location_is_offered_and_its_preset_suggested(window, qtbot, ready,
                                                                       tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = _openclaw(tmp_path / "home" / ".openclaw" / "memory" / "lancedb")
    feats, vm = window.store_features, window.vm
    dlg = feats.open_dialog()
    assert dlg.known_list.count() == 1
    item = dlg.known_list.item(0)
    assert "OpenClaw" in item.text() and "preset openclaw" in item.text()
    dlg.known_list.itemClicked.emit(item)
    assert (dlg.location.text(), dlg.table.text()) == (str(folder), "memories")
    dlg.request_open()
    qtbot.waitUntil(lambda: not dlg.isVisible(), timeout=20_000)
    ready(vm)
    # the store starts from its own preset: the notice proposes nothing more
    assert vm.question.preset == "openclaw"
    assert vm.spec().title.startswith("OpenClaw memory-lancedb: memory_recall")
    assert window.query_bar.preset.currentData() == "openclaw"
    qtbot.waitUntil(feats.shape_notice.isVisible, timeout=10_000)
    assert "OpenClaw" in feats.shape_notice.label.text()
    assert "preset <b>openclaw</b>" not in feats.shape_notice.label.text()
    qb = window.query_bar
    qb.preset.setCurrentIndex(qb.preset.findData("openclaw-search-defaults"))
    qb.preset.activated.emit(qb.preset.currentIndex())
    ready(vm)
    assert vm.question.preset == "openclaw-search-defaults" and vm.question.set == {}


def test_hosted_embedder_without_a_key_says_so_and_query_by_example_still_works(
        window, qtbot, ready, monkeypatch):
    for var in ("OPENAI_API_KEY", "INSPECTOR_EMBED_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    vm, picker = window.vm, window.store_features.embedder
    assert picker.itemText(0).startswith("store's own") and picker.findText("hash-v1") >= 0
    before = vm.trace.stage("fetch").ids
    picker.setEditText("openai:text-embedding-3-small")
    picker.lineEdit().editingFinished.emit()
    vm.jobs.wait_idle(60)
    assert vm.question.embedder == "openai:text-embedding-3-small"
    msg = window.error_bar.label.text()
    assert "OPENAI_API_KEY" in msg  # said, with the routes that need no embedder
    assert "Query by a row's id…" in [b.text() for b in window.error_bar.routes]
    vm.use_as_query(before[3])
    vm.jobs.wait_idle(60)
    assert vm.error is None and vm.trace.query_source == f"example:{before[3]}"
    assert vm.trace.stage("fetch").ids
    picker.setCurrentIndex(0)
    picker.activated.emit(0)
    vm.jobs.wait_idle(60)
    assert vm.question.embedder is None and vm.error is None


@pytest.mark.parametrize("key,kept", [("aws_endpoint", True), ("region", True),
                                      ("allow_http", True), ("aws_access_key_id", False),
                                      ("aws_secret_access_key", False), ("api_key", False),
                                      ("aws_session_token", False), ("client_secret", False)])
def test_only_non_secret_options_are_remembered(key, kept):
    from inspector.core.stores.options import OpenOptions

    opts = OpenOptions.make({key: "v"}, version=3, docs_model="m")
    mem = opts.remembered()
    assert (key in mem["storage"]) == kept and "version" not in mem
    url = OpenOptions.make({"aws_endpoint": "http://user:pw@host:9000"}).remembered()
    assert url["storage"]["aws_endpoint"] == "http://host:9000"


def test_an_unparsable_object_store_uri_creates_nothing_from_the_window(window, qtbot, ready,
                                                                        tmp_path, monkeypatch):
    """LanceDB opens a URI it cannot parse as a local path and creates it (issue 21): File >
    Open and the open job both refuse it in one sentence, the secret masked, nothing made."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    vm, feats = window.vm, window.store_features
    uri_before = vm.store.uri
    bad = "s3://AKIAWINDOWKEY:wJalrWinSecret/XUtn@bucket/store"
    feats.open(bad, None, OpenOptions.make({}))
    vm.jobs.wait_idle()
    assert vm.error and "\n" not in vm.error and "s3://***@bucket/store" in vm.error
    assert "AKIAWINDOWKEY" not in vm.error and "wJalrWinSecret" not in vm.error
    assert vm.store.uri == uri_before and list(cwd.iterdir()) == []
    dlg = _open_through_dialog(window, qtbot, "az://a b/store")
    qtbot.mouseClick(dlg.open_button, LEFT)
    qtbot.waitUntil(dlg.error.isVisible, timeout=10_000)
    assert dlg.isVisible() and "not a valid URL" not in dlg.error.text()
    assert "'a b'" in dlg.error.text() and list(cwd.iterdir()) == []


def test_a_store_reproduced_by_a_pipeline_of_stages_offers_it_and_enters_its_view(window,
                                                                                  qtbot):
    """CrewAI's (like memory-lancedb-pro's) preset is a pipeline of stages the window runs:
    the notice names the system and its Use button opens that pipeline's view."""
    from inspector.qt.stores.store_jobs import ShapeInfo

    feats = window.store_features
    feats._shaped(ShapeInfo("crewai", "CrewAI Memory (LanceDBStorage)", "crewai-memory",
                            ("recall(depth='shallow')",)))
    assert "CrewAI" in feats.shape_notice.label.text()
    button = feats.shape_notice.button(0)
    assert button.text() == "Use crewai-memory"
    qtbot.mouseClick(button, LEFT)
    assert window.vm.question.preset == "crewai-memory"
    assert window.query_bar.preset.currentData() == "crewai-memory"
    assert not feats.shape_notice.isVisible()


def test_choosing_the_proposed_preset_yourself_retires_the_notice(window):
    from inspector.qt.stores.store_jobs import ShapeInfo

    feats, qb = window.store_features, window.query_bar
    feats._shaped(ShapeInfo("crewai", "CrewAI Memory (LanceDBStorage)", "crewai-memory", ()))
    assert feats.shape_notice.isVisible()
    qb.preset.setCurrentIndex(qb.preset.findData("crewai-memory"))
    qb.preset.activated.emit(qb.preset.currentIndex())
    assert not feats.shape_notice.isVisible()
    qb.preset.setCurrentIndex(qb.preset.findData("docs-before-fix"))
    qb.preset.activated.emit(qb.preset.currentIndex())
