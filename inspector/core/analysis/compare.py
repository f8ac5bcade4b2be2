"""Side by side: two parameter sets on one query, aligned, with agreement measures.

Measures (on the final result lists, ids compared as strings):
- Jaccard: |A & B| / |A | B| (1.0 when both are empty).
- Rank-biased overlap, the *extrapolated* form RBO_ext of Webber, Moffat & Zobel (2010),
  eq. 32, which handles lists of unequal length; p = 0.9 by default (the top ~10 ranks
  carry ~86% of the weight). 1.0 for identical lists, 0.0 for disjoint ones.
- Kendall's tau over the items both lists hold (tau-a; ranks have no ties, so it equals
  tau-b); None when fewer than two items are shared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.analysis.metrics import scoped_recall
from inspector.core.analysis.truth import truth_ids
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.engine.pool import Query
from inspector.core.engine.pools import exhaustive_pool
from inspector.core.engine.trace import Trace
from inspector.core.stores.store import Store


def jaccard(a: Sequence[Any], b: Sequence[Any]) -> float:
    sa, sb = {str(x) for x in a}, {str(x) for x in b}
    return 1.0 if not sa | sb else len(sa & sb) / len(sa | sb)


def rbo(a: Sequence[Any], b: Sequence[Any], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap (RBO_ext) of two rankings without duplicates."""
    if not 0 < p < 1:
        raise ValueError("RBO's p must be strictly between 0 and 1.")
    la, lb = [str(x) for x in a], [str(x) for x in b]
    if not la and not lb:
        return 1.0
    if not la or not lb:
        return 0.0
    short, long_ = (la, lb) if len(la) <= len(lb) else (lb, la)
    s, ln = len(short), len(long_)
    seen_s: set[str] = set()
    seen_l: set[str] = set()
    overlap = 0
    x = [0] * (ln + 1)  # x[d] = overlap of short[:min(d, s)] and long[:d]
    for d in range(1, ln + 1):
        item_l = long_[d - 1]
        if d <= s:
            item_s = short[d - 1]
            overlap += (item_s in seen_l) + (item_l in seen_s) + (item_s == item_l)
            seen_s.add(item_s)
        elif item_l in seen_s:
            overlap += 1
        seen_l.add(item_l)
        x[d] = overlap
    total = sum(x[d] / d * p ** d for d in range(1, ln + 1))
    total += sum(x[s] * (d - s) / (s * d) * p ** d for d in range(s + 1, ln + 1))
    tail = ((x[ln] - x[s]) / ln + x[s] / s) * p ** ln
    return (1 - p) / p * total + tail


def kendall_tau(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Kendall's tau-a on the items both rankings hold; None with fewer than two shared."""
    rb = {str(x): i for i, x in enumerate(b)}
    shared = [rb[str(x)] for x in a if str(x) in rb]  # b's ranks, in a's order
    n = len(shared)
    if n < 2:
        return None
    conc = disc = 0
    for i in range(n):
        for j in range(i + 1, n):
            if shared[i] < shared[j]:
                conc += 1
            else:
                disc += 1
    return (conc - disc) / (n * (n - 1) / 2)


@dataclass(frozen=True)
class AlignedRow:
    """One id of either list: its rank on each side (None = absent) and the shift."""

    id: Any
    rank_a: int | None
    rank_b: int | None
    in_scope: bool | None
    text: str | None

    @property
    def side(self) -> str:
        return "both" if self.rank_a and self.rank_b else ("a" if self.rank_a else "b")

    @property
    def shift(self) -> int | None:
        """Positive when the row moved up on side B."""
        return self.rank_a - self.rank_b if self.rank_a and self.rank_b else None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "rank_a": self.rank_a, "rank_b": self.rank_b,
                "side": self.side, "shift": self.shift, "in_scope": self.in_scope,
                "text": self.text}


@dataclass(frozen=True)
class Comparison:
    """Two runs of one query: lists, alignment, agreement, and what each missed in scope."""

    labels: tuple[str, str]
    params: tuple[Params, Params]
    ids: tuple[tuple[Any, ...], tuple[Any, ...]]
    rows: tuple[AlignedRow, ...]
    jaccard: float
    rbo: float
    rbo_p: float
    kendall_tau: float | None
    shared: int
    truth: tuple[tuple[Any, ...], tuple[Any, ...]]
    recall: tuple[float | None, float | None]
    starved: tuple[int | None, int | None]  # truth rows a post-filter side did not return
    counters: tuple[dict[str, int], dict[str, int]]

    def to_json(self) -> dict[str, Any]:
        side = {}
        for n, key in enumerate(("a", "b")):
            side[key] = {"label": self.labels[n], "params": self.params[n].to_json(),
                         "ids": list(self.ids[n]), "truth": list(self.truth[n]),
                         "scoped_recall": self.recall[n], "starved": self.starved[n],
                         "counters": dict(self.counters[n])}
        return {"a": side["a"], "b": side["b"], "rows": [r.to_json() for r in self.rows],
                "jaccard": self.jaccard, "rbo": self.rbo, "rbo_p": self.rbo_p,
                "rbo_form": "extrapolated (RBO_ext, Webber et al. 2010, eq. 32)",
                "kendall_tau": self.kendall_tau, "kendall_variant": "tau-a on shared items",
                "shared": self.shared}


def _align(ta: Trace, tb: Trace) -> tuple[AlignedRow, ...]:
    ra = {str(x): (r, x) for r, x in enumerate(ta.ids("final"), 1)}
    rb = {str(x): (r, x) for r, x in enumerate(tb.ids("final"), 1)}
    order = list(ra) + [k for k in rb if k not in ra]
    text_col = ta.pool.roles.get("text")
    rows = []
    for k in order:
        trace, raw_id = (ta, ra[k][1]) if k in ra else (tb, rb[k][1])
        i = trace.row_of(raw_id)
        text = trace.pool.columns[text_col][i] if text_col and i is not None else None
        rows.append(AlignedRow(id=raw_id, rank_a=ra[k][0] if k in ra else None,
                               rank_b=rb[k][0] if k in rb else None,
                               in_scope=bool(trace.pool.in_scope[i]) if i is not None else None,
                               text=None if text is None else str(text)))
    return tuple(rows)


def compare_traces(ta: Trace, tb: Trace, truth_a: Sequence[Any] = (),
                   truth_b: Sequence[Any] = (), labels: tuple[str, str] = ("A", "B"),
                   rbo_p: float = 0.9) -> Comparison:
    """Compare two traces of the same query; truth_* are each side's in-scope truths."""
    a, b = ta.ids("final"), tb.ids("final")
    shared = len({str(x) for x in a} & {str(x) for x in b})

    def starved(t: Trace, truth: Sequence[Any]) -> int | None:
        if t.params.filter != "post":
            return None
        got = {str(x) for x in t.ids("final")}
        return sum(1 for x in truth if str(x) not in got)

    return Comparison(
        labels=labels, params=(ta.params, tb.params), ids=(tuple(a), tuple(b)),
        rows=_align(ta, tb), jaccard=jaccard(a, b), rbo=rbo(a, b, rbo_p), rbo_p=rbo_p,
        kendall_tau=kendall_tau(a, b), shared=shared, truth=(tuple(truth_a), tuple(truth_b)),
        recall=(scoped_recall(a, truth_a, ta.params.limit),
                scoped_recall(b, truth_b, tb.params.limit)),
        starved=(starved(ta, truth_a), starved(tb, truth_b)),
        counters=(dict(ta.counters), dict(tb.counters)))


def compare(store: Store, query: Query, a: Params, b: Params,
            labels: tuple[str, str] = ("A", "B"), rbo_p: float = 0.9) -> Comparison:
    """Run both parameter sets for real, and each side's in-scope truth from one exhaustive
    post-filter pool (the pool source's: one fetch when mode, distance and scope agree)."""
    truths = []
    for p in (a, b):
        post = p.with_(filter="post")
        truths.append(truth_ids(exhaustive_pool(store, query, post), post))
    return compare_traces(run(store, query, a), run(store, query, b), truths[0], truths[1],
                          labels, rbo_p)
