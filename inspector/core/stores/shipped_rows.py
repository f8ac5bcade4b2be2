"""The demo store's rows as shipped: each table's columns but its vectors, made by its generator
once and kept as an Arrow file under `inspector.resources` (demo/), so a first launch reads them
(~1 ms) instead of making them (~0.2 s of Python, which held the GIL while the window was built).

The generators stay the source of truth: `rows_table` falls back to the generator when the file
is missing, and a test checks that every shipped file equals what its generator makes now.
After changing a generator, write the files again:

    .venv/bin/python -m inspector.core.stores.demo --write-rows resources/demo
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

FOLDER = "demo"  # under inspector.resources


def file_name(table: str) -> str:
    return f"{table}.arrow"


def from_rows(rows: list[dict[str, Any]]) -> pa.Table:
    """A generator's rows (dicts of plain values, every row the same keys) as a table."""
    return pa.table({k: [r[k] for r in rows] for k in rows[0]})


def read(path: Any) -> pa.Table | None:
    """The table kept at `path` (a file or an importlib.resources traversable), None if it is
    absent or unreadable (the generator then makes the rows: a damaged install still starts)."""
    import pyarrow.ipc as ipc

    try:
        return ipc.open_file(pa.BufferReader(path.read_bytes())).read_all()
    except (OSError, pa.ArrowException):
        return None


def shipped(table: str) -> pa.Table | None:
    try:
        folder = resources.files("inspector.resources").joinpath(FOLDER)
    except ModuleNotFoundError:
        return None
    return read(folder.joinpath(file_name(table)))


def rows_table(table: str, make: Callable[[], list[dict[str, Any]]]) -> pa.Table:
    """The rows of demo table `table` without vectors: as shipped, else made by `make`."""
    got = shipped(table)
    return got if got is not None else from_rows(make())


def write(folder: str | Path, generators: dict[str, Callable[[], list[dict[str, Any]]]]
          ) -> list[Path]:
    """Write each table's generated rows into `folder` (made if missing): one Arrow file each,
    zstd-compressed."""
    import pyarrow.ipc as ipc

    out = Path(folder).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for table, make in generators.items():
        data = from_rows(make())
        path = out / file_name(table)
        with ipc.new_file(str(path), data.schema,
                          options=ipc.IpcWriteOptions(compression="zstd")) as w:
            w.write_table(data)
        written.append(path)
    return written
