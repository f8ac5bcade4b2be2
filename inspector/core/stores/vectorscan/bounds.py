"""Which rows of a block may be among a query's nearest: one matrix product per tile of
queries, read as a lower and an upper bound of every exact distance.

The product's distance differs from LanceDB's exact one by float32 rounding alone, which
`margin` bounds (relative to the squared norms for L2, absolute for cosine). Both bounds are
kept as one float32 array `s` per tile and a per-query affine map:

    lower_ij = a_i * s_ij + c_i            upper_ij = a_i * (s_ij + w_j) + d_i

L2: s = -2 q.x + (1 - eps) |x|^2, a = 1, c = (1 - eps) |q|^2, d = (1 + eps) |q|^2,
w = 2 eps |x|^2. Cosine: s = -q.x / |x|, a = 1 / |q|, c = 1 - eps, d = 1 + eps, w = 0.
So "lower <= bound" is one comparison of `s` with a per-query threshold and a k-th upper
bound is a per-query map of a k-th `s + w`: one pass over the tile after the product
instead of one per term. The exact distances are computed apart (`kernels`), so these
bounds only choose which rows get one; a row is dropped only when its lower bound is above
a bound some k rows' exact distances stay under.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def margin(dim: int) -> float:
    """A bound on the matrix product's and LanceDB's float32 rounding, relative to the
    squared norms (L2) or absolute (cosine): about dim ulps each, with room to spare."""
    return 4.0 * dim * 2.0**-24 + 1e-6


class Block:
    """What every tile of one block shares: its vectors and the per-row terms."""

    def __init__(self, x: np.ndarray, sq: np.ndarray, distance: str) -> None:
        self.x, self.distance = x, distance
        eps = margin(x.shape[1])
        if distance == "cosine":
            self.norm = np.sqrt(sq)
            self.row_term: np.ndarray | None = None
            self.w: np.ndarray | None = None
        else:
            self.row_term = (sq * F32(1 - eps)).astype(F32)
            self.w = (sq * F32(2 * eps)).astype(F32)


class Tile:
    """One block against a tile of queries (`q` float32, `q_sq` their squared norms)."""

    def __init__(self, blk: Block, q: np.ndarray, q_sq: np.ndarray) -> None:
        eps = margin(blk.x.shape[1])
        self.blk = blk
        if blk.distance == "cosine":
            s = (q * F32(-1)) @ blk.x.T  # negating is exact: s = -(q.x), bit for bit
            s /= blk.norm
            self.a = 1.0 / np.sqrt(q_sq)
            self.c = np.full(len(q), 1.0 - eps)
            self.d = np.full(len(q), 1.0 + eps)
        else:
            s = (q * F32(-2)) @ blk.x.T  # scaling by a power of two is exact
            s += blk.row_term
            self.a = np.ones(len(q))
            self.c = (1.0 - eps) * q_sq
            self.d = (1.0 + eps) * q_sq
        self.s = s

    def candidates(self, bounds: np.ndarray) -> np.ndarray:
        """(queries, rows) bool: rows whose lower bound is at most the query's bound."""
        thr = (bounds.astype(np.float64) - self.c) / self.a
        with np.errstate(over="ignore"):
            t32 = thr.astype(F32)
        t32 = np.where(t32 < thr, np.nextafter(t32, F32(np.inf)), t32)  # never below thr
        return self.s <= t32[:, None]

    def kth_upper(self, rows: np.ndarray, rank: int) -> np.ndarray:
        """For the tile's queries `rows`, the rank-th smallest upper bound over the block's
        rows (float32, rounded up)."""
        high = self.s[rows]
        if self.blk.w is not None:
            high += self.blk.w
        kth = np.partition(high, rank - 1, axis=1)[:, rank - 1].astype(np.float64)
        up = self.a[rows] * kth + self.d[rows]
        up += np.abs(up) * 2.0**-40  # the map's own float64 rounding, upward
        with np.errstate(over="ignore"):
            u32 = up.astype(F32)
        return np.where(u32 < up, np.nextafter(u32, F32(np.inf)), u32)
