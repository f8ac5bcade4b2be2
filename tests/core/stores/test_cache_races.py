"""The cache under concurrency (issue 21): builds of one copy from several processes and
threads make one copy and never fail; a copy open in one process survives another process's
prune; a failed build leaves nothing, and prune removes what a dead builder left.

Processes and threads are lined up with barriers (a socket the test releases, a
threading.Barrier) and driven through pipes: no test waits on a clock."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.fts import fts_table
from inspector.core.stores.opening import open_store
from inspector.core.stores.safety import cache
from tests.askkit import final_ids
from tests.storekit import build_docs_db, write_random_store

ROOT = Path(__file__).resolve().parents[3]
WORKERS = 4

# Runs `python -m inspector ARGS...` after patching two cache functions: the first lookup of a
# copy waits until the test has released every process (a socket barrier), and each finished
# build appends one line to BUILDS. Everything else is the real command.
_CLI = textwrap.dedent("""
    import os, runpy, socket, sys
    port, builds, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    from inspector.core.stores.safety import cache
    entry, write_ready, waited = cache.entry, cache.write_ready, []

    def lined_up(kind, identity):
        if not waited:
            waited.append(1)
            with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
                s.sendall(b"r")
                assert s.recv(1) == b"g"
        return entry(kind, identity)

    def counted(tmp, identity, **extra):
        with open(builds, "a") as fh:
            fh.write(f"{os.getpid()}\\n")
        return write_ready(tmp, identity, **extra)

    cache.entry, cache.write_ready = lined_up, counted
    sys.argv = ["inspector", *args]
    runpy.run_module("inspector", run_name="__main__")
""")

# Holds a private copy open: opens the store, searches it, says "open", waits for a line on
# stdin, searches again and prints both answers.
_HOLDER = textwrap.dedent("""
    import json, sys
    from inspector.core.stores.fts import fts_table
    from inspector.core.stores.opening import open_store
    from tests.askkit import final_ids
    store = open_store(sys.argv[1])
    first = final_ids(store, text="note keys", mode="fts", limit=5)
    if getattr(store, "source", None) is None:
        where = fts_table(store)[1]
    else:
        from inspector.core.stores.docs_sqlite import copy_identity
        from inspector.core.stores.safety import cache
        where = str(cache.entry("sqlite", copy_identity(store.source, store.model)))
    print(json.dumps({"where": where}), flush=True)
    sys.stdin.readline()
    again = final_ids(store, text="note keys", mode="fts", limit=5)
    print(json.dumps({"first": [str(x) for x in first], "again": [str(x) for x in again]}),
          flush=True)
""")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@contextlib.contextmanager
def _release_when_all_arrive(server: socket.socket, n: int) -> Iterator[None]:
    """Accept n processes at the barrier, then let them all go at once."""
    conns = []
    try:
        for _ in range(n):
            conn, _addr = server.accept()
            assert conn.recv(1) == b"r"
            conns.append(conn)
        for conn in conns:
            conn.sendall(b"g")
        yield
    finally:
        for conn in conns:
            conn.close()


def _fts_copies() -> list[str]:
    base = cache.cache_root() / "fts"
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def _leftovers() -> list[str]:
    """Anything in the cache that is neither a finished copy nor its lock/lease file."""
    root = cache.cache_root()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".tmp" in p.name)


def _docs_store(folder: Path) -> Path:
    folder.mkdir()
    db = folder / "docs.sqlite"
    build_docs_db(db, n=120)
    return db


# ---- 1. concurrent builds ------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["lancedb", "docs"])
def test_cold_cache_queries_in_several_processes_build_one_copy_and_all_succeed(
        tmp_path: Path, kind: str) -> None:
    store = (write_random_store(tmp_path / "store", n=2000) if kind == "lancedb"
             else _docs_store(tmp_path / "docs"))
    builds = tmp_path / "builds.log"
    args = ["query", str(store), "--text", "note keys rotate", "--mode", "fts", "--json"]
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(WORKERS)
        server.settimeout(120)
        port = server.getsockname()[1]
        procs = [subprocess.Popen([sys.executable, "-c", _CLI, str(port), str(builds), *args],
                                  env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(WORKERS)]
        try:
            with _release_when_all_arrive(server, WORKERS):
                outs = [p.communicate(timeout=300) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
    errors = [err.strip()[-400:] for p, (_out, err) in zip(procs, outs, strict=True)
              if p.returncode]
    assert errors == []
    finals = [[c["id"] for c in json.loads(out)["stages"][-1]["candidates"]] for out, _ in outs]
    assert all(f == finals[0] for f in finals)
    assert len(builds.read_text().split()) == 1  # one process built, the others reused it
    if kind == "lancedb":
        assert len(_fts_copies()) == 1
    assert _leftovers() == []


@pytest.mark.parametrize("kind", ["lancedb", "docs"])
def test_cold_cache_queries_in_several_threads_build_one_copy_and_all_succeed(
        tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = (write_random_store(tmp_path / "store", n=2000) if kind == "lancedb"
             else _docs_store(tmp_path / "docs"))
    barrier = threading.Barrier(WORKERS, timeout=120)
    seen = threading.local()
    built: list[int] = []
    entry, write_ready = cache.entry, cache.write_ready

    def lined_up(kind_: str, identity: dict[str, Any]) -> Path:
        if not getattr(seen, "waited", False):
            seen.waited = True
            barrier.wait()
        return entry(kind_, identity)

    def counted(tmp: Path, identity: dict[str, Any], **extra: Any) -> None:
        built.append(threading.get_ident())
        write_ready(tmp, identity, **extra)

    monkeypatch.setattr(cache, "entry", lined_up)
    monkeypatch.setattr(cache, "write_ready", counted)
    answers: list[Any] = [None] * WORKERS

    def work(i: int) -> None:
        try:
            s = open_store(str(store))
            answers[i] = final_ids(s, text="note keys rotate", mode="fts", limit=8)
        except BaseException as exc:  # noqa: BLE001 - reported below
            answers[i] = exc

    threads = [threading.Thread(target=work, args=(i,)) for i in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a for a in answers if isinstance(a, BaseException)] == []
    assert all(a == answers[0] for a in answers) and answers[0]
    assert len(built) == 1
    assert _leftovers() == []


# ---- 2. a copy in use survives another process's prune --------------------------------------

@pytest.mark.parametrize("kind", ["lancedb", "docs"])
def test_a_copy_open_in_another_process_survives_a_prune(tmp_path: Path, kind: str) -> None:
    store = (write_random_store(tmp_path / "store", n=500) if kind == "lancedb"
             else _docs_store(tmp_path / "docs"))
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(store)], env=_env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        line = holder.stdout.readline()
        assert line, holder.communicate(timeout=60)[1][-800:]
        where = Path(json.loads(line)["where"])
        assert cache.read_ready(where) is not None
        removed = cache.prune(limit=0)  # everything unused must go; the held copy stays
        assert where not in removed and cache.read_ready(where) is not None
        out, err = holder.communicate("go\n", timeout=120)
    finally:
        if holder.poll() is None:
            holder.kill()
    assert holder.returncode == 0, err[-800:]
    answer = json.loads(out)
    assert answer["again"] == answer["first"] and answer["first"]
    assert where in cache.prune(limit=0)  # no longer in use: pruned like any other copy
    assert not where.exists()


def test_a_copy_open_in_this_process_survives_a_prune(random_store: Callable[..., Path]) -> None:
    store = open_store(str(random_store(n=200)))
    want = final_ids(store, text="note keys", mode="fts", limit=5)
    where = Path(fts_table(store)[1])
    cache.prune(limit=0)
    assert cache.read_ready(where) is not None
    fresh = open_store(str(store.uri))
    assert final_ids(fresh, text="note keys", mode="fts", limit=5) == want


# ---- 3. failed builds leave nothing; prune removes what a dead builder left -----------------

def _boom(*_a: Any, **_k: Any) -> Any:
    raise RuntimeError("disk full (simulated)")


def test_a_failed_full_text_build_leaves_nothing(random_store: Callable[..., Path],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import lancedb.index

    store = open_store(str(random_store(n=100)))
    monkeypatch.setattr(lancedb.index, "FTS", _boom)  # fails after rows are written
    with pytest.raises(InspectorError, match="disk full"):
        fts_table(store)
    assert _leftovers() == [] and list((cache.cache_root() / "fts").iterdir()) == []
    monkeypatch.undo()
    assert final_ids(store, text="note", mode="fts", limit=3)


def test_a_failed_docs_build_leaves_nothing(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.core.stores import docs_sqlite

    db = _docs_store(tmp_path / "docs")
    monkeypatch.setattr(docs_sqlite, "_vectors", _boom)  # fails while the rows are copied
    with pytest.raises(InspectorError, match="disk full"):
        open_store(str(db))
    assert _leftovers() == [] and list((cache.cache_root() / "sqlite").iterdir()) == []
    monkeypatch.undo()
    assert open_store(str(db)).rows == 120


def _dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_prune_removes_build_folders_left_by_a_dead_process(tmp_path: Path) -> None:
    base = cache.cache_root() / "fts"
    base.mkdir(parents=True)
    dead = base / f"0123abcd.tmp{_dead_pid()}"  # a builder killed mid-build
    (dead / "fts.lance").mkdir(parents=True)
    (dead / "fts.lance" / "data").write_bytes(b"x" * 100)
    for suffix in (".lock", ".lease"):
        (base / f"0123abcd{suffix}").touch()
    with subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                          stdin=subprocess.PIPE) as alive_proc:
        alive = base / f"4567cdef.tmp{alive_proc.pid}"  # a build that may still be running
        alive.mkdir()
        try:
            removed = cache.prune()
            assert dead in removed and not dead.exists()
            assert alive.exists()
            assert sorted(p.name for p in base.iterdir()) == [alive.name]
        finally:
            alive_proc.communicate(b"")
