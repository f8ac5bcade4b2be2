"""Every input file is read through one bounded helper (issue 21): a vector, judgments, query
set, checks or scope-map file that is a named pipe (opening it blocked forever), a device
(/dev/zero was read until MemoryError), a folder or a file past 64 MiB is one line, exit 2,
at once. The pipe and device cases run in child processes with a time limit and a 4 GiB
address space, so the unfixed behaviour fails the test instead of hanging or eating memory."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.core.jsonio import MAX_INPUT_BYTES
from tests.storekit import write_tuning_store

VEC = json.dumps([0.5] * 8)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tuning_store(tmp_path_factory.mktemp("inputs") / "s", n=60, dim=8)


def _commands(store: Path, f: str) -> dict[str, list[str]]:
    s = str(store)
    return {
        "vector": ["query", s, "--vector", f"@{f}"],
        "queries": ["sweep", s, "--queries", f, "--grid-overfetch", "1", "--grid-blend", "0"],
        "judgments": ["sweep", s, "--vector", VEC, "--judgments", f, "--grid-overfetch", "1",
                      "--grid-blend", "0"],
        "checks": ["check", f, "--store", s],
        "scope-map": ["query", s, "--vector", VEC, "--scope", "repo1", "--scope-strategy",
                      "map", "--scope-map", f],
    }


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


_CHILD = """
import contextlib, io, json, sys
from inspector.cli.main import main
for kind, name, argv in json.loads(sys.argv[1]):
    print(json.dumps(["start", kind, name]), flush=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    print(json.dumps(["done", kind, name, code, err.getvalue()]), flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                    reason="needs named pipes and /dev/zero")
def test_a_pipe_or_a_device_is_refused_before_it_is_opened(store, tmp_path):
    """All cases run one after another in one child process (one interpreter start, so a
    loaded machine does not eat the time limit); the child says which case it starts, so a
    case that hangs is named when the limit kills it."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    cases = [(kind, name, argv)
             for source, name in ((str(fifo), "a named pipe"), ("/dev/zero", "a device"))
             for kind, argv in _commands(store, source).items()]
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(cases)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_limit_memory)
    try:
        out, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("[")]
    done = {(x[1], x[2]): x[3:] for x in lines if x[0] == "done"}
    failures = [f"{k} from {n}: never finished" for k, n, _ in cases if (k, n) not in done]
    for (kind, name), (code, text) in done.items():
        if code != 2 or text.count("\n") != 1 or f"is {name}, not a file" not in text:
            failures.append(f"{kind} from {name}: exit {code}, {text[-200:]!r}")
    assert not failures, (failures, err[-500:])


@pytest.mark.parametrize("what", ["folder", "large"])
def test_a_folder_or_a_file_past_the_bound_is_one_line(store, tmp_path, capsys, what):
    if what == "folder":
        f = tmp_path / "dir.json"
        f.mkdir()
        expect = "is a folder, not a file"
    else:
        f = tmp_path / "big.json"
        with open(f, "wb") as fh:  # sparse: the size is real, the disk use is not
            fh.truncate(MAX_INPUT_BYTES + 1)
        expect = f"at most {MAX_INPUT_BYTES:,} are read"
    for kind, argv in _commands(store, str(f)).items():
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and expect in err, (kind, err)


def test_files_within_the_bound_are_still_read(store, tmp_path, capsys):
    f = tmp_path / "v.json"
    f.write_text(VEC)
    assert main(["query", str(store), "--vector", f"@{f}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stages"]


@pytest.mark.parametrize(("declared", "expect"), [
    (1_000_000, "declare dimension 1,000,000; the inspector reads 1 to 65,536"),
    (60_000, "but none of its 226 vectors is that long (they hold 96 bytes)"),
    ("abc", "declare the dimension 'abc', not a whole number")])
def test_a_docs_file_declaring_a_wrong_dimension_allocates_nothing(tmp_path, capsys, declared,
                                                                   expect):
    """Issue 21: a docs file declaring dimension 1,000,000 (its vectors hold 24) made `tables`
    allocate a 240 x 1,000,000 matrix (2.5 GB resident). The declared size is checked against
    the stored vectors first."""
    import sqlite3
    import tracemalloc

    from tests.storekit import build_docs_db

    db = tmp_path / "docs.sqlite"
    build_docs_db(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE docs_embeddings SET dim = ?", (declared,))
    con.commit()
    con.close()
    before = db.read_bytes()
    tracemalloc.start()
    try:
        code = main(["tables", str(db)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err
    assert peak < 64 << 20, f"peak {peak:,} bytes"
    assert code == 2 and err.count("\n") == 1 and expect in err, err
    assert db.read_bytes() == before


def _every_reader(store: Path, f: str, tmp_path: Path) -> dict[str, list[str]]:
    """Every command-line input file: the five above, pipeline and system files, and a
    Generative Agents memory stream."""
    ga = tmp_path / "ga"
    ga.mkdir(exist_ok=True)
    for name in ("nodes.json", "embeddings.json"):
        (ga / name).write_text(Path(f).read_text())
    return {**_commands(store, f),
            "pipeline": ["query", str(store), "--text", "x", "--pipeline", f],
            "system-config": ["query", str(store), "--text", "x", "--preset",
                              "memory-lancedb-pro", "--system-config", f],
            "memory-stream": ["import", "generative-agents", str(ga), str(tmp_path / "new")]}


@pytest.fixture
def stalled(monkeypatch: pytest.MonkeyPatch):
    """Every read(2) of an input file blocks on a real pipe nobody writes to, as on a hung
    network mount; the reader gives up after a (lowered) timeout. Closing the pipe at the end
    releases the abandoned reader threads."""
    from inspector.core import jsonio

    r, w = os.pipe()
    calls: list[int] = []

    def stall(fd: int, n: int) -> bytes:
        calls.append(fd)
        return os.read(r, n)

    # raising=False: on a reader without these the test runs, and fails on its outcome
    monkeypatch.setattr(jsonio, "_read_chunk", stall, raising=False)
    monkeypatch.setattr(jsonio, "READ_TIMEOUT_S", 0.05, raising=False)
    yield calls
    os.close(w)


def test_a_read_that_stalls_is_given_up_on_in_one_line(store, tmp_path, capsys, stalled):
    """Issue 21: every input file is read with a timeout. What is asserted is the outcome of
    a read that never returns (no wall-clock limit on the test itself)."""
    f = tmp_path / "in.json"
    f.write_text(VEC)
    for kind, argv in _every_reader(store, str(f), tmp_path).items():
        before = len(stalled)
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, (kind, err)
        assert "was not read within 0.05 s" in err and str(tmp_path) in err, (kind, err)
        assert len(stalled) > before, f"{kind} is not read through jsonio.read_input"
    assert not (tmp_path / "new").exists()
    from inspector.core.errors import InspectorError
    from inspector.core.evidence.receipt import load

    with pytest.raises(InspectorError, match="was not read within"):  # a receipt (the window)
        load(f)


@pytest.mark.parametrize("kind", ["queries", "judgments", "pipeline", "system-config"])
def test_a_file_nested_too_deeply_is_one_line(store, tmp_path, capsys, kind):
    """Found by the fuzz suite: a query set nested 2,000 deep "failed unexpectedly"
    (RecursionError); every JSON input file now says it nests too deeply."""
    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    code = main(_every_reader(store, str(f), tmp_path)[kind])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "nests too deeply" in err, err
