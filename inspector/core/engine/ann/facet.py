"""The index facet: the exact ranking beside the approximate one, and the rows the index lost.

On a table whose vector search goes through an ANN index, one bounded flat search at the same
depth and filter (LanceDB's own `bypass_vector_index`) gives the exact ranking; the same
pipeline derived from it says what the user would have got without the index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from inspector.core.engine.index_rule import effective_nprobes, used_index
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pool import Pool, Query
from inspector.core.engine.pools import exact_pool
from inspector.core.engine.trace import Diagnosis, Fix, IndexFacet, Trace
from inspector.core.stores.store import Store


def _leg_ids(pool: Pool, k: int) -> list[Any]:
    return [] if pool.vec_leg is None else list(pool.ids[pool.vec_leg.rows[:k]])


def facet_from(trace: Trace, exact: Pool) -> tuple[IndexFacet, Trace]:
    """Compare the approximate trace with the exact pool fetched at the same depths."""
    p = trace.params
    depth = trace.depths.vec_k
    exact_trace = derive(exact, p.with_(exact=True))
    exact_ids = _leg_ids(exact, depth)
    approx = set(_leg_ids(trace.pool, depth))
    lost = tuple(x for x in exact_ids if x not in approx)
    top = exact_ids[: p.limit]
    recall = (len(set(top) & set(_leg_ids(trace.pool, p.limit))) / len(top)) if top else None
    pos = {x: r for r, x in enumerate(exact_ids, 1)}
    rank = np.array([pos.get(x, 0) for x in trace.pool.ids], np.int64)
    returned = set(trace.ids("final"))
    exact_final = tuple(exact_trace.ids("final"))
    facet = IndexFacet(index_type=trace.pool.index.type if trace.pool.index else "",
                       depth=depth, exact_rank=rank, exact_ids=tuple(exact_ids), lost=lost,
                       recall=recall, exact_final=exact_final,
                       lost_final=tuple(x for x in exact_final if x not in returned))
    return facet, exact_trace


def _knob_hint(trace: Trace) -> str:
    p = trace.params
    index = trace.pool.index
    refine = (f"raise --refine-factor (now {p.refine_factor})" if p.refine_factor
              else "add --refine-factor")
    if index is not None and index.is_hnsw:
        return f"raise --ef, {refine}, or use --exact"
    lo, _ = effective_nprobes(p)
    return f"raise --nprobes (now {lo}), {refine}, or use --exact"


def _diagnosis(trace: Trace, facet: IndexFacet, exact_trace: Trace) -> Diagnosis | None:
    p = trace.params
    c, ec = trace.counters, exact_trace.counters
    kind = facet.index_type
    if (p.filter == "pushdown" and p.scope_spec().active and c["returned"] < p.limit
            and ec["returned"] > c["returned"]):
        return Diagnosis("index_starvation", (
            f"The scope is pushed down into an {kind} search, which returned "
            f"{c['rawCandidates']} rows although the exact search finds {ec['rawCandidates']} "
            f"in scope: the probed partitions hold too few in-scope rows. "
            f"{_knob_hint(trace)[0].upper()}{_knob_hint(trace)[1:]}; "
            "--expect ID names the smallest fix for a row."), _EXACT)
    if facet.lost_final:
        shown = ", ".join(str(x) for x in facet.lost_final[:3])
        more = f" and {len(facet.lost_final) - 3} more" if len(facet.lost_final) > 3 else ""
        return Diagnosis("index_recall", (
            f"The {kind} index lost {len(facet.lost_final)} row(s) the exact search returns "
            f"with the same scope, blend and min score ({shown}{more}); ANN recall at "
            f"{p.limit} is {'-' if facet.recall is None else f'{facet.recall:.0%}'}. "
            f"To get them back, {_knob_hint(trace)}; "
            "--expect ID names the smallest fix for a row."), _EXACT)
    return None


_EXACT = (Fix("Search exactly (bypass the index)", (("exact", True),)),)


AUTO_MAX_ROWS = 20_000  # `auto` compares with an exact search up to this many rows
FACET_MODES = ("auto", "on", "off")


def wanted(store: Store, mode: str) -> bool:
    """Whether `attach` should pay for the exact search: always (on), never (off), or while
    the table is small enough that an exact flat search costs about what the indexed one does
    (auto)."""
    return mode == "on" or (mode == "auto" and int(store.rows or 0) <= AUTO_MAX_ROWS)


def attach(store: Store, query: Query, trace: Trace, mode: str = "on") -> Trace:
    """The trace with its index facet, counter `lostToIndex` and, where the index (not scope
    or min score) lost rows, diagnosis `index_recall` or `index_starvation`. Unchanged when
    the search uses no index; with the facet not wanted (see `wanted`), a warning says the
    answer was not compared with an exact search."""
    if used_index(trace.pool.index, trace.params) is None or trace.pool.vec_leg is None:
        return trace
    if not wanted(store, mode):
        why = (f"{store.rows:,} rows" if mode == "auto" else "--index-facet off")
        note = (f"the {trace.pool.index.type if trace.pool.index else 'vector'} index's answer "
                f"was not compared with an exact search ({why}): rows the index lost are not "
                f"counted; add --index-facet on to compare")
        return replace(trace, warnings=(*trace.warnings, note))
    d = trace.depths
    facet, exact_trace = facet_from(trace, exact_pool(store, query, trace.params,
                                                      d.vec_k, d.fts_k))
    return with_facet(trace, facet, exact_trace)


def with_facet(trace: Trace, facet: IndexFacet, exact_trace: Trace) -> Trace:
    counters = {**trace.counters, "lostToIndex": len(facet.lost)}
    diagnosis = trace.diagnosis
    found = _diagnosis(trace, facet, exact_trace)
    if found is not None:
        if found.code == "index_starvation" or diagnosis.code in ("ok", "query_or_index"):
            diagnosis = found
        else:
            diagnosis = Diagnosis(diagnosis.code, f"{diagnosis.message} Also: {found.message}",
                                  diagnosis.fixes + found.fixes)
    return replace(trace, index_facet=facet, counters=counters, diagnosis=diagnosis)
