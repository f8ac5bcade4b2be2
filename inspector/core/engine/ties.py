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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.engine.params import Depths, Params
from inspector.core.engine.pool import Leg, Pool
from inspector.core.jsonio import plain

_FTS_ONLY = 1 << 40  # merge key offset: full-text-only rows follow every vector result

RULE_TEXT = {
    "lancedb": "LanceDB's order: equal distances by row id; RRF as LanceDB's RRFReranker "
               "(float32 score, vector results first, stable sort); stable re-sorts",
    "id": "RRF float64 score, ties by id ascending; re-sorts break ties by id ascending",
}


@dataclass(frozen=True)
class TieGroup:
    """Rows of one stage whose scores are equal at the precision the system uses."""

    stage: str  # vec | fts (a hybrid's legs) | raw | blended
    rows: tuple[int, ...]  # pool row indices inside the stage, in the stage's order
    ids: tuple[Any, ...]
    score: float  # the tied value: a distance, a BM25 score, a fused or a blended score
    measure: str  # distance | bm25 | fused | score
    cut: str | None  # the cut the group straddles: vec_k | fts_k | depth | limit; None if none
    order: str  # how the real system orders the group
    arbitrary: bool  # True when the real system's order among them is not determined
    beyond: int = 0  # 1 when the tie continues past the stage's end (a fetch sees one more)

    @property
    def at_cut(self) -> bool:
        return self.cut is not None

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "ids": [plain(x) for x in self.ids],
                "score": self.score, "at_cut": self.at_cut, "cut": self.cut,
                "measure": self.measure, "order": self.order, "arbitrary": self.arbitrary,
                "beyond": self.beyond}


def fuse(pool: Pool, p: Params, vr: np.ndarray, fr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every fused candidate in the system's order, and the fused score per pool row (NaN for
    rows in neither leg). vr, fr: 1-based ranks within each leg's k, 0 outside."""
    vec, fts = vr > 0, fr > 0
    with np.errstate(divide="ignore"):
        fused = (np.where(vec, 1.0 / (p.rrf_k + vr), 0.0)
                 + np.where(fts, 1.0 / (p.rrf_k + fr), 0.0))
    if p.tie_rule == "lancedb":
        fused = fused.astype(np.float32).astype(np.float64)
        then = np.where(vec, vr, _FTS_ONLY + fr)
    else:
        then = pool.id_order
    cand = np.flatnonzero(vec | fts)
    order = cand[np.lexsort((then[cand], -fused[cand]))]
    return order, np.where(vec | fts, fused, np.nan)


def resort(pool: Pool | None, p: Params, rows: np.ndarray, score: np.ndarray) -> np.ndarray:
    """rows by score descending (NaN last); equal scores keep their order, or go by id (the
    pool's id order: None only under LanceDB's rule, which never reads it)."""
    if p.tie_rule == "id":
        assert pool is not None
        return rows[np.lexsort((pool.id_order[rows], -score[rows]))]
    return rows[np.argsort(-score[rows], kind="stable")]


def _runs(values: np.ndarray, n: int, cut: int) -> list[tuple[int, int, int]]:
    """Runs of equal values among the first n of `values` (sorted; entries past n are rows
    known to lie beyond the stage): (start, end inside the stage, end), for runs of two or
    more inside the stage or that straddle the cut. Vectorised: the window calls it per tick."""
    v = np.asarray(values, np.float64)
    if n == 0 or not len(v):
        return []
    new = np.ones(len(v), bool)
    new[1:] = v[1:] != v[:-1]  # NaN never equals itself: NaNs never tie
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(v))
    starts, ends = starts[starts < n], ends[starts < n]
    inside = np.minimum(ends, n)
    keep = (inside - starts >= 2) | ((starts < cut) & (cut < ends))
    return list(zip(starts[keep].tolist(), inside[keep].tolist(), ends[keep].tolist(),
                    strict=True))


def _leg_values(leg: Leg, c: int) -> np.ndarray:
    """The leg's first c values and the one just past them: exactly what a fetch to depth c
    knows, so a deep cached pool and a fresh shallow run report the same groups."""
    if c < len(leg.values):
        return leg.values[: c + 1]
    if np.isnan(leg.next_value):
        return leg.values
    return np.append(leg.values, leg.next_value)


def _leg_order(pool: Pool, name: str) -> tuple[str, bool]:
    if name == "vec":
        return "row id (LanceDB's flat vector search)", False
    if pool.fts_ties == "rowid":
        return "rowid (the SQLite FTS5 table)", False
    return "arbitrary: LanceDB's full-text search keeps any order (shown by row id)", True


def find_ties(pool: Pool, p: Params, d: Depths, vr: np.ndarray, fr: np.ndarray,
              score: np.ndarray, blended: np.ndarray, kept: int) -> tuple[TieGroup, ...]:
    """Every tie group of the legs (hybrid), the raw stage and the blended stage."""
    out: list[TieGroup] = []

    def add(stage: str, rows: np.ndarray, values: np.ndarray, n: int, cut: int, cut_name: str,
            measure: str, order: str, arbitrary: bool) -> None:
        for s, e, end in _runs(values, n, cut):
            out.append(TieGroup(stage, tuple(int(i) for i in rows[s:e]),
                                tuple(pool.ids[i] for i in rows[s:e]), float(values[s]),
                                measure, cut_name if s < cut < end else None, order, arbitrary,
                                beyond=end - e))

    legs = [("vec", pool.vec_leg, d.vec_k, "distance"), ("fts", pool.fts_leg, d.fts_k, "bm25")]
    for name, leg, k, measure in legs:
        if leg is None or not k:
            continue
        c = min(k, len(leg.rows))
        stage, cut_name = (name, f"{name}_k") if p.mode == "hybrid" else ("raw", "depth")
        add(stage, leg.rows, _leg_values(leg, c), c, c, cut_name, measure, *_leg_order(pool, name))
    if p.mode == "hybrid":
        order, fused = fuse(pool, p, vr, fr)
        c = min(d.pool, len(order))
        rule = ("merge order: vector results first, then full-text-only rows (a stable sort)"
                if p.tie_rule == "lancedb" else "id ascending")
        add("raw", order, fused[order], c, c, "depth", "fused", rule, False)
    rule = "their scoped order (a stable sort)" if p.tie_rule == "lancedb" else "id ascending"
    add("blended", blended, score[blended], len(blended), min(p.limit, kept), "limit", "score",
        rule, False)
    return tuple(out)


STAGE_TIES = {"raw": "raw", "scoped": "raw", "blended": "blended", "final": "blended"}


def marks(groups: tuple[TieGroup, ...], stage: str) -> dict[int, TieGroup]:
    """Pool row -> its tie group, for the rows a stage shows (scoped rows carry the raw stage's
    groups, final rows the blended stage's)."""
    want = STAGE_TIES.get(stage, stage)
    return {i: g for g in groups if g.stage == want for i in g.rows}
