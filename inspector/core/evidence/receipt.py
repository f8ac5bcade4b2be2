"""Build the evidence for one query in one place, so the window and `inspector report` agree.

One exhaustive retrieval gives the truth, the sweep and the safe over-fetch; the bundle keeps
a trimmed copy of it (deep enough for the parameters and pool_depth), from which the trace
is derived; a comparison runs the other parameter set for real; the map reads vectors by id.
"""

from __future__ import annotations

from typing import Any

from inspector.core.analysis.compare import compare
from inspector.core.analysis.metrics import all_metrics
from inspector.core.analysis.poolmap import pool_map
from inspector.core.analysis.sweep import (
    Case,
    Grid,
    aggregate,
    as_pool,
    fetch_case,
    needs_exact_truth,
    sweep_pool,
)
from inspector.core.analysis.truth import trim_pool, truth_ids
from inspector.core.engine.ann import facet
from inspector.core.engine.flow.question import Question
from inspector.core.engine.live import CellPools
from inspector.core.engine.params import Params, depths
from inspector.core.engine.pipeline import derive, run
from inspector.core.engine.pool import Query
from inspector.core.evidence.bundle import Evidence, make_bundle
from inspector.core.stores.store import Store

DEFAULT_POOL_DEPTH = 300


def build_receipt(store: Store, query: Query, p: Params,
                  grades: dict[str, float] | None = None,
                  against: tuple[str, Params] | None = None, label: str = "A",
                  grid: Grid | None = None, pool_depth: int = DEFAULT_POOL_DEPTH,
                  with_map: bool = True, question: Question | None = None) -> dict[str, Any]:
    """The whole receipt for query under p, as a bundle dict ready for `bundle.save`;
    `question` is the question model p and query were made from, kept in the receipt."""
    grid = grid or Grid()
    case = Case(name=query.text or query.source, query=query,
                grades=tuple(sorted((grades or {}).items())))
    exact = needs_exact_truth(store, p)  # an ANN index: the truth is its exact search
    exhaustive = fetch_case(store, case, p.with_(exact=True) if exact else p, grid)
    qs = sweep_pool(exhaustive, case, p, grid, table_rows=store.rows,
                    cells=CellPools(store, query, exhaustive) if exact else None)
    if exact:  # no deep pool answers p exactly: the receipt holds `inspector query`'s own
        trace = facet.attach(store, query, run(store, query, p), "auto")
        deep = trace.pool
    else:
        d = depths(p)
        deep = trim_pool(exhaustive, max(pool_depth, d.pool, d.vec_k, d.fts_k))
        trace = derive(deep, p, probe=deep)
    truth = truth_ids(exhaustive, as_pool(exhaustive, p))
    metrics = all_metrics(trace.ids("final"), p.limit, grades or None, truth)
    comparison = None
    if against is not None:
        comparison = compare(store, query, p, against[1], labels=(label, against[0])).to_json()
    # an empty pool has nothing to map: the receipt says so through its diagnosis
    mapped = pool_map(store, trace).to_json() \
        if with_map and query.vector is not None and trace.pool.size else None
    ev = Evidence(metrics=metrics, truth=list(truth), safe=qs.safe.to_json(),
                  sweep=aggregate([qs], p, grid).to_json(), comparison=comparison,
                  pool_map=mapped, judgments=dict(grades) if grades else None)
    return make_bundle(trace, deep, ev, label, question)
