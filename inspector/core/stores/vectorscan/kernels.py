"""LanceDB's own float32 distance arithmetic, reproduced exactly in numpy.

A batched scan must return the very `_distance` values LanceDB's flat search returns, bit for
bit, or near-ties (one float32 ulp apart, thousands of them in a deep ranking) would come out
in a different order. A matrix product, or float64 rounded to float32, is NOT what LanceDB
computes: lance-linalg accumulates in float32 in a fixed order. Measured on lancedb 0.40
(x86-64 with AVX-512), for float32 vectors:

- squared L2: the `dim % 16` trailing elements summed first, in order; then 16 lane
  accumulators `lane[j] += (x - q)^2` over the 16-element chunks (no fused multiply-add); the
  lanes summed in order; the two sums added.
- cosine: 16 lane accumulators with a fused multiply-add for `x.q` and `x.x`, each reduced as a
  halving tree (lanes j and j+8, then j+4, j+2, j+1), the trailing elements added one by one,
  then `1 - xy / |q| / sqrt(xx)`.

LanceDB's cosine depends on the processor it runs on (the same wheel, lancedb 0.40): on
x86-64 without AVX-512 (an AMD EPYC with AVX2, 2026-12-07) up to one row in ten came back one
float32 step away from this cosine (0 to 40 rows of 400, by dimension and seed, at 17 to 1,536
dimensions), while the squared L2 above still held bit for bit. So cosine is scanned only on
a processor that reports AVX-512F (`reproduced`); elsewhere a cosine scan is refused
(`scan.ScanUnsupported`) and the legs are LanceDB's own, one search a query. A pass's legs
are also checked against LanceDB's own search of its first query (`pools.batched._agrees`)
before they are used.
Matrix products only pick the candidates; these kernels give the values.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

LANES = 16
_CHUNK = 1024  # rows per step: keeps the working set in cache
F32 = np.float32


def _cpu_flags() -> frozenset[str]:
    """The processor's feature flags as Linux reports them (empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


@functools.cache
def reproduced(distance: str) -> bool:
    """Whether these kernels give LanceDB's own `_distance` on this processor: squared L2
    everywhere it was measured; cosine only where the processor has AVX-512F (see the
    module's text; unknown processors are refused)."""
    if distance == "cosine":
        return "avx512f" in _cpu_flags()
    return True


def supported_dim(dim: int) -> bool:
    """Dimensions whose kernels are reproduced (below 17 LanceDB takes other code paths)."""
    return dim > LANES


def l2_rows(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """LanceDB's squared L2 from q to each row of x (float32, shape (m, dim))."""
    m, dim = x.shape
    body = dim // LANES * LANES
    out = np.empty(m, F32)
    for s in range(0, m, _CHUNK):
        d = np.subtract(x[s:s + _CHUNK], q, dtype=F32)
        np.multiply(d, d, out=d)
        out[s:s + len(d)] = _l2_combine(d, body)
    return out


def _l2_combine(sq: np.ndarray, body: int) -> np.ndarray:
    dim = sq.shape[1]
    tail = np.zeros(len(sq), F32)
    for j in range(body, dim):
        tail += sq[:, j]
    if not body:
        return tail
    acc = sq[:, :LANES].copy()
    for c in range(LANES, body, LANES):
        acc += sq[:, c:c + LANES]
    lanes = np.ascontiguousarray(acc.T)
    total = lanes[0].copy()
    for j in range(1, LANES):
        total += lanes[j]
    return tail + total if body < dim else total


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 fused multiply-add, rounded once: a*b is exact in float64 and the sum is
    rounded to float64, then to float32. Where that sum sits exactly on a float32 midpoint
    (double rounding could go the wrong way) its lost low part says which side is right."""
    p = a.astype(np.float64) * b
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    r = s.astype(F32)
    r64 = r.astype(np.float64)
    other = 2.0 * s - r64  # the far neighbour when s is a float32 midpoint
    mid = (err != 0) & (other != r64) & (other.astype(F32).astype(np.float64) == other)
    if np.any(mid):
        pick = np.where(err > 0, np.maximum(r64, other), np.minimum(r64, other))
        r = np.where(mid, pick, r64).astype(F32)
    return r


def _tree(acc: np.ndarray) -> np.ndarray:
    while acc.shape[1] > 1:
        h = acc.shape[1] // 2
        acc = acc[:, :h] + acc[:, h:]
    return acc[:, 0]


def norm_of(q: np.ndarray) -> F32:
    """|q| as LanceDB's cosine takes it for the query: the 16-lane fused tree as for x.x, but
    the trailing elements summed on their own first and then added to the tree's sum."""
    v = q.reshape(1, -1).astype(F32)
    dim = v.shape[1]
    body = dim // LANES * LANES
    acc = np.zeros((1, LANES), F32)
    for c in range(0, body, LANES):
        acc = fma32(v[:, c:c + LANES], v[:, c:c + LANES], acc)
    tail = np.zeros(1, F32)
    for j in range(body, dim):
        tail = tail + v[:, j] * v[:, j]
    return F32(np.sqrt(_tree(acc)[0] + tail[0]))


def _dot_tree(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    m, dim = x.shape
    body = dim // LANES * LANES
    acc = np.zeros((m, LANES), F32)
    for c in range(0, body, LANES):
        acc = fma32(x[:, c:c + LANES], y[:, c:c + LANES], acc)
    total = _tree(acc) if body else np.zeros(m, F32)
    for j in range(body, dim):
        total = total + x[:, j] * y[:, j]
    return total


def cosine_rows(x: np.ndarray, q: np.ndarray, q_norm: F32) -> np.ndarray:
    """LanceDB's cosine distance from q to each row of x: 1 - xy / |q| / sqrt(xx)."""
    m, _ = x.shape
    out = np.empty(m, F32)
    for s in range(0, m, _CHUNK):
        part = x[s:s + _CHUNK]
        qs = np.broadcast_to(q, part.shape)
        xy = _dot_tree(qs, part)
        xx = _dot_tree(part, part)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[s:s + len(part)] = F32(1) - xy / q_norm / np.sqrt(xx)
    return out


def rows(x: np.ndarray, q: np.ndarray, distance: str) -> np.ndarray:
    """LanceDB's `_distance` for each row of x: 'l2' (squared) or 'cosine'."""
    x = np.ascontiguousarray(x, F32)
    q = np.ascontiguousarray(q, F32)
    if distance == "cosine":
        return cosine_rows(x, q, norm_of(q))
    return l2_rows(x, q)


@functools.cache
def _jit() -> object | None:
    """The compiled kernels, imported once (a failed import would otherwise read and compile
    the module again on every call: 3-4 ms each, a hundred times a scan without numba).

    numba keeps what it compiled on disk, by default beside the package's source: the
    kernels' cache goes to the app's cache folder instead (`numba/` in it), unless the user
    chose one (NUMBA_CACHE_DIR). Only these kernels: numba's folder for any other code in the
    process is left as it was."""
    try:
        import numba
    except ImportError:
        return None
    config = numba.config
    mine = not config.CACHE_DIR
    if mine:
        from inspector.core.errors import InspectorError
        from inspector.core.stores.safety.cache import cache_root

        try:
            config.CACHE_DIR = str(cache_root() / "numba")
        except InspectorError:  # no cache folder it may write to: the numpy kernels, not
            return None  # numba's cache beside the package
    try:  # numba fixes each function's cache folder when it is decorated, at this import
        from inspector.core.stores.vectorscan import kernels_jit
    except ImportError:
        return None
    finally:
        if mine:
            config.CACHE_DIR = ""
    return kernels_jit


def has_jit() -> bool:
    """True when numba is installed (a dependency; a platform without it scans with numpy):
    the pair kernels can run compiled. Loads them (see `worth_compiling`)."""
    return _jit() is not None


# a process's first use of the compiled kernels costs a fraction of a second (numba's import and
# its cache read; seconds when it compiles them). A dense scan repays that past about 10M
# (query, row) pairs (the bench's 500 queries x 100k rows: 4.6 s with the numpy kernels, 1.6 s
# compiled); the demo sweep's 50 x 6,000 did not (timed by hand, issue 34's note). Smaller work
# stays in numpy until the kernels are loaded anyway.
JIT_MIN_WORK = 10_000_000
JIT_MIN_PAIRS = 2_000_000  # one `pairs` call this large loads them itself


def loaded() -> bool:
    """The compiled kernels are loaded in this process already (nothing to pay for them)."""
    return _jit.cache_info().currsize > 0 and _jit() is not None


def worth_compiling(work: int) -> bool:
    """Whether a scan of `work` (queries x rows) runs compiled: the kernels loaded already, or
    work enough to repay loading them; loads them when it says yes."""
    return (loaded() or work >= JIT_MIN_WORK) and has_jit()


# numba's default threading layer where OpenMP is missing ("workqueue") aborts the process
# when two threads run parallel kernels at once (a window's sweep beside its audit): one at a
# time, each using every core
_JIT_LOCK = threading.Lock()


def _ascending(ptr: np.ndarray, rows: np.ndarray) -> bool:
    """Rows ascending within each query's slice (what the compiled kernels' tiling reads)."""
    if len(rows) < 2:
        return True
    down = np.diff(rows) < 0
    starts = np.asarray(ptr[1:-1], np.int64) - 1  # a slice's first row follows another's last
    down[starts[(starts >= 0) & (starts < len(down))]] = False
    return not down.any()


def pairs(x: np.ndarray, q: np.ndarray, ptr: np.ndarray, rows: np.ndarray, distance: str,
          q_norms: np.ndarray | None = None, jit: bool = True) -> np.ndarray:
    """`_distance` of every (query i, row rows[p]) pair, p in ptr[i]:ptr[i + 1]; compiled
    when `jit` and the kernels are loaded (or this call alone is worth loading them), the
    same bits either way."""
    x = np.ascontiguousarray(x, F32)
    q = np.ascontiguousarray(q, F32)
    if q_norms is None and distance == "cosine":
        q_norms = np.array([norm_of(v) for v in q], F32)
    mod = _jit() if jit and (loaded() or len(rows) >= JIT_MIN_PAIRS) else None
    if mod is None:
        return _pairs_numpy(x, q, ptr, rows, distance, q_norms)
    rows = np.asarray(rows, np.int64)
    order = None
    if not _ascending(ptr, rows):  # e.g. rows in LanceDB's distance order
        qi = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
        order = np.lexsort((rows, qi))
        rows = rows[order]
    with _JIT_LOCK:
        if distance == "cosine":
            got = mod.cosine_pairs(x, q, q_norms, ptr, rows)  # type: ignore[attr-defined]
        else:
            got = mod.l2_pairs(x, q, ptr, rows)  # type: ignore[attr-defined]
    if order is None:
        return got
    out = np.empty_like(got)
    out[order] = got
    return out


_PAIR_CHUNK = 4096  # pairs per step of the numpy path: a (chunk, dim) float32 working set
_OWN_STEP = 256  # a query with this many pairs runs on its own (its vector broadcast)


def _pairs_numpy(x: np.ndarray, q: np.ndarray, ptr: np.ndarray, rows: np.ndarray,
                 distance: str, q_norms: np.ndarray | None) -> np.ndarray:
    """`pairs` without numba. A query with many pairs runs the row-wise kernel on its rows;
    the pairs of all the others are gathered into one array, a chunk at a time, so a scan
    whose queries keep a few candidates per block pays no step per query. Each pair's
    arithmetic is the one `l2_rows`/`cosine_rows` does for it: the same bits either way."""
    assert q_norms is not None or distance != "cosine"
    counts = np.diff(ptr)
    out = np.empty(len(rows), F32)
    for i in np.flatnonzero(counts >= _OWN_STEP):
        a, b = int(ptr[i]), int(ptr[i + 1])
        part = x[rows[a:b]]
        out[a:b] = (cosine_rows(part, q[i], q_norms[i]) if q_norms is not None
                    and distance == "cosine" else l2_rows(part, q[i]))
    qi = np.repeat(np.arange(len(q)), counts)
    few = np.flatnonzero(np.repeat(counts < _OWN_STEP, counts))
    body = x.shape[1] // LANES * LANES
    for s in range(0, len(few), _PAIR_CHUNK):
        at = few[s:s + _PAIR_CHUNK]
        xs, qs = x[rows[at]], q[qi[at]]
        if q_norms is not None and distance == "cosine":
            xy, xx = _dot_tree(qs, xs), _dot_tree(xs, xs)
            with np.errstate(divide="ignore", invalid="ignore"):
                out[at] = F32(1) - xy / q_norms[qi[at]] / np.sqrt(xx)
        else:
            d = np.subtract(xs, qs, dtype=F32)
            np.multiply(d, d, out=d)
            out[at] = _l2_combine(d, body)
    return out
