"""The kernels of `kernels`, compiled with numba (optional extra `scale`), for many pairs.

Same float32 operations in the same order, so the same bits (tests compare both with
LanceDB). Pairs come grouped by query, `ptr[i]:ptr[i + 1]` indexing `rows` for query i; the
queries are spread over the cores. Importing this module without numba raises ImportError.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

LANES = 16


@njit(cache=True, inline="always")
def _fma(a: np.float32, b: np.float32, c: np.float32) -> np.float32:  # pragma: no cover
    p = np.float64(a) * np.float64(b)
    c64 = np.float64(c)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    r = np.float32(s)
    if err != 0.0:
        r64 = np.float64(r)
        other = 2.0 * s - r64
        if other != r64 and np.float64(np.float32(other)) == other:
            r = np.float32(max(r64, other) if err > 0.0 else min(r64, other))
    return r


TILE = 256  # rows per tile: a tile stays in cache while every query's pairs in it run


@njit(cache=True, inline="always")
def _l2_one(xr: np.ndarray, qq: np.ndarray, acc: np.ndarray) -> np.float32:  # pragma: no cover
    dim = xr.shape[0]
    body = dim // LANES * LANES
    tail = np.float32(0.0)
    for j in range(body, dim):
        d = xr[j] - qq[j]
        tail += d * d
    for j in range(LANES):
        acc[j] = np.float32(0.0)
    for c in range(0, body, LANES):
        for j in range(LANES):
            d = xr[c + j] - qq[c + j]
            acc[j] += d * d
    total = np.float32(0.0)
    for j in range(LANES):
        total += acc[j]
    return tail + total if body < dim else total


@njit(cache=True, parallel=True, nogil=True)
def l2_pairs(x: np.ndarray, q: np.ndarray, ptr: np.ndarray,
             rows: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """Rows within each query's slice are ascending (as np.nonzero gives them): tiles of rows
    run in parallel, each visiting every query's pairs inside it."""
    out = np.empty(rows.shape[0], np.float32)
    tiles = (x.shape[0] + TILE - 1) // TILE
    for t in prange(tiles):
        lo = t * TILE
        hi = lo + TILE
        acc = np.empty(LANES, np.float32)
        for i in range(q.shape[0]):
            a = ptr[i]
            b = ptr[i + 1]
            if a == b:
                continue
            p = a + np.searchsorted(rows[a:b], lo)
            while p < b and rows[p] < hi:
                out[p] = _l2_one(x[rows[p]], q[i], acc)
                p += 1
    return out


@njit(cache=True)
def _dot_tree(a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.float32:  # pragma: no cover
    dim = a.shape[0]
    body = dim // LANES * LANES
    for j in range(LANES):
        acc[j] = np.float32(0.0)
    for c in range(0, body, LANES):
        for j in range(LANES):
            acc[j] = _fma(a[c + j], b[c + j], acc[j])
    width = LANES
    while width > 1:
        width //= 2
        for j in range(width):
            acc[j] = acc[j] + acc[j + width]
    total = acc[0] if body else np.float32(0.0)
    for j in range(body, dim):
        total += a[j] * b[j]
    return total


@njit(cache=True, parallel=True, nogil=True)
def cosine_pairs(x: np.ndarray, q: np.ndarray, q_norm: np.ndarray, ptr: np.ndarray,
                 rows: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    out = np.empty(rows.shape[0], np.float32)
    for i in prange(q.shape[0]):
        qq = q[i]
        acc = np.empty(LANES, np.float32)
        for p in range(ptr[i], ptr[i + 1]):
            xr = x[rows[p]]
            xy = _dot_tree(qq, xr, acc)
            xx = _dot_tree(xr, xr, acc)
            out[p] = np.float32(1.0) - xy / q_norm[i] / np.sqrt(xx)
    return out
