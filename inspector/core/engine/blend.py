"""Importance blending, the one place its formula lives (the window's plots call it too),
and what the formula lets a recall audit skip: its outrank shortcut (`own_rank`).

A recall audit asks each memory with its own vector. Under a vector pipeline a row's score is
its own: `vector_score(d)` times the importance multiplier, which is at most 1 (importance is
clamped to [0, 1], the weight is in [0, 1]). So a row scores at least the probe's own score s
only where `vector_score(d) >= s`, i.e. within `outrank_radius(s)` of the probe; every other
row scores below s and is blended after it. When every row within the radius lies inside the
pool (at most `depth` of them: the pool is the first `depth` rows by distance, ties by row
id), the probe's blended rank is its rank among those rows, in the order `derive` gives them:
the same score functions (`blend_scores`), the same re-sort (`ties.resort`) of the rows in
their raw order. Every row ahead of the probe then scores at least its score, so the probe is
returned at that rank when its score passes the min score and the rank is within the limit.
`outrank_refusal(p)` is the one place that says for which parameters this holds; `own_rank`
says why when it cannot answer one probe (the audit then runs that probe's whole pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the window's plots import this module: it imports no more at run time
    from inspector.core.engine.params import Params


def importance_used(importance: np.ndarray, missing: np.ndarray, default: float) -> np.ndarray:
    """clamp(importance ?? default, 0, 1): missing rows take the default; a stored NaN stays
    NaN, as `??` keeps it in the real systems."""
    return np.clip(np.where(missing, default, importance), 0.0, 1.0)


def multiplier(used: np.ndarray, w: float) -> np.ndarray:
    """(1 - w) + w * importance. At w = 0 it is exactly 1: today's ranking never reads
    importance, not even a NaN one."""
    if not w:
        return np.ones(len(used))
    return (1.0 - w) + w * used


def vector_score(dist: np.ndarray) -> np.ndarray:
    """A vector pipeline's base score, 1 / (1 + _distance): the row's own, at most 1."""
    return 1.0 / (1.0 + dist)


def blend_scores(base: np.ndarray, importance: np.ndarray, missing: np.ndarray, default: float,
                 w: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(importance used, multiplier, blended score) per row: base * ((1 - w) + w * imp)."""
    used = importance_used(importance, missing, default)
    mult = multiplier(used, w)
    return used, mult, base * mult


# --- the recall audit's outrank shortcut -------------------------------------------------
_ROUNDING = 1e-9  # far above the float64 rounding of the score (a few ulps)


def outrank_refusal(p: Params) -> str | None:
    """Why a probe's rank under p cannot be read off the rows within its outrank radius (None:
    it can). Only a vector pipeline scores a row by its own distance and importance alone.
    Under an active scope the rows are those the pool can hold and the scope filter keeps:
    the caller restricts them (`analysis.audit.outrank`)."""
    if p.mode != "vector":
        return f"a {p.mode} pipeline's score depends on the other rows (fused ranks)"
    if p.distance != "l2":
        return "the radius bound is proved for squared L2 distances"
    if p.tie_rule != "lancedb":
        return "equal scores are ordered by id, not by the pool's order"
    return None


def outrank_radius(own: float) -> float:
    """A squared distance past which no row's score reaches `own` (NaN where none is known:
    a score at or below 0, or NaN)."""
    if not own > 0:
        return float("nan")
    return (1.0 + _ROUNDING) / own - 1.0 + _ROUNDING


@dataclass(frozen=True)
class Near:
    """The rows within a probe's radius (every one of them): LanceDB's `_distance` (float32),
    row ids, importance as `pool` reads it (float64, and which rows have none), and which of
    them is the probe's own row (-1: none)."""

    dist: np.ndarray
    rowids: np.ndarray
    importance: np.ndarray
    missing: np.ndarray
    own: int


def own_score(dist: float, importance: float, missing: bool, p: Params) -> float:
    """The probe's own blended score, as `derive` computes it for its row."""
    base = vector_score(np.array([np.float32(dist)], np.float64))
    score = blend_scores(base, np.array([importance]), np.array([missing]),
                         p.default_importance, p.blend)[2]
    return float(score[0])


def own_rank(near: Near, p: Params) -> tuple[int | None, str]:
    """The probe's 1-based rank in the final list, or None and why the whole pipeline must
    answer (not returned, or the rows near it do not fit in the pool)."""
    from inspector.core.engine import ties
    from inspector.core.engine.params import depths

    d = depths(p)
    if near.own < 0:
        return None, "its own row is not within its radius"
    if len(near.dist) > d.pool:
        return None, "more rows within the outrank radius than the pool holds"
    raw = np.lexsort((near.rowids, near.dist))  # the pool's order: distance, then row id
    base = vector_score(near.dist[raw].astype(np.float64))
    score = blend_scores(base, near.importance[raw], near.missing[raw],
                         p.default_importance, p.blend)[2]
    order = ties.resort(None, p, np.arange(len(raw)), score)
    at = int(np.flatnonzero(raw[order] == near.own)[0])
    mine = score[order[at]]
    if not mine >= p.min_score:
        return None, "its own score is below the min score"
    if at >= p.limit:
        return None, "rows near it outrank it past the limit"
    return at + 1, ""
