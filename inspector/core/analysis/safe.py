"""The minimum safe over-fetch: the smallest candidate depth at which scoped recall is full,
and the over-fetch that reaches it, named as the banner names it (diagnosis.safe_words).

Computed with no cap (the cap is reported against, not applied), at the base blend weight
and min score, from the same exhaustive pool a sweep uses. Vector and full-text rankings
only grow a prefix as depth rises, so the answer is the deepest leg rank among the truth rows;
hybrid fused ranks move with leg depth, so depths are tried one by one from the limit up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.analysis.metrics import scoped_recall
from inspector.core.engine.diagnosis import cap_words
from inspector.core.engine.params import Params, overfetch_for
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pool import Pool
from inspector.core.engine.pools import HYBRID_SCAN_MAX


@dataclass(frozen=True)
class SafeDepth:
    """Smallest full-recall depth (None when no depth up to the pool reaches it), and the curve."""

    depth: int | None
    overfetch: float | None
    within_cap: bool | None
    reason: str
    curve: tuple[tuple[float, float | None], ...]  # (over-fetch, scoped recall), cap-free
    truth: int = 0  # size of the in-scope truth's top k; 0 = nothing to recall
    best_recall: float | None = None  # the highest recall seen while scanning depths
    best_depth: int | None = None  # the smallest depth reaching best_recall

    def to_json(self) -> dict[str, Any]:
        return {"truth": self.truth, "best_recall": self.best_recall,
                "best_depth": self.best_depth, "depth": self.depth,
                "overfetch": self.overfetch, "within_cap": self.within_cap,
                "reason": self.reason,
                "curve": [{"overfetch": f, "recall": r} for f, r in self.curve]}


PoolFor = Callable[[Params], tuple[Pool, bool]]


def _recall_at(pool: Pool, p: Params, depth: int, truth: Sequence[Any], k: int,
               pool_for: PoolFor | None = None) -> float | None:
    q = p.with_(overfetch=max(depth, p.limit) / p.limit)
    src = pool if pool_for is None else pool_for(q)[0]
    rows = derive(src, q).stage("final").rows
    return scoped_recall([src.ids[r] for r in rows], truth, k)


def safe_depth(pool: Pool, p: Params, truth: Sequence[Any], k: int,
               overfetch_grid: Sequence[float], max_depth: int,
               scan_limit: int = HYBRID_SCAN_MAX, pool_for: PoolFor | None = None) -> SafeDepth:
    """Scoped recall against over-fetch (the curve) and the smallest depth with recall 1.

    Vector and full-text start at the deepest leg rank among the truth rows (no smaller depth
    can hold them all); hybrid tries every depth from the limit up to scan_limit. With
    `pool_for` (an approximate index: each depth is its own query, see live.CellPools) only
    the grid's depths are tried, so the answer is the smallest grid over-fetch."""
    q = p.with_(cap=0)
    grid_depths = [int(np.ceil(q.limit * f - 1e-9)) for f in overfetch_grid]
    curve = tuple((float(f), _recall_at(pool, q, d, truth, k, pool_for))
                  for f, d in zip(overfetch_grid, grid_depths, strict=True))
    size = len(list(truth)[:k])
    if not size:
        return SafeDepth(None, None, None, "the in-scope truth is empty, so there is nothing "
                         "to recall", curve)
    start = q.limit
    if q.mode != "hybrid" and pool_for is None:
        ranks = pool.vec_rank if q.mode == "vector" else pool.fts_rank
        where = {str(x): i for i, x in enumerate(pool.ids)}
        rows = [where[str(x)] for x in list(truth)[:k]]
        start = max(start, int(ranks[rows].max()) + 1)
    last = max(start, min(max_depth, scan_limit)) if q.mode == "hybrid" else max_depth
    scan = range(start, last + 1) if pool_for is None else sorted(set(grid_depths))
    best, best_d = -1.0, None
    for d, r in ((d, _recall_at(pool, q, d, truth, k, pool_for) or 0.0) for d in scan):
        if r > best:
            best, best_d = r, d
        if r == 1.0:
            cap_ok = p.cap == 0 or d <= p.cap
            why = "" if cap_ok else cap_words(d, p.cap)
            return SafeDepth(d, overfetch_for(d, q.limit), cap_ok, why, curve, size, 1.0, d)
    where_ = (f"at every depth from {start} to {last}" if pool_for is None else
              "at every depth of the grid (an approximate index answers each depth with its "
              "own query, so only the grid's are tried)")
    why = f"scoped recall stays below 1 {where_}; at best {best:.2f} from depth {best_d}"
    if q.mode == "hybrid" and q.filter == "post":
        why += (" (a post-filtered fusion ranks in-scope rows by their global leg ranks, so it "
                "need not reproduce the prefiltered ranking at any depth)")
    return SafeDepth(None, None, False, why, curve, size, best, best_d)


def _stats(xs: list[float]) -> dict[str, float] | None:
    if not xs:
        return None
    a = np.asarray(xs)
    return {"min": float(a.min()), "median": float(np.median(a)),
            "p90": float(np.quantile(a, 0.9)), "max": float(a.max())}


def summarize_safe(items: Sequence[tuple[str | None, SafeDepth]],
                   overfetch_grid: Sequence[float]) -> dict[str, Any]:
    """The distribution over a query set, the share fully served at each grid over-fetch,
    and per scope the factor that serves every query of that scope (None if one never is)."""
    has_truth = [(s, d) for s, d in items if d.truth > 0]
    reached = [d.overfetch for _, d in has_truth if d.overfetch is not None]
    share = []
    for n, f in enumerate(overfetch_grid):
        full = sum(1 for _, d in has_truth if d.curve[n][1] == 1.0)
        share.append({"overfetch": float(f),
                      "share": full / len(has_truth) if has_truth else None})
    scopes: dict[str, list[SafeDepth]] = {}
    for s, d in has_truth:
        scopes.setdefault(s or "(none)", []).append(d)
    per_scope = []
    for s, ds in sorted(scopes.items()):
        vals = [d.overfetch for d in ds if d.overfetch is not None]
        per_scope.append({"scope": s, "queries": len(ds), "unreachable": len(ds) - len(vals),
                          "safe_overfetch": max(vals) if vals and len(vals) == len(ds) else None,
                          "overfetch": _stats(vals)})
    return {"queries": len(items), "with_truth": len(has_truth), "reached": len(reached),
            "overfetch": _stats(reached), "share_full_at": share, "scopes": per_scope}
