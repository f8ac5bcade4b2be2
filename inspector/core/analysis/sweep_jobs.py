"""A query set's sweep shared with helper processes beside this one (issue 34).

A sweep's queries are independent: each is swept through its own runs and fetch cache, and
its answer is a function of the table at its pinned version, the question and the grid. A
query's sweep is Python from end to end, so one process uses one core. With `jobs` > 1 the
queries are dealt in blocks to this process and helper processes in turn (`shares`). Each
helper process (a fresh interpreter running `sweep_helper`, not a fork: LanceDB's threads
do not survive a fork; and not multiprocessing's spawn, which runs the caller's main script
again) opens the same table at the same version, read-only as every open is, and sweeps its
share as this process would (`iter_sweep` with one job, its own batched scan included). The
answers reach the caller in the queries' order, so a caller sees the same sequence as one
process gives (tests/core/analysis/test_sweep_jobs.py compares them whole).

Nothing is lost to a helper: one that cannot start (no process may be started, or the work
does not pickle), fails or dies leaves the rest of its share to this
process, which sweeps it as it would have (and so raises the same error, if the error is the
query's). One that has not answered once when this process has swept its own share (a sweep
too small for a helper's start, ~2 s, to pay) is stopped and its share swept here, so a
shared sweep is never much slower than one process. A caller that stops early (a cancel)
stops the helpers.

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
BLOCK = 8  # queries dealt to a process at a time
STOP_UNSTARTED = True  # a helper that has not answered once when this process is done: stop it


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
    most one per block of BLOCK queries (`shares`)."""
    if jobs is not None and jobs < 0:
        raise ValueError("jobs must be 0 (automatic) or more")
    blocks = -(-n // BLOCK)
    want = min(usable_cpus(), AUTO_MAX, n // MIN_PER_PROCESS) if not jobs else min(jobs, blocks)
    if want <= 1:
        if jobs and jobs > 1:
            return 1, (f"{n} quer{'y' if n == 1 else 'ies'} to sweep, dealt {BLOCK} at a "
                       f"time: one process")
        return 1, ""
    if not sys.executable or getattr(sys, "frozen", False):
        return 1, "no Python interpreter to start a helper process with: swept in this process"
    if reopen_args(store) is None:
        return 1, ("a helper process cannot open this store again (a SQLite docs store or a "
                   "remote one): swept in this process")
    if jobs and want < jobs:
        return want, (f"{n} queries to sweep, dealt {BLOCK} at a time: {want} processes")
    return want, ""


def shares(n: int, parts: int, block: int | None = None) -> list[list[int]]:
    """Each process's queries, of `n`: blocks of `block` queries dealt in turn (this
    process's first), every query in exactly one share. Dealt, not cut in halves, so the
    answers reach the caller in order at about every process's pace together: progress moves
    evenly and a cancel keeps what the processes did in the queries' order."""
    block = block or BLOCK
    parts = max(1, min(parts, -(-n // block) if n else 1))
    out: list[list[int]] = [[] for _ in range(parts)]
    for b, at in enumerate(range(0, n, block)):
        out[b % parts].extend(range(at, min(n, at + block)))
    return out


# The helper's first lines: the `inspector` package this process runs (from `home`), not
# another one its interpreter would find first (a checkout beside an installed copy, a folder
# of that name where it starts); the interpreter's own paths otherwise as they are.
_BOOT = """import sys
from importlib.util import find_spec
from pathlib import Path
home = sys.argv[1]
found = find_spec("inspector")
if found is None or found.origin is None or str(Path(found.origin).resolve().parents[1]) != home:
    sys.path.insert(0, home)
    sys.modules.pop("inspector", None)
from inspector.core.analysis.sweep_helper import serve
raise SystemExit(serve(int(sys.argv[2])))
"""


def _start(args: dict[str, Any], cases: Sequence[Any], axes: Sequence[Any], k: int | None,
           scan: bool) -> tuple[subprocess.Popen[bytes], queue.Queue[Any]]:
    """A helper process sweeping `cases`, and the queue its answers arrive on, in order, then
    ("done", None), or ("failed", why), or ("ended", None) when its pipe closes. The helper
    runs `sweep_helper.serve` (`_BOOT`), told its work on its stdin and
    answering on a pipe of its own (its stdout goes nowhere: nothing it prints can reach this
    process's output); nothing of the caller's program runs in it."""
    read, write = os.pipe()
    home = str(Path(__file__).resolve().parents[3])  # the folder this engine's package is in
    try:
        proc = subprocess.Popen([sys.executable, "-c", _BOOT, home, str(write)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                pass_fds=(write,))
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

    work = pickle.dumps((args, list(cases), list(axes), k, scan))
    stdin = proc.stdin
    assert stdin is not None

    def tell() -> None:  # the helper reads it once its interpreter is up: not waited for here
        try:
            stdin.write(work)
            stdin.close()
        except OSError:  # it ended already; its pipe says so
            pass

    threading.Thread(target=drain, daemon=True, name="inspector-sweep-answers").start()
    threading.Thread(target=tell, daemon=True, name="inspector-sweep-work").start()
    return proc, answers


class _Helper:
    """A started helper: its process, its answers as they arrive, its queries (their places
    in the query set) and how many of them have been answered."""

    def __init__(self, proc: subprocess.Popen[bytes] | None, answers: queue.Queue[Any],
                 share: list[int]) -> None:
        self.proc, self.answers, self.share = proc, answers, share
        self.got = 0
        self.ended = proc is None  # done, failed, dead or never started: nothing more comes

    def take(self, done: dict[int, Any], wait: bool) -> None:
        """Its answers that have arrived into `done` (by place); with `wait`, at least one,
        or its end."""
        while not self.ended and self.got < len(self.share):
            try:
                kind, one = self.answers.get(block=wait)
            except queue.Empty:
                return
            if kind != "one":
                self.ended = True
                return
            done[self.share[self.got]] = one
            self.got += 1
            wait = False


def shared_sweep(store: Any, cases: Sequence[Any], axes: Sequence[Any], k: int | None,
                 scan: bool, parts: int,
                 here: Callable[[Sequence[Any]], Iterator[Any]]) -> Iterator[Any]:
    """Every query's sweep in the queries' order, `parts` processes sharing them (`shares`);
    `here(cases)` sweeps cases in this process (iter_sweep with one job). This process keeps
    sweeping its own share while answers wait for an earlier one of a helper's; a helper that
    ends before its share is answered leaves the rest to this process."""
    args = reopen_args(store)
    assert args is not None
    dealt = shares(len(cases), parts)
    helpers: list[_Helper] = []
    owner = {i: h for h, share in enumerate(dealt) for i in share}
    done: dict[int, Any] = {}
    complete = False
    try:
        for share in dealt[1:]:
            try:
                helpers.append(_Helper(*_start(args, [cases[i] for i in share], axes, k,
                                                scan), share))
            except Exception:  # noqa: BLE001 - no process to start, or work that does not
                # pickle: this share is swept here, as one process would
                helpers.append(_Helper(None, queue.Queue(), share))
        nxt = 0
        for i, one in zip(dealt[0], here([cases[i] for i in dealt[0]]), strict=True):
            done[i] = one
            for h in helpers:
                h.take(done, wait=False)
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1
        while nxt < len(cases):
            h = helpers[owner[nxt] - 1]  # this process's own are all done
            h.take(done, wait=h.got > 0)
            if nxt not in done and not h.ended and h.got == 0 and STOP_UNSTARTED:
                # this process swept its whole share before the helper answered once (it is
                # still starting: a sweep too small to share): the helper's share here, as
                # one process would have swept it, never much slower than that
                assert h.proc is not None
                h.proc.terminate()
                h.ended = True
            if nxt not in done and h.ended:  # failed, died or stopped: the rest here
                rest = h.share[h.got:]
                done.update(zip(rest, here([cases[i] for i in rest]), strict=True))
                h.got = len(h.share)
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1
        complete = True
    finally:  # done: each helper ends by itself; stopped early or failed: each is stopped
        for h in helpers:
            if h.proc is None:
                continue
            if not complete and h.proc.poll() is None:
                h.proc.terminate()
            try:
                h.proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - a helper ignoring TERM
                h.proc.kill()
                h.proc.wait()


__all__ = ["AUTO_MAX", "BLOCK", "MIN_PER_PROCESS", "processes", "reopen_args", "shared_sweep",
           "shares", "usable_cpus"]
