"""A query set's sweep shared with helper processes beside this one (issue 34).

A sweep's queries are independent: each is swept through its own runs and fetch cache, and
its answer is a function of the table at its pinned version, the question and the grid. A
query's sweep is Python from end to end, so one process uses one core. With `jobs` > 1 the
queries are cut into even contiguous chunks: this process sweeps the first, and each helper
process (a fresh interpreter running `sweep_helper`, not a fork: LanceDB's threads do not
survive a fork; and not multiprocessing's spawn, which runs the caller's main script again)
opens the same table at the same version, read-only as every open is, and sweeps its chunk
as this process would (`iter_sweep` with one job, its own batched scan included). The answers come
back in the queries' order, so a caller sees the same sequence as one process gives
(tests/core/analysis/test_sweep_jobs.py compares them whole).

Nothing is lost to a helper: one that fails or dies leaves the rest of its chunk to this
process, which sweeps it as it would have (and so raises the same error, if the error is the
query's). A caller that stops early (a cancel) stops the helpers.

Only a local LanceDB table can be opened again by a helper this way; a SQLite docs store (its
working copy and embedder belong to this process) or a remote one is swept here alone.
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

MIN_PER_PROCESS = 32  # auto: a helper only for at least this many queries each
AUTO_MAX = 4  # auto: at most this many processes (each holds its own pools and scan)


def usable_cpus() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def reopen_args(store: Any) -> dict[str, Any] | None:
    """How a helper process opens the same table at the same version (open_lance's
    arguments), or None when it cannot: a SQLite docs store, a remote one, any other kind."""
    from inspector.core.stores.store import Store, is_remote

    if type(store) is not Store or is_remote(store.uri):
        return None
    return {"uri": store.uri, "table": store.table_name, "version": store.version,
            "roles": store.role_overrides, "storage_options": store.storage_options}


def processes(store: Any, n: int, jobs: int | None) -> tuple[int, str]:
    """How many processes sweep `n` queries, this one included, and why fewer than `jobs`
    asked (empty when not). `jobs` None or 0: automatic, one process per usable processor
    (at most AUTO_MAX) while each has at least MIN_PER_PROCESS queries; else as asked, at
    most one per query."""
    if jobs is not None and jobs < 0:
        raise ValueError("jobs must be 0 (automatic) or more")
    want = min(usable_cpus(), AUTO_MAX, n // MIN_PER_PROCESS) if not jobs else min(jobs, n)
    if want <= 1:
        if jobs and jobs > 1:
            return 1, f"{'one query' if n == 1 else 'no query'} to sweep: one process"
        return 1, ""
    if not sys.executable or getattr(sys, "frozen", False):
        return 1, "no Python interpreter to start a helper process with: swept in this process"
    if reopen_args(store) is None:
        return 1, ("a helper process cannot open this store again (a SQLite docs store or a "
                   "remote one): swept in this process")
    return want, ""


def chunks(n: int, parts: int) -> list[range]:
    """`n` queries cut into at most `parts` contiguous chunks of even size (the first ones one
    larger where they do not divide), every query in exactly one. Even: a helper starts ~2 s
    after this process, which pays for reading every helper's answers (measured on 200
    queries: with this process taking 10 % more the two finished no nearer together)."""
    parts = max(1, min(parts, n))
    size, extra = divmod(n, parts)
    out, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        out.append(range(start, end))
        start = end
    return out


def _start(args: dict[str, Any], cases: Sequence[Any], axes: Sequence[Any], k: int | None,
           scan: bool) -> tuple[subprocess.Popen[bytes], queue.Queue[Any]]:
    """A helper process sweeping `cases`, and the queue its answers arrive on, in order, then
    ("done", None), or ("failed", why), or ("ended", None) when its pipe closes. The helper
    is `python -m inspector.core.analysis.sweep_helper`, told its work on its stdin and
    answering on a pipe of its own (its stdout goes nowhere: nothing it prints can reach this
    process's output); nothing of the caller's program runs in it."""
    read, write = os.pipe()
    env = dict(os.environ)
    home = str(Path(__file__).resolve().parents[3])  # where this engine's package is
    env["PYTHONPATH"] = os.pathsep.join(x for x in (home, env.get("PYTHONPATH")) if x)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "inspector.core.analysis.sweep_helper", str(write)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, pass_fds=(write,), env=env)
    finally:
        os.close(write)
    answers: queue.Queue[Any] = queue.Queue()

    def drain() -> None:
        with os.fdopen(read, "rb") as f:
            while True:
                try:
                    answers.put(pickle.load(f))
                except Exception:  # noqa: BLE001 - EOF or a torn message: it ended
                    answers.put(("ended", None))
                    return

    threading.Thread(target=drain, daemon=True, name="inspector-sweep-answers").start()
    assert proc.stdin is not None
    try:
        pickle.dump((args, list(cases), list(axes), k, scan), proc.stdin)
        proc.stdin.close()
    except OSError:  # it ended already; its pipe says so
        pass
    return proc, answers


def shared_sweep(store: Any, cases: Sequence[Any], axes: Sequence[Any], k: int | None,
                 scan: bool, parts: int,
                 here: Callable[[Sequence[Any]], Iterator[Any]]) -> Iterator[Any]:
    """Every query's sweep in order, `parts` processes sharing them; `here(cases)` sweeps
    cases in this process (iter_sweep with one job)."""
    args = reopen_args(store)
    assert args is not None
    spans = chunks(len(cases), parts)
    helpers: list[tuple[subprocess.Popen[bytes], queue.Queue[Any], range]] = []
    complete = False
    try:
        for span in spans[1:]:
            helpers.append((*_start(args, [cases[i] for i in span], axes, k, scan), span))
        yield from here([cases[i] for i in spans[0]])
        for _, answers, span in helpers:
            got = 0
            while got < len(span):
                kind, one = answers.get()
                if kind != "one":
                    break
                yield one
                got += 1
            if got < len(span):  # it failed or died: the rest here, as one process would
                yield from here([cases[i] for i in span[got:]])
        complete = True
    finally:  # done: each helper ends by itself; stopped early or failed: each is stopped
        for proc, _, _ in helpers:
            if not complete and proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - a helper ignoring TERM
                proc.kill()
                proc.wait()


__all__ = ["AUTO_MAX", "MIN_PER_PROCESS", "chunks", "processes", "reopen_args", "shared_sweep",
           "usable_cpus"]
