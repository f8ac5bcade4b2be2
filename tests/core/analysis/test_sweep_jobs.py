"""A query set's sweep shared with helper processes (`sweep_jobs`, `iter_sweep(jobs=N)`, `inspector
sweep --jobs N`) gives exactly what one process gives, query by query, in the same order: real
helper processes open the same table at the same version, and the answers are compared whole.
A helper that fails or dies leaves its queries to this process; a caller that stops early
stops the helpers; the store is never written and nothing lands in the working folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.analysis import grid as G
from inspector.core.analysis import sweep as SW
from inspector.core.analysis import sweep_jobs as J
from inspector.core.analysis.judgments import Judgments
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.stores.opening import open_store
from tests.storekit import build_docs_db, snapshot, vectors_column, write_fragments

REPOS = ("repo0", "repo1", "repo2")
ROOT = Path(__file__).resolve().parents[3]


def _rows(start: int, n: int, rng: np.random.Generator) -> pa.Table:
    vecs = rng.normal(size=(n, 16)).astype(np.float32)
    vecs[::9] = vecs[0]  # exact duplicates: ties by row id
    return pa.table({
        "id": [f"m{i:04d}" for i in range(start, start + n)],
        "text": [f"memory {i}" for i in range(start, start + n)],
        "importance": pa.array([None if i % 7 == 0 else float(rng.uniform(0, 1))
                                for i in range(start, start + n)], pa.float64()),
        "repo": [REPOS[i % 3] if i % 5 else REPOS[0] for i in range(start, start + n)],
        "vector": vectors_column(vecs)})


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(11)
    return write_fragments(tmp_path_factory.mktemp("sweepjobs") / "db",
                           [_rows(0, 160, rng), _rows(160, 140, rng)], "id = 'm0299'")


def _examples(n: int) -> Judgments:
    out = Judgments()
    for i in range(n):
        rid = f"m{(i * 37 + 5) % 300:04d}"
        out = out.with_query(f"like {rid}", REPOS[i % 3], vector_of=rid)
        if i % 2:
            out = out.add(f"like {rid}", REPOS[i % 3], f"m{(i * 13 + 1) % 300:04d}")
    return out


def _setup(path: Path, n: int = 9) -> tuple[Any, list[SW.Case], list[G.Axis]]:
    store = open_store(str(path))
    base = Question(store=str(path), preset="lancedb", limit=4,
                    set={"scope_rule.strategy": "column", "scope_rule.column": "repo",
                         "fetch.cap": 0})
    axes = G.parse_grid(resolve(base)[0], ["fetch.overfetch=1,3,9", "blend.weight=0,0.5,1"])
    return store, SW.cases_from_judgments(base, _examples(n), store), axes


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The helpers started (their processes) and the queries swept in this process."""
    seen: dict[str, list[Any]] = {"helpers": [], "here": []}
    start, case = J._start, SW.sweep_case

    def started(*a: Any) -> Any:
        got = start(*a)
        seen["helpers"].append(got[0])
        return got

    def here(store: Any, c: SW.Case, *a: Any, **k: Any) -> Any:
        seen["here"].append(c.name)
        return case(store, c, *a, **k)

    monkeypatch.setattr(J, "_start", started)
    monkeypatch.setattr(SW, "sweep_case", here)
    monkeypatch.setattr(J, "BLOCK", 2)  # every process a share of these few queries
    # these few queries are swept here before a helper's interpreter is up: wait for it
    # (test_a_helper_slower_to_start_than_this_process_sweeps_is_stopped does not)
    monkeypatch.setattr(J, "STOP_UNSTARTED", False)
    return seen


def _alone(store: Any, cases: list[SW.Case], axes: list[G.Axis],
           counted: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The sweep in this process alone, as JSON; the count of queries swept here reset."""
    got = [q.to_json() for q in SW.iter_sweep(store, cases, axes, jobs=1)]
    assert counted["here"] == [c.name for c in cases] and not counted["helpers"]
    counted["here"].clear()
    return got


def test_helpers_sweep_their_queries_as_this_process_would(
        store_path: Path, counted: dict[str, list[Any]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = snapshot(store_path)
    store, cases, axes = _setup(store_path)
    alone = _alone(store, cases, axes, counted)
    shared = [q.to_json() for q in SW.iter_sweep(store, cases, axes, jobs=3)]
    assert shared == alone  # every cell, truth, metric, note and safe depth, in order
    assert len({json.dumps(q["values"], sort_keys=True) for q in alone}) > 1  # they differ
    # this process swept its share; two real helpers the rest, and both have ended
    assert counted["here"] == [cases[i].name for i in J.shares(len(cases), 3)[0]]
    assert len(counted["helpers"]) == 2
    assert all(p.poll() == 0 for p in counted["helpers"])
    assert snapshot(store_path) == before
    assert list(tmp_path.iterdir()) == []


def test_helpers_run_this_engine_whatever_folder_they_start_in(
        store_path: Path, counted: dict[str, list[Any]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Started where a folder named `inspector` lies (another checkout, a user's folder), a
    helper still imports the engine this process runs, and answers."""
    decoy = tmp_path / "inspector"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise ImportError('not the engine')\n")
    monkeypatch.chdir(tmp_path)
    store, cases, axes = _setup(store_path, 6)
    alone = _alone(store, cases, axes, counted)
    shared = [q.to_json() for q in SW.iter_sweep(store, cases, axes, jobs=2)]
    assert shared == alone
    mine, _ = J.shares(len(cases), 2)
    assert counted["here"] == [cases[i].name for i in mine]  # the helper answered its own
    assert counted["helpers"][0].wait(30) == 0


@pytest.mark.parametrize("how", ["fails", "killed", "unstartable"])
def test_a_helper_that_fails_or_dies_leaves_its_queries_here(
        store_path: Path, counted: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch,
        how: str) -> None:
    """fails: it cannot open the table (told a version it lacks), says so and ends (1);
    killed: it is killed as it starts, saying nothing; unstartable: no process may be started
    (a sandbox). Each way this process sweeps its queries, and the answers are the one
    process's."""
    store, cases, axes = _setup(store_path, 6)
    alone = _alone(store, cases, axes, counted)
    if how == "unstartable":
        def refused(*a: Any, **k: Any) -> Any:
            raise PermissionError("no new processes here")

        monkeypatch.setattr(J.subprocess, "Popen", refused)
        shared = [q.to_json() for q in SW.iter_sweep(store, cases, axes, jobs=2)]
        assert shared == alone and not counted["helpers"]
        assert counted["here"] == [cases[i].name for i in sum(J.shares(len(cases), 2), [])]
        return
    if how == "fails":
        real = J.reopen_args
        monkeypatch.setattr(J, "reopen_args", lambda s: {**real(s), "version": 999})
    else:
        start = J._start

        def killed(*a: Any) -> Any:
            proc, answers = start(*a)
            proc.kill()
            return proc, answers

        monkeypatch.setattr(J, "_start", killed)
    shared = [q.to_json() for q in SW.iter_sweep(store, cases, axes, jobs=2)]
    assert shared == alone
    mine, theirs = J.shares(len(cases), 2)
    assert counted["here"] == [cases[i].name for i in mine + theirs]  # its share too
    assert counted["helpers"][0].wait(30) == (1 if how == "fails" else -9)


def test_helpers_read_the_version_this_process_pinned(
        store_path: Path, counted: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    """Opened at version 2 (before m0299 was deleted and after the second fragment was
    added), the helpers sweep version 2 too: their answers are this process's at version 2,
    which differ from the latest version's."""
    old = open_store(str(store_path), version=2)
    assert old.version == 2 and old.rows == open_store(str(store_path)).rows + 1
    base = Question(store=str(store_path), preset="lancedb", limit=4,
                    set={"scope_rule.strategy": "column", "scope_rule.column": "repo",
                         "fetch.cap": 0})
    axes = G.parse_grid(resolve(base)[0], ["fetch.overfetch=1,9", "blend.weight=0,1"])
    judged = Judgments()
    for i in range(4):  # the deleted row's own vector, in its repo: it is its own nearest
        judged = judged.with_query(f"like m0299, #{i}", "repo2", vector_of="m0299")
    cases = SW.cases_from_judgments(base, judged, old)
    alone = [q.to_json() for q in SW.iter_sweep(old, cases, axes, jobs=1)]
    latest = open_store(str(store_path))
    now = [q.to_json() for q in SW.iter_sweep(latest, cases, axes, jobs=1)]
    assert all(a != b for a, b in zip(now, alone, strict=True))  # each answers m0299 at 2
    monkeypatch.setattr(J, "BLOCK", 1)
    counted["here"].clear()
    shared = [q.to_json() for q in SW.iter_sweep(old, cases, axes, jobs=4)]
    assert shared == alone
    assert len(counted["helpers"]) == 3  # each swept one of them
    assert counted["here"] == [cases[0].name]


def test_answers_reach_the_caller_in_order_as_soon_as_they_are_contiguous(
        store_path: Path, counted: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    """A helper whose answers are all in before this process's second block: the caller gets
    them right after this process's first block, not after its whole share (progress moves
    at both processes' pace), and in the queries' order."""
    import queue
    import subprocess

    store, cases, axes = _setup(store_path, 9)
    alone = _alone(store, cases, axes, counted)

    def ready(args: Any, some: list[SW.Case], *a: Any) -> Any:
        answers: queue.Queue[Any] = queue.Queue()
        for one in SW.iter_sweep(open_store(args["uri"]), some, axes, jobs=1):
            answers.put(("one", one))
        answers.put(("done", None))
        return subprocess.Popen([sys.executable, "-c", "pass"]), answers

    monkeypatch.setattr(J, "_start", ready)
    mine, theirs = J.shares(len(cases), 2)
    assert mine == [0, 1, 4, 5, 8]
    seen = []  # each answer, and how many of its own queries this process had swept then
    for one in SW.iter_sweep(store, cases, axes, jobs=2):
        seen.append((one.to_json(), len(counted["here"]) - len(theirs)))
    assert [q for q, _ in seen] == alone
    # queries 2 and 3 (the helper's) came right after this process's first block of two,
    # before it swept its query 4; 6 and 7 right after its second block
    assert [n for _, n in seen] == [1, 2, 2, 2, 3, 4, 4, 4, 5]


def test_a_helper_slower_to_start_than_this_process_sweeps_is_stopped(
        store_path: Path, counted: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    """A helper that has not answered once when this process has swept its own share (here
    one that never answers) is stopped, and its share swept here: the same answers, in about
    one process's time, not the helper's start's."""
    import queue
    import subprocess
    import time

    monkeypatch.setattr(J, "STOP_UNSTARTED", True)
    store, cases, axes = _setup(store_path, 6)
    alone = _alone(store, cases, axes, counted)
    asleep: list[subprocess.Popen[bytes]] = []

    def never(*a: Any) -> Any:
        asleep.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]))
        return asleep[-1], queue.Queue()

    monkeypatch.setattr(J, "_start", never)
    t0 = time.monotonic()
    shared = [q.to_json() for q in SW.iter_sweep(store, cases, axes, jobs=2)]
    assert shared == alone
    assert time.monotonic() - t0 < 60
    mine, theirs = J.shares(len(cases), 2)
    assert counted["here"] == [cases[i].name for i in mine + theirs]
    assert asleep[0].poll() is not None  # stopped, not left asleep


def test_stopping_early_stops_the_helpers(store_path: Path,
                                          counted: dict[str, list[Any]]) -> None:
    store, cases, axes = _setup(store_path, 9)
    sweeps = SW.iter_sweep(store, cases, axes, jobs=3)
    first = next(sweeps)
    assert first.case.name == cases[0].name
    assert all(p.poll() is None for p in counted["helpers"])  # still sweeping
    sweeps.close()  # a cancel: run_sweep stops taking queries
    assert len(counted["helpers"]) == 2
    assert all(p.poll() is not None for p in counted["helpers"])


def test_how_many_processes(store_path: Path, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(str(store_path))
    monkeypatch.setattr(J, "usable_cpus", lambda: 2)
    assert J.processes(store, 63, None) == (1, "")  # auto: 32 queries each at least
    assert J.processes(store, 64, None) == (2, "")
    assert J.processes(store, 64, 0) == (2, "")
    monkeypatch.setattr(J, "usable_cpus", lambda: 64)
    assert J.processes(store, 10_000, None) == (J.AUTO_MAX, "")  # each holds its own pools
    assert J.processes(store, 24, 3) == (3, "")  # asked: as asked, a block of 8 each
    assert J.processes(store, 17, 4) == (3, "17 queries to sweep, dealt 8 at a time: 3 "
                                            "processes")
    assert J.processes(store, 8, 2) == (1, "8 queries to sweep, dealt 8 at a time: one "
                                           "process")
    assert J.processes(store, 1, 3) == (1, "1 query to sweep, dealt 8 at a time: one process")
    assert J.processes(store, 9, 1) == (1, "")
    with pytest.raises(ValueError):
        J.processes(store, 9, -1)
    build_docs_db(tmp_path / "docs.sqlite")
    docs = open_store(str(tmp_path / "docs.sqlite"))
    n, why = J.processes(docs, 100, 2)
    assert n == 1 and "cannot open this store again" in why
    assert J.shares(7, 3, 2) == [[0, 1, 6], [2, 3], [4, 5]]
    assert J.shares(20, 2, 8) == [[*range(8), 16, 17, 18, 19], [*range(8, 16)]]
    assert J.shares(3, 3, 2) == [[0, 1], [2]]  # no process without a query


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANCEDB_LOG": "error"}
    return subprocess.run([sys.executable, "-m", "inspector", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_command_shares_a_query_set_and_answers_the_same(store_path: Path,
                                                             tmp_path: Path) -> None:
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(_examples(20).to_json()))  # three blocks of 8 at most
    work = tmp_path / "work"
    work.mkdir()
    before = snapshot(store_path)
    common = ("sweep", str(store_path), "--queries", str(queries), "--scope-strategy",
              "column", "--scope-column", "repo", "--limit", "4", "--cap", "0",
              "--grid-overfetch", "1,4", "--grid-blend", "0,1", "--json")
    one, two = _cli(*common, "--jobs", "1", cwd=work), _cli(*common, "--jobs", "2", cwd=work)
    assert one.returncode == 0 and two.returncode == 0, (one.stderr, two.stderr)
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert a.pop("seconds") >= 0 and b.pop("seconds") >= 0
    assert b == a and len(a["queries"]) == 20
    assert two.stderr == ""
    bad = _cli(*common, "--jobs", "-2", cwd=work)
    assert bad.returncode == 2 and "whole number of processes" in bad.stderr
    single = _cli("sweep", str(store_path), "--vector-of", "m0007", "--grid-overfetch", "1,2",
                  "--grid-blend", "0,1", "--jobs", "2", "--json", cwd=work)
    assert single.returncode == 0, single.stderr
    assert "--jobs 2: 1 query to sweep, dealt 8 at a time: one process" in single.stderr
    assert list(work.iterdir()) == []
    assert snapshot(store_path) == before


def test_the_windows_sweep_job_shares_a_large_query_set(
        store_path: Path, counted: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    """The sweep tab's job asks for the automatic number of processes: a query set large
    enough (here the threshold lowered to 3 queries a process) is shared, and its answer is
    the one process's; cancelled after the first query, its helpers stop."""
    from inspector.qt.tuning.tuning_jobs import SweepRequest, sweep_job

    store, cases, axes = _setup(store_path, 6)
    base = cases[0].question.model_copy(update={"vector_of": None, "scopes": None})
    req = SweepRequest(question=base, axes=tuple(axes), query_set=_examples(6))

    def finish(job: Any) -> Any:
        while True:
            try:
                next(job)
            except StopIteration as stop:
                return stop.value

    alone = finish(sweep_job(store, req, lambda: False))
    assert not counted["helpers"]  # 6 queries: fewer than 32 a process
    monkeypatch.setattr(J, "MIN_PER_PROCESS", 3)
    monkeypatch.setattr(J, "usable_cpus", lambda: 2)
    shared = finish(sweep_job(store, req, lambda: False))
    assert len(counted["helpers"]) == 1
    assert [q.to_json() for q in shared.queries] == [q.to_json() for q in alone.queries]
    assert shared.to_json()["cells"] == alone.to_json()["cells"]
    stopped = finish(sweep_job(store, req, lambda: True))
    assert stopped.cancelled and len(stopped.queries) == 1
    assert len(counted["helpers"]) == 2 and counted["helpers"][1].poll() is not None


FRAMEWORKS = ROOT / "tests" / "frameworks" / "data"
SYSTEMS = [  # (preset, the store the real system wrote, its table)
    ("memory-lancedb-pro", None, "memories"),
    ("langchain-lancedb", FRAMEWORKS / "langchain" / "store", "vectorstore"),
    ("llamaindex-lancedb-hybrid", FRAMEWORKS / "llamaindex" / "store", "vectors"),
    ("crewai-memory", FRAMEWORKS / "crewai" / "store", "memories"),
]


@pytest.mark.parametrize(("preset", "source", "table"), SYSTEMS, ids=[s[0] for s in SYSTEMS])
def test_real_systems_stores_swept_by_helpers_answer_as_one_process(
        preset: str, source: Path | None, table: str, tmp_path: Path,
        counted: dict[str, list[Any]]) -> None:
    """Stores the real systems wrote, each swept with its system's pipeline over its default
    grid: four queries by example, shared with a helper, answer as one process does."""
    import shutil

    from tests.core.engine.flow.fixtures import fixture_copy

    if source is None:
        path = fixture_copy("memory-lancedb-pro", tmp_path) / "store"
    else:
        path = tmp_path / "copy"
        shutil.copytree(source, path)
    before = snapshot(path)
    store = open_store(str(path), table)
    ids = store.table.search().select([store.roles.id]).limit(40).to_arrow() \
        .column(store.roles.id).to_pylist()
    base = Question(store=str(path), table=table, preset=preset, limit=3)
    axes = G.default_axes(resolve(base)[0])
    assert axes
    judged = Judgments()
    for i, rid in enumerate(ids[::10][:4]):
        judged = judged.with_query(f"like {rid} #{i}", None, vector_of=str(rid))
    cases = SW.cases_from_judgments(base, judged, store)
    alone = _alone(store, cases, axes, counted)
    assert len({tuple(q["truth"]) for q in alone}) > 1  # four questions, not one
    shared = [q.to_json() for q in SW.iter_sweep(store, cases, axes, jobs=2)]
    assert shared == alone
    assert len(counted["helpers"]) == 1 and len(counted["here"]) == 2
    assert snapshot(path) == before
