"""The nprobes axis of a sweep: scoped recall of the approximate pipeline against nprobes x
over-fetch, measured against the exact (flat) ranking, never the index's own.

Per query: one exact pool for the truth, and per nprobes value one approximate pool deep
enough for every over-fetch. Where the index's prefix rule holds (IVF without refine) the
over-fetch cells derive from that pool; elsewhere each cell is a fresh search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.analysis import metrics as M
from inspector.core.analysis.sweep import Case, Grid, fetch_case
from inspector.core.analysis.truth import scoped_pool, truth_ids
from inspector.core.engine.index_rule import prefix_exact
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pools import fetch_for
from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store


@dataclass(frozen=True)
class NprobesSweep:
    """Mean scoped recall@k per (nprobes, over-fetch), over the queries."""

    nprobes: tuple[int, ...]
    overfetch: tuple[float, ...]
    recall: np.ndarray  # shape (len(nprobes), len(overfetch)); NaN where no query has truth
    k: int
    queries: int

    def to_json(self) -> dict[str, Any]:
        return {"axis": "nprobes x overfetch", "metric": f"scoped_recall@{self.k}",
                "truth": "exact (flat) search", "nprobes": list(self.nprobes),
                "overfetch": list(self.overfetch), "queries": self.queries,
                "recall": [[None if np.isnan(v) else round(float(v), 6) for v in row]
                           for row in self.recall]}


def parse_nprobes(spec: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(x) for x in spec.split(",") if x.strip())
    except ValueError:
        vals = ()
    if not vals or any(v < 1 for v in vals) or len(vals) > 50:
        raise InspectorError(f"--grid-nprobes takes whole numbers >= 1 like 5,10,20,40, not "
                             f"{spec!r}.")
    return vals


def _cell_ids(store: Store, case: Case, p: Params, pool: Any) -> list[Any]:
    if pool is not None:
        return [pool.ids[r] for r in derive(pool, p).stage("final").rows]
    return list(derive(fetch_for(store, case.query, p), p).ids("final"))


def nprobes_sweep(store: Store, cases: Sequence[Case], base: Params, grid: Grid,
                  nprobes: Sequence[int], k: int | None = None) -> NprobesSweep:
    """Scoped recall@k of every (nprobes, over-fetch) cell, at the base blend and min score."""
    if store.vector_index is None:
        raise InspectorError(f"Table '{store.table_name}' has no vector index: nprobes "
                             "changes nothing on a flat search.")
    acc = np.zeros((len(nprobes), len(grid.overfetch)))
    seen = np.zeros_like(acc)
    for case in cases:
        p = case.params(base).with_(exact=False)
        kk = k or p.limit
        exact = fetch_case(store, case, p.with_(exact=True), grid)
        sub = scoped_pool(exact)
        for a, n in enumerate(nprobes):
            pn = p.with_(nprobes=n)
            pool = fetch_case(store, case, pn, grid) if prefix_exact(store.vector_index, pn) \
                else None
            for b, f in enumerate(grid.overfetch):
                cell = pn.with_(overfetch=f)
                truth = truth_ids(exact, cell.with_(exact=True), sub)
                got = M.all_metrics(_cell_ids(store, case, cell, pool), kk, None, truth)
                v = got.get(f"scoped_recall@{kk}")
                if v is not None:
                    acc[a, b] += v
                    seen[a, b] += 1
    recall = np.where(seen > 0, acc / np.maximum(seen, 1), np.nan)
    return NprobesSweep(tuple(nprobes), tuple(grid.overfetch), recall, k or base.limit,
                        len(cases))


def format_nprobes(s: NprobesSweep) -> str:
    head = "nprobes \\ overfetch " + " ".join(f"{f:>6g}" for f in s.overfetch)
    rows = [f"{n:>19} " + " ".join("     -" if np.isnan(v) else f"{v:6.3f}" for v in row)
            for n, row in zip(s.nprobes, s.recall, strict=True)]
    return "\n".join([f"scoped recall@{s.k} against the exact search, {s.queries} queries",
                      head, *rows])
