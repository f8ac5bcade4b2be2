"""The one way the inspector writes a file: never into a store, never through a link.

Every file the tool writes (exports, receipts, sweeps, pictures, TREC runs and qrels,
judgments, the window's files, its settings and cache) is checked here first:

- its location, resolved (`~`, relative parts and `..`, the links among its folders
  followed), and whatever a link planted at it points to, must lie outside
  every store this process opened (`protect`, called where stores are opened) and every
  store the command names (`stores`), whatever name the store was given: a plain or relative
  path, a `file://` URI or a link to it (compared by resolved path and by inode, so a bind
  mount is seen too);
- the file is written under a temporary name in its target's folder and renamed over the
  target (`os.replace`): a link, or a hard link, at the target is replaced and never written
  through, and nobody ever reads half a file;
- an existing target is replaced only when asked (`force`), and only a regular file or a link.

Each refusal is one sentence naming the path and the store.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from inspector.core.errors import InspectorError
from inspector.core.stores.safety.object_uri import is_remote, local_path
from inspector.core.stores.safety.redact import redact_uri

Content = str | bytes | Callable[[Path], None]  # text, bytes, or a writer given a path
SQLITE_SIDES = ("-wal", "-shm", "-journal")  # the files SQLite keeps beside a database

_LOCK = threading.Lock()
_OPENED: dict[Path, str] = {}  # a protected location (resolved) -> the store, as shown
_UMASK = os.umask(0o22)
os.umask(_UMASK)


def store_paths(uri: str) -> tuple[Path, ...]:
    """The local locations a store URI names, resolved: a LanceDB folder, or a SQLite file
    with the side files SQLite keeps beside it; none for object storage or LanceDB Cloud."""
    if not uri or is_remote(uri):
        return ()
    where = Path(os.path.realpath(local_path(uri)))
    if where.is_file():
        return (where, *(where.with_name(where.name + s) for s in SQLITE_SIDES))
    return (where,)


def protect(uri: str, shown: str | None = None) -> None:
    """Remember a store this process opened: no later write of this process goes inside it."""
    label = shown or redact_uri(uri)
    with _LOCK:
        for where in store_paths(uri):
            _OPENED.setdefault(where, label)


def _roots(stores: Iterable[str | None]) -> list[tuple[Path, str]]:
    given = [(p, redact_uri(s)) for s in stores if s for p in store_paths(str(s))]
    with _LOCK:
        return [*given, *_OPENED.items()]


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _within(where: Path, roots: list[tuple[Path, str]]) -> str | None:
    """The store `where` (resolved) lies in, by path or by inode (the same folder mounted
    elsewhere, a hard link to a SQLite store's file), else None."""
    for root, shown in roots:
        if where == root or root in where.parents:
            return shown
    ids = {ident: shown for root, shown in roots if (ident := _identity(root)) is not None}
    if ids:
        for part in (where, *where.parents):
            hit = ids.get(_identity(part))  # type: ignore[arg-type]
            if hit is not None:
                return hit
    return None


def located(path: str | os.PathLike[str]) -> Path:
    """Where a file written at `path` lands: its folder resolved (links followed, `..`
    applied) and its own name kept, so a link at the target itself is not followed."""
    p = Path(os.path.expanduser(os.fspath(path)))
    if p.name in ("", ".", ".."):
        return Path(os.path.realpath(p))
    return Path(os.path.realpath(p.parent)) / p.name


def inside_store(path: str | os.PathLike[str],
                 stores: Iterable[str | None] = ()) -> str | None:
    """The store (as shown) a write at `path` would reach: the location itself, or what a
    link planted there points to; None when it reaches none. (A hard link planted there to a
    file inside a store is harmless: write_file replaces it, never writing through it.)"""
    roots = _roots(stores)
    if not roots:
        return None
    where = located(path)
    hit = _within(where, roots)
    if hit is None and os.path.islink(where):
        hit = _within(Path(os.path.realpath(where)), roots)
    return hit


def refuse_inside_store(path: str | os.PathLike[str], stores: Iterable[str | None] = ()) -> None:
    """One sentence when a write at `path` would reach a store."""
    hit = inside_store(path, stores)
    if hit is not None:
        raise InspectorError(f"{os.fspath(path)} is inside the store {hit} (links followed); "
                             f"the inspector never writes into a store: write it somewhere "
                             f"else.")


def check_target(path: str | os.PathLike[str], stores: Iterable[str | None] = (),
                 force: bool = False) -> Path:
    """Where a file written at `path` lands, or one sentence why it may not be written
    there: inside a store, a folder, an existing file without `force`, or something other
    than a regular file or a link (a device, a pipe) that is never replaced."""
    refuse_inside_store(path, stores)
    shown = os.fspath(path)
    where = located(path)
    if where.name in ("", ".", ".."):
        raise InspectorError(f"{shown} names no file; give a file name.")
    try:
        st = os.lstat(where)
    except FileNotFoundError:
        return where
    except OSError as exc:
        raise InspectorError(f"Cannot write {shown}: {exc.strerror or exc}.") from None
    if stat.S_ISDIR(st.st_mode):
        raise InspectorError(f"{shown} is a folder; give a file name.")
    if not force:
        raise InspectorError(f"{shown} exists; refusing to overwrite it (--force, or "
                             f"force=True, replaces it).")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        raise InspectorError(f"{shown} is not a regular file; the inspector replaces only a "
                             f"file it may have written.")
    return where


def output_folder(folder: str | os.PathLike[str], stores: Iterable[str | None] = ()) -> Path:
    """A folder to write files into, created when missing; refused inside a store (before
    anything is created) and when it is a file."""
    shown = os.fspath(folder)
    refuse_inside_store(folder, stores)
    target = Path(os.path.realpath(os.path.expanduser(shown)))
    if target.exists() and not target.is_dir():
        raise InspectorError(f"{shown} exists and is not a folder; the files go into a folder.")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InspectorError(f"Cannot create the folder {shown}: "
                             f"{exc.strerror or exc}.") from None
    return target


def write_file(path: str | os.PathLike[str], content: Content,
               stores: Iterable[str | None] = (), force: bool = False,
               make_folder: bool = False) -> Path:
    """Write one file at `path` (text as UTF-8, bytes, or `content(tmp_path)` writing it),
    checked by `check_target`, created under a temporary name in the target's folder and
    renamed over the target; returns the path written (as given). `make_folder` creates the
    target's folder when missing (refused inside a store too)."""
    stores = list(stores)
    where = check_target(path, stores, force)
    if make_folder:
        output_folder(where.parent, stores)
    fd, tmp = _temporary(where, os.fspath(path))
    try:
        if callable(content):
            os.close(fd)
            fd = -1
            content(Path(tmp))
        else:
            data = content.encode("utf-8") if isinstance(content, str) else content
            with os.fdopen(fd, "wb") as fh:
                fd = -1
                fh.write(data)
        os.replace(tmp, where)
    except OSError as exc:
        raise InspectorError(f"Cannot write {os.fspath(path)}: "
                             f"{exc.strerror or exc}.") from None
    finally:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # gone after the rename; left only by a failure
    return Path(os.path.expanduser(os.fspath(path)))


def _temporary(where: Path, shown: str) -> tuple[int, str]:
    """A new private file in the target's folder (O_EXCL: never an existing file or link),
    with the permissions a plain write would give."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{where.name[:64]}.", suffix=".part",
                                   dir=where.parent)
    except OSError as exc:
        raise InspectorError(f"Cannot write {shown}: {exc.strerror or exc}.") from None
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o666 & ~_UMASK)
    return fd, tmp
