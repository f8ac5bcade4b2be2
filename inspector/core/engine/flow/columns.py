"""A run's candidate list as columns, for runs whose caller reads only what they keep.

A sweep asks each query's pipeline hundreds of times (every cell of its grid, a truth per
weight 10,000 rows deep, its safe depth's search) and reads only the ids each run keeps and,
for the search, each stage's rows kept and note. `runner.outline` runs the route's stages
over a `Columns` instead of a list of rows: positions in the fetch's pool, in the list's order,
and each one's score. A stage kind takes part through the column form registered beside its
function (`registry.columns`): the same parameters, the same pool source, scope verdicts,
score formulas, tie rules and notes, so it keeps the rows its function keeps, in the same
order, with the same scores. Where a stage has no column form, or its parameters need the rows
(LanceDB's own full-text order of tied scores, an expiry read from each row's metadata), the
caller runs the rows (`runner.run`). tests/core/engine/flow/test_columns.py compares the two
over random tables, scopes and parameters; a sweep compares them again on two runs of each
query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Columns:
    """Candidates as positions in `pool` (None before the fetch) and their scores."""

    pool: Any
    at: np.ndarray  # int64 positions in the pool, in the list's order
    score: np.ndarray  # float64, one per position
    note: str = ""  # the note the stage that made these columns gives its run (StageRun.note)

    def keep(self, mask: np.ndarray, note: str = "") -> Columns:
        """The rows where `mask` is true, in order."""
        return Columns(self.pool, self.at[mask], self.score[mask], note)

    def order(self, order: np.ndarray, score: np.ndarray) -> Columns:
        """The rows re-ordered by `order` (positions in this list), each with its new score
        from `score` (one per row of this list, in this list's order)."""
        return Columns(self.pool, self.at[order], score[order])

    def head(self, n: int) -> Columns:
        return Columns(self.pool, self.at[:n], self.score[:n])

    def ids(self) -> list[str]:
        """The rows' ids as the row stages name them (`str` of the pool's id)."""
        if self.pool is None:
            return []
        return list(map(str, self.pool.ids[self.at].tolist()))


NOTHING = Columns(None, np.empty(0, np.int64), np.empty(0, np.float64))


@dataclass(frozen=True)
class Outline:
    """What a run over columns tells of itself: each stage's rows kept and note (`marks`, as
    `FlowTrace.marks` reads them from the rows) and the ids its last stage keeps. `final` is
    the outline itself, so a search reads `x.final.ids` of either."""

    ids: tuple[str, ...]
    kept: tuple[tuple[int, str], ...]

    @property
    def final(self) -> Outline:
        return self

    def marks(self) -> tuple[tuple[int, str], ...]:
        return self.kept


def same_rows(stage: Any) -> Any:
    """A column form for a query stage that reads no rows: its function run on none (it sets
    what later stages read, `ctx.request`), the columns passed on with its note."""
    def run(ctx: Any, cols: Columns, params: dict[str, Any]) -> Columns:
        note = stage(ctx, [], params).note
        return Columns(cols.pool, cols.at, cols.score, note)

    return run


__all__ = ["NOTHING", "Columns", "Outline", "same_rows"]
