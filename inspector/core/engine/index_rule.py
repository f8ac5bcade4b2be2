"""When a vector index is in play, and whether a deep fetch answers a shallower depth exactly.

Established by property tests on real LanceDB 0.40 tables (tests/core/engine/test_index_rule.py):
no approximate search is reliably a prefix of a deeper one. A refine factor re-ranks k * R
candidates (deeper fetches refine more rows); a maximum nprobes above the minimum lets a deeper
k under a selective prefilter search more partitions; HNSW's walk depends on k. Even IVF_PQ
without refinement, which usually agrees, gave 2 differing depths in 60 on one trained index
(its coarse PQ distances tie at the cut and LanceDB keeps an arbitrary subset of the tied
rows). So every search that uses an index re-queries per depth instead of deriving from a
cached pool; flat search (no index, another metric, --exact) stays prefix-exact.
"""

from __future__ import annotations

from typing import Any

from inspector.core.engine.params import Params
from inspector.core.stores.ann.indexes import DEFAULT_NPROBES, IndexInfo


def used_index(index: IndexInfo | None, p: Params) -> IndexInfo | None:
    """The index p's vector search goes through: None for --exact, full-text only, or a metric
    other than the index's (LanceDB then scans flat, as its query plan shows)."""
    if index is None or p.exact or p.mode == "fts":
        return None
    if index.metric is not None and index.metric != p.distance:
        return None
    return index


def prefix_exact(index: IndexInfo | None, p: Params) -> bool:
    """True when the first k rows of a deep vector fetch equal a fresh search at depth k for
    these parameters, so a cached deep pool answers every shallower depth exactly."""
    used = used_index(index, p)
    if used is None:
        return True
    return False  # see the module docstring: an approximate top k is not a prefix


def effective_nprobes(p: Params) -> tuple[int, int]:
    """(minimum, maximum) nprobes the search runs with; maximum 0 means no limit."""
    lo = p.min_nprobes or p.nprobes or DEFAULT_NPROBES
    hi = p.max_nprobes if p.max_nprobes is not None else (p.nprobes or max(lo, DEFAULT_NPROBES))
    return lo, hi


def effective_knobs(index: IndexInfo | None, p: Params, k: int) -> dict[str, Any]:
    """The search knobs in force at depth k, for `params.index` (LanceDB's defaults filled in)."""
    used = used_index(index, p)
    if used is None:
        return {"nprobes": None, "min_nprobes": None, "max_nprobes": None,
                "refine_factor": None, "ef": None}
    lo, hi = effective_nprobes(p)
    ef = (p.ef or int(1.5 * k)) if used.is_hnsw else None
    return {"nprobes": lo if lo == hi else None, "min_nprobes": lo, "max_nprobes": hi,
            "refine_factor": p.refine_factor, "ef": ef}


def apply_knobs(search: Any, p: Params) -> Any:
    """A LanceDB vector query builder with p's index knobs; untouched when none is given."""
    return with_knobs(search, exact=p.exact, nprobes=p.nprobes, min_nprobes=p.min_nprobes,
                      max_nprobes=p.max_nprobes, refine_factor=p.refine_factor, ef=p.ef)


def with_knobs(search: Any, exact: bool = False, nprobes: int | None = None,
               min_nprobes: int | None = None, max_nprobes: int | None = None,
               refine_factor: int | None = None, ef: int | None = None) -> Any:
    """A LanceDB vector query with these index knobs (None: LanceDB's default); `exact`
    bypasses the index (a flat search)."""
    if exact:
        return search.bypass_vector_index()
    if nprobes is not None:
        search = search.nprobes(nprobes)
    if min_nprobes is not None:
        search = search.minimum_nprobes(min_nprobes)
    if max_nprobes is not None:
        search = search.maximum_nprobes(max_nprobes)
    if refine_factor is not None:
        search = search.refine_factor(refine_factor)
    if ef is not None:
        search = search.ef(ef)
    return search
