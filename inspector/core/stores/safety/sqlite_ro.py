"""Reading a SQLite file so that nothing in its folder is ever created or modified.

SQLite's `mode=ro` still writes beside a database in WAL mode: it creates `-shm` when it is
missing and updates it on every read, and cannot open the file at all in a read-only folder
without one. So:

- no `-wal` (or an empty one) and no hot `-journal` beside the file: `immutable=1`, which
  takes no locks and touches no side file (a rollback-journal database at rest is exactly this);
- otherwise: a private snapshot of the database with its `-wal` / `-journal` is copied into the
  app's cache (`snapshots/`) and opened there, where SQLite may create what it likes. The copy
  is retried until the source's stamp is the same before and after copying.

`read_mode` says which ("sqlite-immutable" or "sqlite-snapshot"); `inspector tables` shows it.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.stores.safety import cache, outputs

IMMUTABLE = "sqlite-immutable"
SNAPSHOT = "sqlite-snapshot"
_SIDE_FILES = ("-wal", "-journal")
_COPY_TRIES = 3


FULL_HASH_BYTES = 8 * 1024 * 1024  # a file up to this size is hashed whole (a few ms)
_HEADER_BYTES = {"": 100, "-wal": 32, "-journal": 28}  # each file's own header


def _digest(path: Path, size: int, head: int) -> str | None:
    """The whole file's hash when it is small, else its header's: SQLite's database header
    holds the file change counter (offset 24) and page count (28), the WAL header its
    checkpoint sequence and salts, the journal header its nonce."""
    try:
        with path.open("rb") as fh:
            if size <= FULL_HASH_BYTES:
                return "all:" + hashlib.file_digest(fh, "blake2b").hexdigest()[:32]
            return "head:" + hashlib.blake2b(fh.read(head)).hexdigest()[:32]
    except OSError:
        return None


def file_stamp(path: Path) -> tuple[Any, ...]:
    """Of the file and of its -wal and -journal: size, mtime, ctime, inode and a digest (the
    whole content up to FULL_HASH_BYTES, else the SQLite header). Any write changes it, also
    one that keeps the size and puts the mtime back: the ctime cannot be set back, a commit
    through SQLite bumps the header's change counter (rollback journal) or grows or re-salts
    the WAL, and a small file's hash sees any byte, whoever wrote it. Deleting and recreating
    the file changes the inode."""
    out: list[Any] = []
    for suffix, head in _HEADER_BYTES.items():
        p = Path(str(path) + suffix)
        try:
            st = p.stat()
        except FileNotFoundError:
            out += [None] * 5
            continue
        out += [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                _digest(p, st.st_size, head)]
    return tuple(out)


def needs_snapshot(path: Path) -> bool:
    """True when a non-empty -wal or -journal is beside the file (immutable would miss or
    mis-read committed pages)."""
    for suffix in _SIDE_FILES:
        side = Path(str(path) + suffix)
        try:
            if side.stat().st_size > 0:
                return True
        except FileNotFoundError:
            continue
    return False


def _text(raw: bytes) -> str:
    """TEXT values that are not valid UTF-8 are read with replacement characters."""
    return raw.decode("utf-8", "replace")


class LeasedConnection(sqlite3.Connection):
    """A connection to a private snapshot, holding the snapshot's lease while it is open."""

    lease: cache.Lease | None = None


def _open(uri: str, shown: Path, lease: cache.Lease | None = None) -> sqlite3.Connection:
    try:
        con = sqlite3.connect(uri, uri=True, check_same_thread=False,
                              factory=LeasedConnection)
        con.lease = lease
        con.text_factory = _text
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise InspectorError(f"Cannot read the SQLite file {shown}: {exc}.") from exc
    return con


class _Changed(Exception):
    """The source changed while it was being copied."""


def _copy(path: Path, tmp: Path, before: tuple[Any, ...]) -> None:
    """Copy the database and its side files into `tmp`; _Changed when the stamp moved."""
    try:
        shutil.copyfile(path, tmp / path.name)
        for suffix in _SIDE_FILES:
            side = Path(str(path) + suffix)
            if side.exists():
                shutil.copyfile(side, tmp / (path.name + suffix))
    except OSError as exc:
        raise InspectorError(f"Cannot copy the SQLite file {path} to read it safely: "
                             f"{exc.strerror or exc}.") from None
    if file_stamp(path) != before:
        raise _Changed  # the cache removes the folder


def _snapshot(path: Path) -> cache.Lease:
    """A private copy of the database and its side files, consistent with one stamp (its
    folder: `.where`), leased."""
    for _ in range(_COPY_TRIES):
        before = file_stamp(path)
        identity = {"source": str(path), "stamp": list(before)}
        try:
            return cache.obtain("snapshots", identity,
                                lambda tmp, before=before: _copy(path, tmp, before))
        except _Changed:
            continue
    raise InspectorError(f"{path} kept changing while it was being copied; try again when "
                         "its writer is idle.")


def connect_readonly(path: str | Path) -> tuple[sqlite3.Connection, str]:
    """A connection that can never write beside `path`, and how it reads (IMMUTABLE or
    SNAPSHOT)."""
    p = Path(path).resolve()
    outputs.protect(str(p), str(path))  # no later write goes inside it, nor beside it
    if not needs_snapshot(p):
        return _open(p.as_uri() + "?mode=ro&immutable=1", p), IMMUTABLE
    lease = _snapshot(p)
    copy = lease.where / p.name
    return _open(copy.as_uri() + "?mode=rw", p, lease), SNAPSHOT
