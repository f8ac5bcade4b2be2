"""JSON in and out: stored values made JSON-ready, and JSON files read with one clear error."""

from __future__ import annotations

import json
import math
import os
import stat
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.errors import InspectorError


def plain(v: Any) -> Any:
    """A stored value as JSON: numpy scalars unwrapped, NaN/inf as null, bytes as hex,
    dates as ISO text, decimals as floats."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, Decimal):  # decimal columns: shown as numbers (JSON has no decimals)
        v = float(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def finite(v: Any) -> Any:
    """v with every NaN or infinite float (at any depth) as null: strict JSON, whatever
    the data held (a stored vector of inf gives inf distances and scores)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    if isinstance(v, np.floating):
        return finite(float(v))
    return v


def dumps(v: Any, indent: int | None = None) -> str:
    """Strict JSON text of v (non-finite floats as null, UTF-8 kept as is)."""
    return json.dumps(finite(v), allow_nan=False, ensure_ascii=False, indent=indent)


MAX_INPUT_BYTES = 64 * 1024 * 1024  # the largest input file (vector, judgments, checks, ...)


def _kind(mode: int) -> str | None:
    """What a non-regular file is, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


READ_TIMEOUT_S = 30.0  # an input file not read within this is refused (a hung network mount)
_CHUNK = 1 << 20


def _read_chunk(fd: int, n: int) -> bytes:
    """One read(2) of at most n bytes: where a stalled mount blocks."""
    return os.read(fd, n)


def read_input(path: str | Path, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input file the user named, or one sentence naming `what` it was meant
    to be: the one reader of every input file (vectors, judgments, query sets, checks, scope
    maps, pipeline and system files, receipts). Only a regular file of at most `limit` bytes
    is read: a folder, a named pipe (which would block forever) or a device (/dev/zero never
    ends) is refused before it is opened, a file is read no further than the limit, even if it
    grows meanwhile, and a read that has not finished within READ_TIMEOUT_S (a stalled disk
    or a hung network mount: a blocking read cannot be interrupted) is given up on."""
    p = Path(path)
    box: list[Any] = []
    done = threading.Event()

    def work() -> None:
        try:
            box.append(_read_bounded(p, what, limit))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box.append(exc)
        finally:
            done.set()

    # the read runs in a daemon thread, so a read stuck in the kernel cannot hold the caller
    threading.Thread(target=work, name="inspector-read", daemon=True).start()
    if not done.wait(READ_TIMEOUT_S):
        raise InspectorError(f"{what} {p} was not read within {READ_TIMEOUT_S:g} s (a stalled "
                             "disk or network mount?); nothing of it was used.")
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def _read_bounded(p: Path, what: str, limit: int) -> bytes:
    try:
        kind = _kind(os.stat(p).st_mode)
        if kind is not None:
            raise InspectorError(f"{what} {p} is {kind}, not a file.")
        # O_NONBLOCK: if the path became a pipe since the check, opening it cannot block
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InspectorError(f"{what} {p} does not exist.") from None
    except OSError as exc:
        raise InspectorError(f"Cannot read {what.lower()} {p}: "
                             f"{exc.strerror or type(exc).__name__}.") from None
    try:
        st = os.fstat(fd)
        kind = _kind(st.st_mode)
        if kind is not None:
            raise InspectorError(f"{what} {p} is {kind}, not a file.")
        if st.st_size > limit:
            raise InspectorError(f"{what} {p} is {st.st_size:,} bytes; at most {limit:,} are "
                                 "read.")
        parts: list[bytes] = []
        got = 0
        while got <= limit:
            part = _read_chunk(fd, min(_CHUNK, limit + 1 - got))
            if not part:
                break
            parts.append(part)
            got += len(part)
    except OSError as exc:
        raise InspectorError(f"Cannot read {what.lower()} {p}: "
                             f"{exc.strerror or type(exc).__name__}.") from None
    finally:
        os.close(fd)
    if got > limit:
        raise InspectorError(f"{what} {p} is larger than {limit:,} bytes, the most that is read.")
    return b"".join(parts)


def read_text(path: str | Path, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    """A text file's content (UTF-8, bounded as read_input), or one sentence naming `what` it
    was meant to be."""
    try:
        return read_input(path, what, limit).decode("utf-8")
    except UnicodeDecodeError:
        raise InspectorError(f"{what} {Path(path)} is not UTF-8 text.") from None


def read_json(path: str | Path, what: str) -> Any:
    """A JSON file's content, or one sentence naming `what` it was meant to be."""
    return parse_json(read_text(path, what), what, path)


def parse_json(text: str, what: str, path: str | Path) -> Any:
    """An input file's JSON text parsed, or one sentence: invalid, nested too deeply, or
    holding half a character (a lone surrogate escape such as \\udc80, which no text is)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InspectorError(f"{what} {path} is not valid JSON: {exc}.") from None
    except RecursionError:
        raise InspectorError(f"{what} {path} nests too deeply to be read.") from None
    if "\\u" in text and lone_surrogate(data):
        raise InspectorError(f"{what} {path} holds a \\u escape of half a character (a lone "
                             f"surrogate), which is not text.")
    return data


def lone_surrogate(value: Any) -> bool:
    """True when a text anywhere in value (keys included) holds a lone surrogate: bytes that
    were not UTF-8, or half of a \\u escape pair, which no library can encode."""
    if isinstance(value, str):
        return not value.isascii() and any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(lone_surrogate(k) or lone_surrogate(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(lone_surrogate(v) for v in value)
    return False
