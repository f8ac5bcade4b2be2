"""Expected rows: where an id the user expected was dropped, and what depth would return it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from inspector.core.engine.ann import expect as ix
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pool import Pool, Query
from inspector.core.engine.pools import EXHAUSTIVE_MAX, HYBRID_SCAN_MAX, exhaustive_pool
from inspector.core.engine.ties import TieGroup
from inspector.core.engine.trace import Expectation, Trace
from inspector.core.stores.store import Store

_NO_FLOOR = -1e300


def _at_depth(p: Params, depth: int) -> Params:
    """p with its raw depth set to `depth` (never below the limit: over-fetch is at least 1)."""
    return p.with_(overfetch=max(depth, p.limit) / p.limit, cap=0)


def _exists(store: Store, rid: str) -> bool:
    from inspector.core.errors import InspectorError

    try:
        store.vector_of(rid)
    except InspectorError:
        return False
    return True


def _stage_verdict(trace: Trace, i: int | None) -> tuple[str | None, str]:
    p = trace.params
    if i is None or not trace.raw_rank[i]:
        return "raw", f"not among the {trace.counters['rawCandidates']} raw candidates"
    if not trace.pool.in_scope[i]:
        return "scoped", f"removed by the scope filter ({trace.pool.scope_rule[i]})"
    if trace.final_rank[i]:
        return None, f"returned at rank {int(trace.final_rank[i])}"
    if trace.score[i] < p.min_score:
        return "final", f"blended score {trace.score[i]:.4f} is below min score {p.min_score}"
    return "final", f"blended rank {int(trace.rank_after[i])} is past the limit of {p.limit}"


def _min_depth(pool: Pool, p: Params, i: int) -> tuple[int | None, str]:
    """Smallest raw depth returning row i, all else equal; with the reason when none does."""
    if p.mode != "hybrid":
        leg = pool.vec_rank if p.mode == "vector" else pool.fts_rank
        d0 = max(int(leg[i]) + 1, p.limit)
        t = derive(pool, _at_depth(p, d0))
        if t.final_rank[i]:
            return d0, ""
        if t.score[i] < p.min_score:
            return None, f"its blended score {t.score[i]:.4f} is below min score {p.min_score} " \
                         "at every depth"
        return None, (f"at depth {d0}, where it first enters the pool, "
                      f"{int(t.rank_after[i]) - 1} in-scope rows outrank it (limit {p.limit}); "
                      "a deeper pool only adds rows")
    last = min(pool.size, HYBRID_SCAN_MAX)
    for d in range(p.limit, max(last, p.limit) + 1):
        if derive(pool, _at_depth(p, d)).final_rank[i]:
            return d, ""
    return None, f"not returned at any depth up to {last}"


def analyse(store: Store, query: Query, trace: Trace, ids: Sequence[str],
            pool: Pool | None = None) -> tuple[Expectation, ...]:
    """For each expected id: its exhaustive in-scope rank, where it was dropped, and the
    smallest depth (and over-fetch) that would return it with every other parameter unchanged."""
    p = trace.params
    pool = pool or exhaustive_pool(store, query, p)
    if pool.index is not None:
        # The index's own ranking of the whole table, read at every depth "all else equal":
        # a fresh indexed search at a shallower depth may differ (pipeline.cannot_answer), so
        # what the index loses is settled below by the exact view and fresh searches
        # (ix.smallest_fix), not by this ranking.
        pool = replace(pool, index=None)
    legs = [leg.depth for leg in (pool.vec_leg, pool.fts_leg) if leg is not None]
    unbounded = replace(p, overfetch=1.0, cap=0, min_score=_NO_FLOOR, limit=max(1, min(legs)))
    full = derive(pool, unbounded)
    view = ix.exact_view(store, query, trace, EXHAUSTIVE_MAX, unbounded)  # None when flat
    out = []
    for rid in ids:
        dropped, reason = _stage_verdict(trace, trace.row_of(rid))
        now = None if trace.row_of(rid) is None else tied_at_cut(trace, trace.row_of(rid))
        if now is not None:
            reason += f"; {_tie_text(now)}"
        j = full.row_of(rid)
        exh_rank = int(full.rank_after[j]) if j is not None and full.rank_after[j] else None
        min_depth: int | None = None
        if j is None and not _exists(store, rid):
            reason = f"no row with id {rid!r} in table '{store.table_name}'"
        elif j is None:
            why = ("no full-text match for the query" if p.mode == "fts" else
                   f"not in the first {pool.size} candidates of the "
                   f"{'scope-filtered' if p.filter == 'pushdown' else 'global'} ranking")
            reason += f"; {why}, so no depth returns it"
        elif not pool.in_scope[j]:
            reason += f"; it is out of scope ({pool.scope_rule[j]}), so no depth returns it"
        else:
            min_depth, why = _min_depth(pool, p, j)
            if why:
                reason += f"; {why}"
            elif p.cap and min_depth > p.cap:
                reason += f"; it needs depth {min_depth}, above the cap of {p.cap}"
            at = min_depth or _entry_depth(pool, p, j)
            tie = None if at is None else tied_at_cut(derive(pool, _at_depth(p, at)), j)
            if tie is not None:  # the tie order, not the depth, decides: say so
                reason += f"; at depth {at} {_tie_text(tie)}"
                if tie.arbitrary and min_depth is not None:
                    reason += ", so no depth is certain"
                    min_depth = None
        fix = None
        if view is not None:  # ranks and verdicts from the exact search, not the index's
            exh_rank = ix.exact_rank(view, rid)
            lost = ix.lost_to_index(view, trace, rid)
            if lost is not None:
                fix = ix.smallest_fix(store, query, p, view.index, rid)
                dropped, reason = "index", f"{lost}; {fix}"
        out.append(Expectation(
            id=str(rid), exhaustive_rank=exh_rank, dropped_at=dropped, reason=reason,
            min_depth=min_depth,
            min_overfetch=None if min_depth is None else min_depth / p.limit, index_fix=fix))
    return tuple(out)


def _entry_depth(pool: Pool, p: Params, i: int) -> int | None:
    """The depth at which row i enters a vector or full-text pool (hybrid: none)."""
    if p.mode == "hybrid":
        return None
    return max(int((pool.vec_rank if p.mode == "vector" else pool.fts_rank)[i]) + 1, p.limit)


def tied_at_cut(trace: Trace, i: int) -> TieGroup | None:
    """Row i's tie group that straddles a cut (an arbitrary one first), if any."""
    hits = [g for g in trace.ties() if g.at_cut and i in g.rows]
    return max(hits, key=lambda g: g.arbitrary) if hits else None


def _tie_text(g: TieGroup) -> str:
    others = len(g.rows) - 1 + g.beyond
    head = (f"it is tied with {others} other row(s) at {g.measure} {g.score:.6g} across the "
            f"{g.cut} cut of the {g.stage} stage")
    if g.arbitrary:
        return head + ": the real system may return any of them"
    return head + f", which the system orders by {g.order}"


def attach(trace: Trace, expectations: tuple[Expectation, ...]) -> Trace:
    return replace(trace, expect=expectations)

