"""What one pipeline run produced, stage by stage, as plain data; JSON out through one function."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from inspector.core.engine.index_rule import index_json
from inspector.core.engine.params import Depths, Params
from inspector.core.engine.pool import Pool
from inspector.core.engine.ties import TieGroup, find_ties, marks
from inspector.core.jsonio import plain

STAGES = ("raw", "scoped", "blended", "final")
SCHEMA_VERSION = 1

# What became of a pool row, in pipeline order; the one vocabulary of tables, plots, the
# detail pane, CLI text and receipts.
OUTCOMES = ("returned", "past_limit", "below_min_score", "out_of_scope", "not_fetched")
OUTCOME_LABELS = {
    "returned": "returned",
    "past_limit": "past the limit",
    "below_min_score": "below min score",
    "out_of_scope": "out of scope",
    "not_fetched": "not fetched",
}


@dataclass(frozen=True)
class Stage:
    name: str
    rows: np.ndarray  # pool row indices, in this stage's order

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(frozen=True)
class Fix:
    """A change of parameters that addresses a diagnosis, e.g. "Apply over-fetch 2.5"."""

    label: str
    changes: tuple[tuple[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "changes": dict(self.changes)}


@dataclass(frozen=True)
class Diagnosis:
    code: str  # query_or_index | scope_starvation | scope_dominated | min_score_cut | ok
    message: str
    fixes: tuple[Fix, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message,
                "fixes": [f.to_json() for f in self.fixes]}


@dataclass(frozen=True)
class Expectation:
    """Where an expected id ends up, and the smallest pool depth that would return it."""

    id: str
    exhaustive_rank: int | None
    dropped_at: str | None  # raw | scoped | final | index | None when returned
    reason: str
    min_depth: int | None
    min_overfetch: float | None
    index_fix: str | None = None  # on an indexed table: the smallest knob that returns it

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "exhaustive_rank": self.exhaustive_rank,
               "dropped_at": self.dropped_at, "reason": self.reason,
               "min_depth": self.min_depth, "min_overfetch": self.min_overfetch}
        return out | ({"index_fix": self.index_fix} if self.index_fix else {})


@dataclass(frozen=True)
class IndexFacet:
    """The exact (flat) search beside the approximate one at the same depth and filter."""

    index_type: str
    depth: int  # the vector leg's depth both rankings were cut at
    exact_rank: np.ndarray  # per pool row: 1-based rank in the exact top `depth`, 0 beyond
    exact_ids: tuple[Any, ...]  # the exact top `depth`, in order
    lost: tuple[Any, ...]  # exact top `depth` rows the index did not return, in exact order
    recall: float | None  # ANN recall at the limit: |exact top L & approx top L| / |exact top L|
    exact_final: tuple[Any, ...]  # what the exact pipeline returns (same scope, blend, limit)
    lost_final: tuple[Any, ...]  # returned by the exact pipeline, not by the approximate one

    def to_json(self) -> dict[str, Any]:
        return {"index_type": self.index_type, "depth": self.depth,
                "lostToIndex": len(self.lost), "ann_recall": self.recall,
                "lost": [plain(x) for x in self.lost],
                "exact_final": [plain(x) for x in self.exact_final],
                "lost_final": [plain(x) for x in self.lost_final]}


@dataclass(frozen=True)
class Trace:
    """Per-row arrays are indexed like the pool; NaN or 0 where a row is not in that stage."""

    pool: Pool
    params: Params
    depths: Depths
    vec_rank: np.ndarray  # 1-based rank in the vector leg within its k, 0 if absent
    fts_rank: np.ndarray
    base: np.ndarray
    fused: np.ndarray
    importance_used: np.ndarray
    multiplier: np.ndarray
    score: np.ndarray
    raw_rank: np.ndarray  # 1-based positions per stage, 0 if absent
    rank_before: np.ndarray  # position in the scoped stage (ordered by base score)
    rank_after: np.ndarray  # position in the blended stage
    final_rank: np.ndarray
    stages: tuple[Stage, ...]
    counters: dict[str, int]
    diagnosis: Diagnosis
    warnings: tuple[str, ...] = ()
    expect: tuple[Expectation, ...] = field(default=())
    index_facet: IndexFacet | None = None  # set by index_facet.attach on an indexed table

    def stage(self, name: str) -> Stage:
        return self.stages[STAGES.index(name)]

    def ids(self, name: str) -> list[Any]:
        return [self.pool.ids[i] for i in self.stage(name).rows]

    @cached_property
    def _outcomes(self) -> np.ndarray:
        out = np.full(self.pool.size, "not_fetched", dtype=object)
        raw = self.stage("raw").rows
        out[raw] = np.where(self.pool.in_scope[raw], "past_limit", "out_of_scope")
        blended = self.stage("blended").rows
        low = blended[~(self.score[blended] >= self.params.min_score)]
        out[low] = "below_min_score"
        out[self.stage("final").rows] = "returned"
        out.flags.writeable = False
        return out

    def outcomes(self) -> np.ndarray:
        """What became of each pool row, one of OUTCOMES (not_fetched: outside the raw pool at
        these depths). Computed once per trace; read-only."""
        return self._outcomes

    def outcome(self, i: int) -> str:
        return str(self._outcomes[i])

    def fates(self) -> dict[str, list[str]]:
        """Per stage, what it did with each of its rows in order: `kept` (the next stage has
        it), the row's outcome where it leaves the pipeline, `returned` in the final stage."""
        out: dict[str, list[str]] = {}
        for s, nxt in zip(self.stages, (*self.stages[1:], None), strict=True):
            kept = set() if nxt is None else {int(i) for i in nxt.rows}
            out[s.name] = ["kept" if int(i) in kept else self.outcome(int(i)) for i in s.rows]
        return out

    def outcome_groups(self) -> dict[str, np.ndarray]:
        """Raw-stage pool rows grouped by outcome (every outcome present, maybe empty)."""
        raw = self.stage("raw").rows
        got = self._outcomes[raw]
        return {k: raw[got == k] for k in OUTCOMES if k != "not_fetched"}

    @cached_property
    def _ties(self) -> tuple[TieGroup, ...]:
        kept = len(self.stage("blended")) - self.counters["belowMinScore"]
        return find_ties(self.pool, self.params, self.depths, self.vec_rank, self.fts_rank,
                         self.score, self.stage("blended").rows, kept)

    def ties(self) -> tuple[TieGroup, ...]:
        """Every group of rows whose scores are equal at the system's precision, per stage
        (hybrid legs `vec`/`fts`, `raw`, `blended`), each saying whether it straddles a cut.
        Computed once per trace."""
        return self._ties

    def tie_marks(self, stage: str) -> dict[int, TieGroup]:
        """Pool row -> tie group for the rows a stage shows (scoped: raw's, final: blended's)."""
        return marks(self.ties(), stage)

    def row_of(self, row_id: Any) -> int | None:
        hits = np.flatnonzero(self.pool.ids == row_id)
        return int(hits[0]) if len(hits) else None

    def candidate(self, i: int, rank: int | None = None) -> dict[str, Any]:
        """Every fact about pool row i, as JSON-ready values."""
        p = self.pool
        vec = bool(self.vec_rank[i])
        return {
            "id": plain(p.ids[i]), "rank": rank,
            "raw_rank": _rank(self.raw_rank[i]), "vec_rank": _rank(self.vec_rank[i]),
            "fts_rank": _rank(self.fts_rank[i]),
            "distance": _num(p.vec_dist[i]) if vec else None,
            "vector_score": _num(1.0 / (1.0 + p.vec_dist[i])) if vec else None,
            "fts_score": _num(p.fts_score[i]) if self.fts_rank[i] else None,
            "fused_score": _num(self.fused[i]), "base_score": _num(self.base[i]),
            "importance": plain(p.columns[p.roles["importance"]][i])
            if p.roles.get("importance") else None,
            "importance_used": _num(self.importance_used[i]),
            "multiplier": _num(self.multiplier[i]), "score": _num(self.score[i]),
            "in_scope": bool(p.in_scope[i]), "scope_rule": p.scope_rule[i],
            "pushdown_match": bool(p.pushdown_match[i]),
            "rank_before": _rank(self.rank_before[i]), "rank_after": _rank(self.rank_after[i]),
            "final_rank": _rank(self.final_rank[i]),
            "exact_rank": _rank(self.index_facet.exact_rank[i]) if self.index_facet else None,
            "columns": {c: plain(v[i]) for c, v in p.columns.items()},
        }

    def to_json(self) -> dict[str, Any]:
        p = self.pool
        params = self.params.to_json()
        params.update({"depths": self.depths.to_json(), "pushdown_sql": p.pushdown_sql or None,
                       "pushdown_note": p.pushdown_note,
                       "index": index_json(p.index, self.params, self.depths.vec_k)})
        return {
            "schema": SCHEMA_VERSION,
            "store": dict(p.store),
            "roles": dict(p.roles),
            "query": p.query.to_json(),
            "params": params,
            "stages": [{"name": s.name, "count": len(s),
                        "candidates": [self.candidate(int(i), r + 1)
                                       for r, i in enumerate(s.rows)]} for s in self.stages],
            "counters": dict(self.counters),
            "diagnosis": self.diagnosis.to_json(),
            "warnings": list(self.warnings),
            "expect": [e.to_json() for e in self.expect],
            "ties": [g.to_json() for g in self.ties()],
            "index_facet": self.index_facet.to_json() if self.index_facet else None,
        }


def _rank(r: Any) -> int | None:
    return int(r) if r else None


def _num(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None
