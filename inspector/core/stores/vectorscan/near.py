"""Every stored row within a small squared-L2 radius of some stored rows, with LanceDB's exact
`_distance`: a provable lower bound over a 16-dimension projection rules out the rest.

For an orthonormal-ish P (k x dim, its float32 entries taken as exact) and any u,
|P u|^2 <= s2 |u|^2 with s2 = the largest row sum of |P P^T| (Gershgorin). LanceDB's float32
distance is within `bounds.margin(dim) * (|x|^2 + |q|^2)` of the exact one. The float32
products P x are within delta |x| of the exact ones (delta = gamma_dim |P|_F, the textbook
bound of a float32 dot product), and the expansion |a|^2 - 2 a.b + |b|^2 in float32 is within
a few gamma_(k+2) of the exact value relative to |a|^2 + |b|^2. So a row within radius R of
probe q in LanceDB's arithmetic has, in the computed projection,

    lb <= (1 + eta) s2 R + c (|x|^2 + |q|^2),
    c = (1 + eta) s2 margin + 2 (1 + 1 / eta) delta^2 + 8 gamma_(k+2) (sqrt(s2) + delta)^2,

and every row that passes this test gets its exact distance (`kernels.pairs`); the rest lie
beyond R. On random vectors (the bench's 100k x 384) the test keeps only the probe's own row
at R ~ 1 (`audit_bounds`); on clustered embeddings it keeps more, never fewer than needed.
"""

from __future__ import annotations

import numpy as np

from inspector.core.stores.vectorscan import bounds as BD
from inspector.core.stores.vectorscan import kernels as LM

DIMS = 16  # projected dimensions: the bound's cost is a 16-wide product per (probe, row)
SAMPLE = 2_048  # rows whose spread chooses the projection (any choice keeps it exact)
ROUNDS = 4  # subspace iterations: enough to find the directions clusters spread along
BLOCK = 8_192  # rows per step
PROBES = 1_024  # probes per step: a (BLOCK, PROBES) float32 working set of 32 MB
_ETA = 1.0 / 64
_U = 2.0**-24


def projection(x: np.ndarray, seed: int = 0) -> np.ndarray:
    """DIMS orthonormal directions (float32, (DIMS, dim)) along which a sample of the rows
    spreads most: a tight bound. Any matrix keeps the bound exact (`_slack` measures how far
    from orthonormal it is); only its tightness varies. A few rounds of subspace iteration,
    orthonormalised by Gram-Schmidt: no LAPACK call (`eigh` of a 384 x 384 covariance took
    0.06 to 2.3 s on a loaded 2-core machine, its threads waiting on each other)."""
    k = min(DIMS, x.shape[1])
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(x), min(len(x), SAMPLE), replace=False))
    s = x[pick].astype(np.float64)
    s -= s.mean(axis=0)
    q = _orthonormal(rng.normal(size=(x.shape[1], k)))
    for _ in range(ROUNDS):
        q = _orthonormal(s.T @ (s @ q))
    return np.ascontiguousarray(q.T, np.float32)


def _orthonormal(a: np.ndarray) -> np.ndarray:
    """The columns of a, orthonormalised in turn (modified Gram-Schmidt, twice for
    accuracy); a column that vanishes is replaced by a unit vector."""
    a = a.copy()
    for j in range(a.shape[1]):
        for _ in range(2):
            for i in range(j):
                a[:, j] -= (a[:, i] @ a[:, j]) * a[:, i]
        norm = np.sqrt(a[:, j] @ a[:, j])
        if not norm > 1e-12:
            a[:, j] = 0.0
            a[j % a.shape[0], j] = 1.0
            norm = 1.0
        a[:, j] /= norm
    return a


def _slack(p: np.ndarray, dim: int) -> tuple[float, float]:
    """(s2, c) of the bound above, for the float32 projection p."""
    p64 = p.astype(np.float64)
    s2 = float(np.max(np.abs(p64 @ p64.T).sum(axis=1))) * (1 + 1e-12)
    gamma = dim * _U / (1 - dim * _U)
    delta = gamma * float(np.sqrt(np.sum(p64 * p64)))
    k = p.shape[0]
    gamma_k = (k + 2) * _U / (1 - (k + 2) * _U)
    c = ((1 + _ETA) * s2 * BD.margin(dim) + 2 * (1 + 1 / _ETA) * delta**2
         + 8 * gamma_k * (np.sqrt(s2) + delta) ** 2)
    return s2, c * 1.01


class Rows:
    """The rows of a table (float32 (rows, dim), as stored) with their projection, ready to
    answer `within` for any probes among them."""

    def __init__(self, x: np.ndarray) -> None:
        self.x = np.ascontiguousarray(x, np.float32)
        dim = self.x.shape[1]
        self.sq = np.einsum("ij,ij->i", self.x, self.x).astype(np.float64)
        self.finite = bool(np.all(np.isfinite(self.sq)))
        if not self.finite:
            return
        self.p = projection(self.x)
        self.s2, self.c = _slack(self.p, dim)
        self.px = self.x @ self.p.T
        self.psq = np.einsum("ij,ij->i", self.px, self.px).astype(np.float64)
        # per row [Px, |Px|^2 - c |x|^2], per probe [-2 Pq, 1]: one product is the test's
        # left side (rows by probes: 0.23 s against 0.35 s of CPU the other way, 1,000 x 100k)
        row = (self.psq - self.c * self.sq * (1 + 1e-3)).astype(np.float32)
        self.aug = np.ascontiguousarray(np.concatenate([self.px, row[:, None]], axis=1))

    def slack(self, probes: np.ndarray) -> np.ndarray:
        """Per probe, how far LanceDB's `_distance` to any row may lie from the kernel's on
        another build: both within `bounds.margin` of the exact distance."""
        return 2 * BD.margin(self.x.shape[1]) * (self.sq[probes] + self.sq.max()) * (1 + 1e-3)

    def within(self, probes: np.ndarray, radii: np.ndarray, jit: bool = True
               ) -> list[tuple[np.ndarray, np.ndarray]]:
        """For probe rows `probes` (positions) and squared-L2 radii (float64, finite), every
        row whose LanceDB `_distance` to the probe is at most its radius: (positions, their
        float32 distances), per probe."""
        assert self.finite
        thr = ((1 + _ETA) * self.s2 * radii + self.c * self.sq[probes] * (1 + 1e-3)
               - self.psq[probes])
        t32 = thr.astype(np.float32)
        t32 = np.where(t32 < thr, np.nextafter(t32, np.float32(np.inf)), t32)
        qi_parts, row_parts = [], []
        for first in range(0, len(probes), PROBES):
            part = slice(first, first + PROBES)
            q = np.concatenate([self.px[probes[part]] * np.float32(-2),
                                np.ones((len(probes[part]), 1), np.float32)], axis=1).T.copy()
            for lo in range(0, len(self.x), BLOCK):
                s = self.aug[lo:lo + BLOCK] @ q
                r, qi = np.divmod(np.flatnonzero(s <= t32[part]), q.shape[1])  # not 2-D
                qi_parts.append(qi + first)  # nonzero: that one is 20x slower
                row_parts.append(r + lo)
        qi = np.concatenate(qi_parts) if qi_parts else np.zeros(0, np.int64)
        rows = np.concatenate(row_parts) if row_parts else np.zeros(0, np.int64)
        by = np.argsort(qi, kind="stable")
        qi, rows = qi[by], rows[by].astype(np.int64)
        ptr = np.searchsorted(qi, np.arange(len(probes) + 1))
        dist = LM.pairs(self.x, self.x[probes], ptr, rows, "l2", jit=jit)
        keep = dist.astype(np.float64) <= np.repeat(radii, np.diff(ptr))
        ends = np.cumsum(np.bincount(qi[keep], minlength=len(probes)))
        rows, dist = rows[keep], dist[keep]
        return [(rows[a:b], dist[a:b]) for a, b in zip(np.concatenate([[0], ends[:-1]]), ends,
                                                       strict=True)]
