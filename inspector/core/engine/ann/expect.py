"""Expected rows on an indexed table: the exact rank, whether the index lost the row, and the
smallest search knob on a ladder that brings it back (or that only --exact does)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.engine.index_rule import effective_nprobes, used_index
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive, run
from inspector.core.engine.pool import Query
from inspector.core.engine.pools import depth_for, exact_pool
from inspector.core.engine.trace import Trace
from inspector.core.stores.ann.indexes import IndexInfo
from inspector.core.stores.store import Store

NPROBES_LADDER = (24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024)
REFINE_LADDER = (2, 5, 10, 20, 50)
EF_LADDER = (32, 64, 128, 256, 512, 1024, 2048)


@dataclass(frozen=True)
class ExactView:
    """The exact (flat) ranking to EXHAUSTIVE_MAX and the exact pipeline at the trace's depths."""

    index: IndexInfo
    full: Trace  # exact ranking with no limit, cap or min score: exhaustive ranks
    pipeline: Trace  # the exact pipeline with the trace's own parameters


def exact_view(store: Store, query: Query, trace: Trace, depth: int,
               unbounded: Params) -> ExactView | None:
    """None when the trace's search goes through no index."""
    index = used_index(getattr(store, "vector_index", None), trace.params)
    if index is None:
        return None
    p = trace.params
    pool = exact_pool(store, query, p, *depth_for("exhaustive", store, p, depth=depth))
    exact = p.with_(exact=True)
    return ExactView(index=index, full=derive(pool, unbounded.with_(exact=True)),
                     pipeline=derive(pool, exact))


def exact_rank(view: ExactView, rid: Any) -> int | None:
    j = view.full.row_of(rid)
    return int(view.full.rank_after[j]) if j is not None and view.full.rank_after[j] else None


def lost_to_index(view: ExactView, trace: Trace, rid: Any) -> str | None:
    """The reason, when the exact pipeline returns rid and the approximate one does not."""
    j = view.pipeline.row_of(rid)
    if j is None or not view.pipeline.final_rank[j] or rid in set(trace.ids("final")):
        return None
    i = trace.row_of(rid)
    where = (f"the index ranked it {int(trace.vec_rank[i])} in its top "
             f"{trace.depths.vec_k}" if i is not None and trace.vec_rank[i] else
             f"not among the {trace.depths.vec_k} rows the {view.index.type} search returned")
    return (f"lost to the {view.index.type} index: the exact search returns it at rank "
            f"{int(view.pipeline.final_rank[j])}; {where}")


def _returns(store: Store, query: Query, p: Params, rid: Any) -> bool:
    return rid in set(run(store, query, p).ids("final"))


def smallest_fix(store: Store, query: Query, p: Params, index: IndexInfo, rid: Any) -> str:
    """The first knob on a ladder (more probes or ef first, then a refine factor) whose fresh
    approximate run returns rid, as an option to pass; or that only --exact does."""
    if index.is_hnsw:
        base = p.ef or 0
        steps = [("ef", v) for v in EF_LADDER if v > base]
    else:
        lo, _ = effective_nprobes(p)
        steps = [("nprobes", v) for v in NPROBES_LADDER if v > lo]
    steps += [("refine_factor", v) for v in REFINE_LADDER if v > (p.refine_factor or 1)]
    for knob, value in steps:
        if _returns(store, query, p.with_(**{knob: value}), rid):
            return f"--{knob.replace('_', '-')} {value} brings it back"
    tried = ", ".join(f"{k.replace('_', '-')} up to {max(v for kk, v in steps if kk == k)}"
                      for k in dict(steps))
    return f"no {tried} brings it back: only --exact does"
