"""The docs engine's SQLite store: opened read-only, searched through a cached LanceDB working
copy whose rankings equal the engine's own (brute-force cosine, FTS5 bm25, RRF k = 60)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.docs_fts5 import fts5_match
from inspector.core.stores.docs_source import is_sqlite_file
from inspector.core.stores.docs_sqlite import DocsStore
from inspector.core.stores.opening import describe_tables, open_store
from inspector.core.stores.shapes import detect_shape
from tests.askkit import ask
from tests.storekit import DOCS_DIM as DIM
from tests.storekit import DOCS_WORDS as WORDS
from tests.storekit import build_docs_db


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def docs_db(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    folder = tmp_path / "docs"
    folder.mkdir()
    db = folder / "docs.sqlite"
    return db, build_docs_db(db)


# --- the docs engine, computed independently on the same rows ---------------------------------

def engine_vector_leg(path: Path, q: np.ndarray, k: int, repos: tuple[str, ...] | None
                      ) -> list[int]:
    """Brute-force cosine over docs_embeddings, best first (ties by rowid)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT e.chunk_rowid, e.vector, e.norm, c.repo FROM docs_embeddings e "
                       "JOIN docs_chunks c ON c.id = e.chunk_rowid").fetchall()
    con.close()
    scored = []
    for rid, blob, norm, repo in rows:
        if repos is not None and repo not in repos:
            continue
        v = np.frombuffer(blob, "<f4").astype(np.float64)
        scored.append((-(v @ q) / (norm * np.linalg.norm(q)), rid))
    return [rid for _, rid in sorted(scored)[:k]]


def engine_fts_leg(path: Path, text: str, k: int, repos: tuple[str, ...] | None) -> list[int]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    match = " OR ".join(f'"{w}"' for w in text.split())
    sql = ("SELECT f.rowid FROM docs_fts f JOIN docs_chunks c ON c.id = f.rowid "
           "WHERE docs_fts MATCH ?")
    args: list = [match]
    if repos is not None:
        sql += f" AND c.repo IN ({','.join('?' * len(repos))})"
        args += list(repos)
    sql += " ORDER BY bm25(docs_fts), f.rowid LIMIT ?"
    out = [r for (r,) in con.execute(sql, [*args, k])]
    con.close()
    return out


def engine_search(path: Path, q: np.ndarray, text: str, limit: int, scope: str, *, pool: int,
                  leg_k: int, pushdown: bool) -> list[int]:
    """RRF k = 60 (ties by id), cut to the pool, then the repo_prefix post-filter, then limit."""
    repos = (scope,) if pushdown else None
    fused: dict[int, float] = {}
    for leg in (engine_vector_leg(path, q, leg_k, repos),
                engine_fts_leg(path, text, leg_k, repos)):
        for r, rid in enumerate(leg):
            fused[rid] = fused.get(rid, 0.0) + 1.0 / (60 + r + 1)
    ranked = sorted(fused, key=lambda rid: (-fused[rid], rid))[:pool]
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    where = dict(con.execute("SELECT id, repo || '|' || path FROM docs_chunks"))
    con.close()

    def in_scope(rid: int) -> bool:
        repo, p = where[rid].split("|", 1)
        return repo.lower() == scope or p.lower().startswith(scope + "/")

    return [rid for rid in ranked if in_scope(rid)][:limit]


# --- tests -----------------------------------------------------------------------------------

def test_sqlite_is_detected_by_its_header(docs_db, tmp_path):
    db, _ = docs_db
    assert is_sqlite_file(db)
    fake = tmp_path / "fake.sqlite"
    fake.write_text("not a database")
    assert not is_sqlite_file(fake) and not is_sqlite_file(tmp_path)


def test_docs_store_opens_with_docs_roles_and_leaves_the_file_byte_identical(docs_db):
    db, _ = docs_db
    before, listing = _sha(db), sorted(os.listdir(db.parent))
    store = open_store(str(db))
    assert isinstance(store, DocsStore)
    r = store.roles
    assert (r.id, r.text, r.vector, r.repo, r.path, r.category) == (
        "id", "text", "vector", "repo", "path", "doc_kind")
    assert store.rows == 240 and store.dim == DIM and store.model == "hash-v1"
    assert store.table_names() == ["docs_chunks"]
    assert detect_shape(store).preset == "docs-before-fix"
    assert store.embedder["name"] == "hash-v1"
    assert any("no 'hash-v1' embedding" in n for n in store.meta["notes"])
    q = np.random.default_rng(9).normal(size=DIM)
    ask(store, preset="docs-pushdown", text="rotate signing keys", vector=q.astype(np.float32),
        limit=10, scope="vault-agent")
    assert describe_tables(str(db))[0].fts_indexed
    assert _sha(db) == before and sorted(os.listdir(db.parent)) == listing


@pytest.mark.parametrize("preset,pushdown", [("docs-before-fix", False),
                                             ("docs-overfetch", False),
                                             ("docs-pushdown", True)])
@pytest.mark.parametrize("scope", ["vault-agent", "billing-api", "mixed-case"])
def test_docs_presets_reproduce_the_engine_ranking(docs_db, preset, pushdown, scope):
    db, data = docs_db
    store = open_store(str(db))
    rng = np.random.default_rng(len(scope))
    for trial in range(3):
        q = rng.normal(size=DIM)
        text = " ".join(rng.choice(WORDS, size=3))
        trace = ask(store, preset=preset, text=text, vector=q.astype(np.float32), limit=10,
                    scope=scope).trace
        # the engine's depths: legs k = 20 and the fused list cut to the limit before the fix;
        # with a scope, min(50, max(limit*5, fts_k, vec_k)) for the pool and both legs after
        pool, leg_k = (10, 20) if preset == "docs-before-fix" else (50, 50)
        want = engine_search(db, q.astype(np.float32).astype(np.float64), text, 10, scope,
                             pool=pool, leg_k=leg_k, pushdown=pushdown)
        assert trace.final.ids == [str(x) for x in want], (preset, scope, trial)
        facts = trace.stage("fetch").facts
        assert (facts["depth"], facts["vec_k"], facts["fts_k"]) == (pool, leg_k, leg_k)


def test_vector_leg_equals_brute_force_cosine_for_l2_and_cosine(docs_db):
    db, _ = docs_db
    store = open_store(str(db))
    q = np.random.default_rng(1).normal(size=DIM).astype(np.float32)
    want = engine_vector_leg(db, q.astype(np.float64), 30, None)
    for distance in ("l2", "cosine"):
        got = ask(store, preset="docs-before-fix", vector=q, limit=30, mode="vector",
                  distance=distance).trace
        assert got.stage("fetch").ids == [str(x) for x in want]


def test_full_text_leg_is_the_sources_fts5_bm25(docs_db):
    db, _ = docs_db
    store = open_store(str(db))
    p = {"preset": "docs-before-fix", "limit": 25, "mode": "fts"}
    trace = ask(store, text="redis cache quota", **p).trace
    assert trace.stage("fetch").ids == [str(x) for x in engine_fts_leg(
        db, "redis cache quota", 25, None)]
    assert fts5_match('say "hi" to: rotate-keys?') == '"say" OR "hi" OR "to" OR "rotate" OR "keys"'
    empty = ask(store, text="?!", **p).trace
    assert empty.stage("fetch").rows == ()


def test_working_copy_is_cached_and_rebuilt_when_the_file_changes(docs_db, tmp_path):
    db, _ = docs_db
    first = open_store(str(db))
    again = open_store(str(db))
    assert again.meta == first.meta and not again.has_newer()
    con = sqlite3.connect(db)
    con.execute("UPDATE docs_chunks SET title = 'changed' WHERE id = 1")
    con.commit()
    con.close()
    os.utime(db, ns=(os.stat(db).st_atime_ns, os.stat(db).st_mtime_ns + 10**9))
    assert first.has_newer()
    fresh = first.reopen()
    assert not fresh.has_newer()
    got = fresh.table.search().where("id = 1").select(["title"]).to_arrow()
    assert got.column(0).to_pylist() == ["changed"]


def test_embedding_models_are_chosen_explicitly_or_by_count(tmp_path):
    db = tmp_path / "two.sqlite"
    build_docs_db(db, n=60, skip_every=0)
    con = sqlite3.connect(db)
    v = np.ones(8, "<f4")
    con.execute("INSERT INTO docs_embeddings VALUES (1, 'tiny', 8, ?, ?, 'h', 'x')",
                (v.tobytes(), float(np.linalg.norm(v))))
    con.commit()
    con.close()
    store = open_store(str(db))
    assert store.model == "hash-v1" and any("2 models" in n for n in store.meta["notes"])
    tiny = open_store(str(db), embedding_model="tiny")
    assert tiny.dim == 8
    with pytest.raises(InspectorError, match="no embeddings from model 'nope'; models: hash-v1"):
        open_store(str(db), embedding_model="nope")


def test_a_sqlite_file_that_is_not_a_docs_store_is_one_clear_error(tmp_path):
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    with pytest.raises(InspectorError, match="not a docs store: it has no docs_chunks table"):
        open_store(str(db))
    with pytest.raises(InspectorError, match="no table versions"):
        open_store(str(db), version=1)
