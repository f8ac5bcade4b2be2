"""The app's private cache: where working copies live, how they are named, checked and pruned.

A copy's key is a hash of an identity that two different sources cannot share: the store's
resolved location (absolute path, or the URI without credentials plus its endpoint), the
table, and a stamp that changes when the table is deleted and recreated (the creation time of
the pinned version's manifest). The identity is also written into the copy's READY file and
compared before every use, so a hash collision or a stale folder is rebuilt, never trusted.

Concurrent builds of one copy, from any number of processes and threads, make one copy: a
builder takes the copy's build lock (an exclusive `flock` on `<key>.lock` beside it), checks
again, builds into a private folder and renames it into place; everyone else waits on the lock
and then finds the finished copy. A published copy is never replaced while it is valid.

A copy in use is never pruned, whichever process uses it: every user holds a `Lease` (a shared
`flock` on `<key>.lease`) from before it checks the copy until it has closed it, and prune
removes a copy only while it holds that lock exclusively (taken without waiting: a copy it
cannot lock is in use and stays).

Copies are pruned after each build: those unused for MAX_AGE_DAYS, then the least recently
used until the total is under the size limit (INSPECTOR_CACHE_MAX_MB, default 2048 MB). A
failed build leaves nothing (its private folder is removed on the error, and the copy's lock
and lease files unless someone else holds them); prune also removes build folders
(`<key>.tmp<PID>`) whose process has died, and lock or lease files left without a copy.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import platformdirs

from inspector.core.errors import InspectorError
from inspector.core.stores.safety import outputs

APP_NAME = "memory-store-inspector"
READY = "READY"
MAX_AGE_DAYS = 30
DEFAULT_MAX_MB = 2048
KINDS = ("fts", "sqlite", "snapshots")


def cache_root() -> Path:
    """The app's cache folder; INSPECTOR_CACHE_DIR overrides it (tests use this). Never
    inside a store this process opened: the cache is written, pruned and locked there."""
    env = os.environ.get("INSPECTOR_CACHE_DIR")
    root = Path(env) if env else Path(platformdirs.user_cache_dir(APP_NAME))
    hit = outputs.inside_store(root)
    if hit is not None:
        raise InspectorError(f"The cache folder {root} is inside the store {hit}; the "
                             f"inspector never writes into a store: point "
                             f"INSPECTOR_CACHE_DIR somewhere else.")
    return root


def max_bytes() -> int:
    """The cache's size limit in bytes (INSPECTOR_CACHE_MAX_MB, default 2048)."""
    raw = os.environ.get("INSPECTOR_CACHE_MAX_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return int(max(mb, 0) * 1024 * 1024)


def key_of(identity: dict[str, Any]) -> str:
    """A folder name for an identity (sorted JSON, hashed)."""
    raw = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def entry(kind: str, identity: dict[str, Any]) -> Path:
    return cache_root() / kind / key_of(identity)


def read_ready(where: Path) -> dict[str, Any] | None:
    """The READY record of a finished copy, or None when missing or unreadable."""
    try:
        data = json.loads((where / READY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_valid(where: Path, identity: dict[str, Any]) -> bool:
    """True when the copy at `where` was built for exactly this identity; marks it used."""
    ready = read_ready(where)
    if ready is None or ready.get("identity") != json.loads(json.dumps(identity, default=str)):
        return False
    touch(where)
    return True


def write_ready(tmp: Path, identity: dict[str, Any], **extra: Any) -> None:
    record = {"identity": identity, "built": time.time(), **extra}
    (tmp / READY).write_text(json.dumps(record, default=str), encoding="utf-8")


def new_tmp(where: Path) -> Path:
    """A fresh private build folder beside `where` (renamed into place when done)."""
    tmp = where.with_name(f"{where.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    return tmp


def publish(tmp: Path, where: Path) -> None:
    """Rename a finished build into place (under the copy's build lock). A stale folder at
    `where` is first renamed aside, so `where` is only ever missing or complete."""
    if where.exists():
        old = where.with_name(f"{tmp.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(where, old)
        shutil.rmtree(old, ignore_errors=True)
    os.replace(tmp, where)


def _side(where: Path, suffix: str) -> Path:
    return where.with_name(where.name + suffix)


def _flock(path: Path, op: int) -> int | None:
    """An open descriptor of `path` holding `flock(op)`, or None when a non-blocking lock is
    taken by someone else. The file may be unlinked by a prune between open and lock: the lock
    is only kept when the path still names the locked file, else it is taken again. flock
    locks belong to the open file, so two threads of one process exclude each other too."""
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, op)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


@contextlib.contextmanager
def build_lock(where: Path) -> Iterator[None]:
    """The copy's build lock: one builder at a time, in every process and thread."""
    fd = _flock(_side(where, ".lock"), fcntl.LOCK_EX)
    assert fd is not None
    try:
        yield
    finally:
        os.close(fd)


class Lease:
    """A reader's hold on a copy, valid across processes: a shared flock on `<key>.lease`.
    Prune never removes a copy whose lease someone holds. Released by `release()` or when
    the object is collected (whoever keeps the open copy keeps its Lease)."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self._fd = _flock(_side(where, ".lease"), fcntl.LOCK_SH)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass


Build = Callable[[Path], dict[str, Any] | None]


def obtain(kind: str, identity: dict[str, Any], build: Build,
           check: Callable[[Path], bool] | None = None) -> Lease:
    """A lease on a valid copy for `identity` (its folder: `.where`), built once if needed:
    `build(tmp)` fills a private folder (and may return extra READY fields); a copy is valid
    when its READY record names this identity and `check(where)` (if given) agrees. Whoever
    loses the race for the build lock reuses the winner's copy. The lease is taken before
    the copy is checked, so no prune can remove it between the check and its use."""
    where = entry(kind, identity)
    lease = Lease(where)
    try:
        _ensure(where, identity, build, check)
    except BaseException:
        lease.release()
        if not where.exists():
            _remove(where)  # the lock and lease files, unless someone else waits on them
        raise
    return lease


def _ensure(where: Path, identity: dict[str, Any], build: Build,
            check: Callable[[Path], bool] | None) -> None:
    def valid() -> bool:
        return is_valid(where, identity) and (check is None or check(where))

    if valid():
        return
    with build_lock(where):
        if valid():  # built by someone else while this one waited
            return
        tmp = new_tmp(where)
        try:
            extra = build(tmp) or {}
            write_ready(tmp, identity, **extra)
            publish(tmp, where)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # a failed build leaves nothing
    prune(keep=(where,))


def touch(where: Path) -> None:
    try:
        os.utime(where / READY)
    except OSError:
        pass


def _size(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            continue
    return total


_BUILD_FOLDER = re.compile(r"(?P<key>.+)\.tmp(?P<pid>\d+)(\.old)?")
_SIDE_FILE = re.compile(r"(?P<key>.+)\.(lock|lease)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _dead_builds() -> list[Path]:
    """Build folders whose process has died."""
    return [p for kind in KINDS if (cache_root() / kind).is_dir()
            for p in (cache_root() / kind).iterdir()
            if (m := _BUILD_FOLDER.fullmatch(p.name)) and not _alive(int(m["pid"]))]


def _orphans() -> list[Path]:
    """Copies whose lock or lease file is left without the copy or a build of it (prune
    removes those files only when no one holds them)."""
    out: dict[Path, None] = {}
    for kind in KINDS:
        base = cache_root() / kind
        if not base.is_dir():
            continue
        for p in base.iterdir():
            if (m := _SIDE_FILE.fullmatch(p.name)) and not (base / m["key"]).exists() \
                    and not any(base.glob(f"{glob.escape(m['key'])}.tmp*")):
                out[base / m["key"]] = None
    return list(out)


def _entries() -> list[tuple[float, Path]]:
    out = []
    for kind in KINDS:
        base = cache_root() / kind
        if not base.is_dir():
            continue
        for p in base.iterdir():
            if ".tmp" in p.name or not p.is_dir():
                continue  # another process may be building it; lock files
            try:
                used = (p / READY).stat().st_mtime
            except OSError:
                used = 0.0  # unfinished: oldest first
            out.append((used, p))
    return sorted(out)


def _remove(p: Path) -> bool:
    """Remove a copy unless it is in use (its lease is held somewhere): True when removed."""
    fd = _flock(_side(p, ".lease"), fcntl.LOCK_EX | fcntl.LOCK_NB)
    if fd is None:
        return False
    try:
        shutil.rmtree(p, ignore_errors=True)
        for suffix in (".lock", ".lease"):  # no one can be inside obtain() for it now
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_side(p, suffix))
    finally:
        os.close(fd)
    return True


def prune(keep: tuple[Path, ...] = (), now: float | None = None,
          limit: int | None = None) -> list[Path]:
    """Remove what dead builders left, copies unused for MAX_AGE_DAYS, then least recently
    used ones until the cache is within `limit` bytes (default: max_bytes()). `keep`, and
    every copy whose lease someone holds (in any process), is never removed. Returns what was
    removed."""
    now = time.time() if now is None else now
    limit = max_bytes() if limit is None else limit
    kept = {p.resolve() for p in keep}
    removed: list[Path] = []
    for p in _dead_builds():
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    removed += [p for p in _orphans() if _remove(p)]
    sized = []
    for used, p in _entries():
        if p.resolve() in kept:
            sized.append((used, p, _size(p), False))
        elif now - used > MAX_AGE_DAYS * 86400 and _remove(p):
            removed.append(p)
        else:
            sized.append((used, p, _size(p), True))
    total = sum(s for _, _, s, _ in sized)
    for _, p, size, removable in sized:
        if total <= limit:
            break
        if removable and _remove(p):
            removed.append(p)
            total -= size
    return removed
