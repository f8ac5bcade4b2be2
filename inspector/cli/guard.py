"""The command line's one error path: every failure becomes one redacted line on stderr.

- `fail` prints `inspector: MESSAGE` (first line only, credentials scrubbed) and returns 2.
- `unexpected` words an error that is not a user error: which command failed and on what.
- `quiet` runs a command with Python warnings silenced and the process's native stderr (file
  descriptor 2, where LanceDB's Rust code prints panics and backtrace notes) captured, so the
  one line stays one line. `--debug` lets both through and prints the traceback.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import traceback
import warnings
from collections.abc import Iterator, Sequence

from inspector.core.errors import InspectorError
from inspector.core.stores.remote import ENV_OPTIONS
from inspector.core.stores.safety.redact import (
    redact_text,
    redact_uri,
    remember_environment,
    remember_option_text,
)

_MAX_LINE = 400


def learn_secrets(argv: Sequence[str]) -> None:
    """Remember every credential the arguments and environment carry, so no output shows one:
    a URI's user-info however the URI is typed (a leading space, `s3:/`, `s3//`), and storage
    options well-formed or not (`key:SECRET`, in the arguments or INSPECTOR_STORAGE_OPTIONS)."""
    remember_environment()
    remember_option_text(os.environ.get(ENV_OPTIONS, ""))
    for i, arg in enumerate(argv):
        if "@" in arg or "://" in arg:
            redact_uri(arg)
        if arg == "--storage-option" and i + 1 < len(argv):
            remember_option_text(argv[i + 1])
        elif arg.startswith("--storage-option="):
            remember_option_text(arg.split("=", 1)[1])


def check_text(argv: Sequence[str]) -> None:
    """Every argument is text: a lone surrogate (bytes that are not UTF-8, as Python passes
    them on) is refused naming the option, before anything reads it."""
    for i, arg in enumerate(argv):
        if any("\ud800" <= c <= "\udfff" for c in arg):
            opt = arg.split("=", 1)[0] if arg.startswith("--") else \
                argv[i - 1] if i and argv[i - 1].startswith("-") else f"argument {i + 1}"
            raise InspectorError(f"The value of {opt} holds bytes that are not UTF-8 text "
                                 f"({ascii(arg)[:60]}); the inspector reads UTF-8 only.")


def one_line(text: str) -> str:
    """The first non-empty line of a message, scrubbed of secrets and kept short."""
    lines = [ln.strip() for ln in redact_text(text).splitlines() if ln.strip()]
    line = lines[0] if lines else "failed"
    return line if len(line) <= _MAX_LINE else line[:_MAX_LINE - 3] + "..."


def fail(message: str, exc: BaseException | None = None) -> int:
    """Print one line (plus the traceback when debugging) and return exit status 2."""
    if exc is not None:
        sys.stderr.write(redact_text("".join(traceback.format_exception(exc))))
    print(f"inspector: {one_line(message)}", file=sys.stderr)
    return 2


def unexpected(argv: Sequence[str], exc: BaseException) -> str:
    """One sentence for an error that is not a user error: the command, the store, the cause."""
    command = argv[0] if argv else "inspector"
    target = next((a for a in argv[1:2] if not a.startswith("-")), None)
    on = f" on {redact_uri(target)}" if target else ""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    cause = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return (f"`{command}`{on} failed unexpectedly ({cause[:200]}); rerun with --debug for "
            "the details.")


@contextlib.contextmanager
def quiet(debug: bool) -> Iterator[None]:
    """Silence Python warnings and capture native stderr for the duration of a command."""
    if debug:
        yield
        return
    os.environ.setdefault("RUST_BACKTRACE", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _native_stderr_captured():
            yield


@contextlib.contextmanager
def _native_stderr_captured() -> Iterator[None]:
    """Point file descriptor 2 at a temporary file; Python's sys.stderr keeps the real one."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    py_err, replaced = sys.stderr, False
    with tempfile.TemporaryFile() as sink:
        try:
            if _writes_to_fd2(py_err):
                py_err.flush()
                sys.stderr = io.TextIOWrapper(os.fdopen(os.dup(saved), "wb"),
                                              encoding="utf-8", errors="replace",
                                              line_buffering=True)
                replaced = True
            os.dup2(sink.fileno(), 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if replaced:
                sys.stderr.flush()
                sys.stderr.close()
                sys.stderr = py_err


def _writes_to_fd2(stream: object) -> bool:
    try:
        return stream.fileno() == 2  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
