"""The C heap's free memory goes back to the system after a search that scanned a large table.

A flat LanceDB search of a large table allocates several hundred MB while it runs (its batches
of vectors and their distances) and frees them when it ends; glibc's malloc keeps most of the
freed memory in its arenas (the one of each LanceDB worker thread that used it), so the
process stays that much larger, and the next search's allocations stack on what was kept. A
scoped miss's diagnosis searches the same table two more times (its deep probe and the fix's
pool): on 1M x 384 the process peaked well above one bare LanceDB search.

`trim_after(work)` asks glibc (`malloc_trim`) to return what is free once a search's work
(rows x dimensions scanned) reaches TRIM_MIN_WORK, where it costs well under 1 % of the search
it follows (timed by hand: the note on issue 34 has the figures). Elsewhere (another C library,
another system) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

TRIM_MIN_WORK = 100_000_000  # rows x dimensions: 1M x 384 is 384M, 100k x 384 is 38.4M


@functools.cache
def _malloc_trim() -> Any:
    """glibc's malloc_trim, or None where the C library has none."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def trim_after(work: int) -> bool:
    """Return the heap's free memory after a search of `work` rows x dimensions, if that is
    at least TRIM_MIN_WORK and the C library can; True if it asked."""
    if work < TRIM_MIN_WORK:
        return False
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
