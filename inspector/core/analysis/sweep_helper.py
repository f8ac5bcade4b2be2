"""A helper process of a shared sweep (`sweep_jobs._BOOT` starts it with `serve(FD)`) reads
its work from stdin (the table's open_lance arguments, its queries, the grid, k, scan;
pickled by the process that started it) and writes each query's sweep to file descriptor FD,
in order, then ("done", None); on any failure ("failed", why) and nothing more, and the
starting process sweeps the rest itself."""

from __future__ import annotations

import os
import pickle
import sys


def serve(fd: int) -> int:
    """The helper's side: its work read from stdin, each query's sweep written to `fd`."""
    with os.fdopen(fd, "wb") as out:
        try:
            args, cases, axes, k, scan = pickle.load(sys.stdin.buffer)
            from inspector.core.analysis.sweep import iter_sweep
            from inspector.core.stores.store import open_lance

            store = open_lance(**args)
            for one in iter_sweep(store, cases, axes, k, scan, jobs=1):
                pickle.dump(("one", one), out)
                out.flush()
        except BaseException as exc:  # noqa: BLE001 - the parent sweeps the rest itself
            pickle.dump(("failed", f"{type(exc).__name__}: {exc}"), out)
            return 1
        pickle.dump(("done", None), out)
    return 0
