"""Tie rules: how each real system orders rows whose scores are equal, and where ties fall.

Ranks that tie are common (RRF scores of rows at leg ranks (1, 2) and (2, 1) are equal), so the
order among them decides results. `Params.tie_rule` names the system's rule:

- `lancedb`: LanceDB's own order. A flat vector search sorts equal distances by row id. Hybrid
  search is LanceDB's `RRFReranker`: each row's score is the sum of `1 / (k + rank)` over the
  legs holding it (rank 1-based, vector leg first), stored as float32; the vector results come
  first, then the full-text-only rows in full-text order, and a stable descending sort by that
  float32 score keeps this merge order among equal scores. A re-sort by blended score is stable.
- `id`: the docs engine's fusion: the float64 RRF score, ties by id ascending; a re-sort by
  blended score also breaks ties by id ascending.

LanceDB's full-text search returns equal BM25 scores in an arbitrary order (even inside the
top k, and not a prefix across depths); nobody can reproduce that, so such groups are marked
`arbitrary`, and the inspector shows them by row id.

The classic stages apply these rules to a run's rows (`flow/stages/classic.py`: `fuse`;
`flow/stages/importance.py`: `resort_order`); `resort` here is the same re-sort over a
pool's rows, for the pool-level outrank analysis (`blend.own_rank`). `tied_runs` finds the
groups of equal values a stage reports as ties.
"""

from __future__ import annotations

import numpy as np

from inspector.core.engine.params import Params
from inspector.core.engine.pool import Pool


def score_order(score: np.ndarray, rule: str, id_rank: np.ndarray | None = None
                ) -> np.ndarray:
    """The one tie rule: positions by score descending (NaN last); equal scores keep their
    order (`lancedb`: a stable sort) or go by `id_rank` ascending (`id`)."""
    if rule == "id":
        if id_rank is None:
            raise ValueError("tie rule id needs the rows' id ranks")
        return np.lexsort((id_rank, -score))
    return np.argsort(-score, kind="stable")


def resort(pool: Pool | None, p: Params, rows: np.ndarray, score: np.ndarray) -> np.ndarray:
    """rows by score_order (the pool's id order: None only under LanceDB's rule, which never
    reads it)."""
    rank = pool.id_order[rows] if p.tie_rule == "id" and pool is not None else None
    return rows[score_order(score[rows], p.tie_rule, rank)]


def tied_runs(values: np.ndarray, n: int, cut: int) -> list[tuple[int, int, int]]:
    """Runs of equal values among the first n of `values` (entries past n lie beyond the
    stage): (start, end inside, end) for runs of two or more inside, or across the cut."""
    v = np.asarray(values, np.float64)
    if n == 0 or not len(v):
        return []
    tied = v[1:] == v[:-1]  # NaN never equals itself: NaNs never tie
    if not tied.any():  # every run one value long: none of two, none across a cut
        return []
    new = np.ones(len(v), bool)
    new[1:] = ~tied
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(v))
    starts, ends = starts[starts < n], ends[starts < n]
    inside = np.minimum(ends, n)
    keep = (inside - starts >= 2) | ((starts < cut) & (cut < ends))
    return list(zip(starts[keep].tolist(), inside[keep].tolist(), ends[keep].tolist(),
                    strict=True))
