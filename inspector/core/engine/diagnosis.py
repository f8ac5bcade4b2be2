"""Read the counters the way the real systems' operators do, and say what to do next."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.engine.params import Params
from inspector.core.engine.trace import Diagnosis


@dataclass(frozen=True)
class ScopeHint:
    """Where in-scope rows sit in the global ranking, from a deeper probe of the same query."""

    probe_depth: int
    first_rank: int | None  # global rank of the best in-scope row
    page_rank: int | None  # global rank of the limit-th in-scope row (a full page)


def _scope_name(p: Params) -> str:
    return f"scope {p.scope!r}" if p.scope is not None else "the scope"


def _hint_sentence(hint: ScopeHint | None, p: Params) -> str:
    if hint is None:
        return ("Raise the over-fetch factor, or push the scope down into the query "
                "(filter placement: pushdown).")
    if hint.first_rank is None:
        return (f"No in-scope row appears in the top {hint.probe_depth} global candidates either: "
                "push the scope down (filter placement: pushdown), or check the scope mapping.")
    push = "; with the scope pushed down (filter placement: pushdown) in-scope rows come " \
           "back at over-fetch 1."
    page = (f"a full page of {p.limit} needs depth {hint.page_rank} (over-fetch "
            f"{hint.page_rank / p.limit:.1f})" if hint.page_rank is not None else
            f"fewer than {p.limit} in-scope rows appear in the top {hint.probe_depth}")
    need = hint.page_rank or hint.first_rank
    cap = (f", past the cap of {p.cap} (raise it to {need}, or 0 for none)"
           if p.cap and p.cap < need else "")
    if hint.first_rank <= p.limit:  # some are already in: the question is a full page
        return page[0].upper() + page[1:] + cap + push
    return (f"The best in-scope row first enters the pool at depth {hint.first_rank} "
            f"(over-fetch {hint.first_rank / p.limit:.1f}); {page}{cap}{push}")


def diagnose(counters: dict[str, int], p: Params, hint: ScopeHint | None = None,
             rows: int | None = None) -> Diagnosis:
    raw, scoped = counters["rawCandidates"], counters["scopedCandidates"]
    if raw == 0 and rows == 0:
        return Diagnosis("query_or_index", "The table is empty: there is nothing to retrieve.")
    if raw == 0:
        return Diagnosis("query_or_index", "The search returned no candidates at all: check the "
                         "query text, the full-text index, or the filter; this is not a scope "
                         "problem.")
    if scoped == 0:
        return Diagnosis("scope_starvation", f"All {raw} raw candidates are outside "
                         f"{_scope_name(p)}, so the scope filter left nothing. "
                         + _hint_sentence(hint, p))
    filtered = counters["filteredByScope"]
    if filtered * 2 > raw:
        return Diagnosis("scope_dominated", f"{filtered} of {raw} raw candidates are outside "
                         f"{_scope_name(p)}; in-scope rows are being crowded out of the pool. "
                         + _hint_sentence(hint, p))
    returned, below = counters["returned"], counters["belowMinScore"]
    if returned == 0 and below:
        return Diagnosis("ok", f"Scope is fine ({scoped} in-scope candidates), but all fall "
                         f"below min score {p.min_score}: lower the min score.")
    return Diagnosis("ok", f"{returned} results from {scoped} in-scope of {raw} raw candidates.")
