"""Read the counters the way the real systems' operators do, and say what to do next."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.params import Params, overfetch_for, pool_depth
from inspector.core.engine.trace import Diagnosis, Fix

TITLES = {  # each diagnosis code in a few words: the window's banner and the receipt
    "ok": "Looks fine",
    "scope_starvation": "Scope starvation: the scope filter left nothing",
    "scope_dominated": "Scope dominated: out-of-scope rows crowd the candidate pool",
    "query_or_index": "No candidates: a query or index problem",
    "min_score_cut": "Min score cut: rows that would be returned fall below it",
}


@dataclass(frozen=True)
class ScopeHint:
    """Where in-scope rows sit in the global ranking, from a deeper probe of the same query."""

    probe_depth: int
    first_rank: int | None  # global rank of the best in-scope row
    page_rank: int | None  # global rank of the limit-th in-scope row (a full page)


def _scope_name(p: Params) -> str:
    return f"scope {p.scope!r}" if p.scope is not None else "the scope"


def depth_words(depth: int, limit: int) -> str:
    """How the banner, the sweep and safe over-fetch name a depth: "over-fetch 5.6 (depth 56)"."""
    return f"over-fetch {overfetch_for(depth, limit):g} (depth {depth})"


def safe_words(depth: int, limit: int) -> str:
    """The depth from which scoped recall is 1 (safe over-fetch's answer). The banner's depth
    for a full page of in-scope rows is not called safe: with hybrid fusion or a blend the
    rows of a full page need not be the exact top rows, and the sweep can find no safe depth."""
    return "safe " + depth_words(depth, limit)


def cap_words(depth: int, cap: int) -> str:
    """What a cap below a needed depth means, in the same words everywhere."""
    return f"above the cap of {cap}: raise the cap to {depth}"


def _hint_sentence(hint: ScopeHint | None, p: Params) -> str:
    if hint is None:
        return ("Raise the over-fetch factor, or push the scope down into the query "
                "(filter placement: pushdown).")
    if hint.first_rank is None:
        return (f"No in-scope row appears in the top {hint.probe_depth} global candidates either: "
                "push the scope down (filter placement: pushdown), or check the scope mapping.")
    push = "; with the scope pushed down (filter placement: pushdown) in-scope rows come " \
           "back at over-fetch 1."
    need = hint.page_rank or hint.first_rank
    cap = f", {cap_words(need, p.cap)}" if p.cap and p.cap < need else ""
    page = (f"a full page of {p.limit} in scope needs {depth_words(hint.page_rank, p.limit)}"
            if hint.page_rank is not None else
            f"fewer than {p.limit} in-scope rows appear in the top {hint.probe_depth}")
    if hint.first_rank <= p.limit:  # some are already in: the question is a full page
        return page[0].upper() + page[1:] + cap + push
    return (f"The best in-scope row first enters the pool at depth {hint.first_rank} "
            f"(over-fetch {overfetch_for(hint.first_rank, p.limit):g}); {page}{cap}{push}")


def _next_depth(hint: ScopeHint | None, p: Params) -> int | None:
    """The next depth worth fetching from the current settings: the best in-scope row's,
    then a full page's; None when the pool already reaches both (or neither is known)."""
    if hint is None or hint.first_rank is None:
        return None
    now = pool_depth(p.limit, p.overfetch, p.cap)
    goals = [d for d in (hint.first_rank, hint.page_rank) if d is not None and d > p.limit]
    return next((d for d in goals if d > now), None)


def _scope_fixes(hint: ScopeHint | None, p: Params) -> tuple[Fix, ...]:
    """Fixes from the current settings: each reaches a depth the pool does not reach yet,
    never a no-op and never a step back (a lower over-fetch or cap)."""
    fixes = []
    need = _next_depth(hint, p)
    if need is not None:
        f = overfetch_for(need, p.limit)
        changes: dict[str, Any] = {"overfetch": f} if f > p.overfetch else {}
        if p.cap and p.cap < need:
            changes["cap"] = need
        if "overfetch" in changes:
            label = f"Apply over-fetch {f:g}" + (f", cap {need}" if "cap" in changes else "")
        else:
            label = f"Raise the cap to {need}"
        fixes.append(Fix(label, tuple(changes.items())))
    if p.filter == "post":
        fixes.append(Fix("Try pushdown", (("filter", "pushdown"),)))
    return tuple(fixes)


def _min_score_fix(p: Params, page_score: float | None) -> tuple[Fix, ...]:
    """Lower the min score to the largest two-decimal value that keeps a full page."""
    if page_score is None or not math.isfinite(page_score):
        return ()
    to = math.floor(page_score * 100) / 100
    return (Fix(f"Lower min score to {to:g}", (("min_score", to),)),) if to < p.min_score \
        else ()


def diagnose(counters: dict[str, int], p: Params, hint: ScopeHint | None = None,
             rows: int | None = None, page_score: float | None = None) -> Diagnosis:
    """The counters read as the real systems' operators read them. `page_score` is the
    blended score of the row that would complete the page without the min score."""
    raw, scoped = counters["rawCandidates"], counters["scopedCandidates"]
    returned, below = counters["returned"], counters["belowMinScore"]
    filtered = counters["filteredByScope"]
    if raw == 0 and rows == 0:
        return Diagnosis("query_or_index", "The table is empty: there is nothing to retrieve.")
    if raw == 0:
        return Diagnosis("query_or_index", "The search returned no candidates at all: check the "
                         "query text, the full-text index, or the filter; this is not a scope "
                         "problem.")
    if scoped == 0:
        return Diagnosis("scope_starvation", f"All {raw} raw candidates are outside "
                         f"{_scope_name(p)}, so the scope filter left nothing. "
                         + _hint_sentence(hint, p), _scope_fixes(hint, p))
    crowded = filtered * 2 > raw
    if below and returned == 0:
        also = (f" {filtered} of {raw} raw candidates are also outside {_scope_name(p)}."
                if crowded else "")
        return Diagnosis("min_score_cut", f"Min score {p.min_score:g} removed all {below} "
                         f"in-scope candidates, so nothing is returned.{also}",
                         _min_score_fix(p, page_score) + (_scope_fixes(hint, p) if crowded
                                                          else ()))
    if crowded:
        cut = (f" Min score {p.min_score:g} also removed {below} in-scope candidates."
               if below and returned < p.limit else "")
        return Diagnosis("scope_dominated", f"{filtered} of {raw} raw candidates are outside "
                         f"{_scope_name(p)}; in-scope rows are being crowded out of the pool. "
                         + _hint_sentence(hint, p) + cut, _scope_fixes(hint, p))
    if below and returned < p.limit:
        return Diagnosis("min_score_cut", f"{_results(returned)}, fewer than the limit of "
                         f"{p.limit}: min score {p.min_score:g} removed {below} in-scope "
                         "candidates that would otherwise be returned.",
                         _min_score_fix(p, page_score))
    return Diagnosis("ok", f"{_results(returned)} from {scoped} in-scope of {raw} raw "
                     "candidates.")


def _results(n: int) -> str:
    return f"{n} result" if n == 1 else f"{n} results"
