"""Side by side: two questions on one query (two pipelines, or one with parameters changed),
their final lists aligned, with agreement measures and what each side missed of its truth.

Measures (on the final result lists, ids compared as strings):
- Jaccard: |A & B| / |A | B| (1.0 when both are empty).
- Rank-biased overlap, the *extrapolated* form RBO_ext of Webber, Moffat & Zobel (2010),
  eq. 32, which handles lists of unequal length; p = 0.9 by default (the top ~10 ranks
  carry ~86% of the weight). 1.0 for identical lists, 0.0 for disjoint ones.
- Kendall's tau over the items both lists hold (tau-a; ranks have no ties, so it equals
  tau-b); None when fewer than two items are shared.
- Scoped recall of each side against its own truth (`truth.py`: the same question with its
  filters seeing the whole ranking), and the truth rows it did not return (`starved`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.analysis.metrics import scoped_recall
from inspector.core.analysis.truth import truth_ids
from inspector.core.engine.flow.question import Question, answer, runs_for
from inspector.core.engine.flow.rows import Scored
from inspector.core.engine.flow.runner import FlowTrace, PoolCache
from inspector.core.errors import InspectorError


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
    """One id of either list: its rank on each side (None = absent), the shift, and the row's
    scope and text as stored."""

    id: str
    rank_a: int | None
    rank_b: int | None
    scope: str | None
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
                "side": self.side, "shift": self.shift, "scope": self.scope,
                "text": self.text}


@dataclass(frozen=True)
class Comparison:
    """Two runs of one query: lists, alignment, agreement, and what each missed of its truth."""

    labels: tuple[str, str]
    pipelines: tuple[str, str]
    ids: tuple[tuple[str, ...], tuple[str, ...]]
    rows: tuple[AlignedRow, ...]
    jaccard: float
    rbo: float
    rbo_p: float
    kendall_tau: float | None
    shared: int
    truth: tuple[tuple[str, ...], tuple[str, ...]]
    recall: tuple[float | None, float | None]
    starved: tuple[int | None, int | None]  # truth rows (top k) a side did not return
    counters: tuple[dict[str, int], dict[str, int]]

    def to_json(self) -> dict[str, Any]:
        side = {}
        for n, key in enumerate(("a", "b")):
            side[key] = {"label": self.labels[n], "pipeline": self.pipelines[n],
                         "ids": list(self.ids[n]), "truth": list(self.truth[n]),
                         "scoped_recall": self.recall[n], "starved": self.starved[n],
                         "counters": dict(self.counters[n])}
        return {"a": side["a"], "b": side["b"], "rows": [r.to_json() for r in self.rows],
                "jaccard": self.jaccard, "rbo": self.rbo, "rbo_p": self.rbo_p,
                "rbo_form": "extrapolated (RBO_ext, Webber et al. 2010, eq. 32)",
                "kendall_tau": self.kendall_tau, "kendall_variant": "tau-a on shared items",
                "shared": self.shared}


def counters(t: FlowTrace) -> dict[str, int]:
    """Each stage's row count (query stages left out) and the rows returned."""
    return {**{st.name: len(st.rows) for st in t.stages if st.role != "query"},
            "returned": len(t.final.rows)}


def _align(ta: FlowTrace, tb: FlowTrace) -> tuple[AlignedRow, ...]:
    ra = {s.id: (r, s) for r, s in enumerate(ta.final.rows, 1)}
    rb = {s.id: (r, s) for r, s in enumerate(tb.final.rows, 1)}
    out = []
    for rid in [*ra, *(k for k in rb if k not in ra)]:
        row: Scored = (ra.get(rid) or rb[rid])[1]
        out.append(AlignedRow(rid, ra[rid][0] if rid in ra else None,
                              rb[rid][0] if rid in rb else None, row.row.scope,
                              row.row.text or None))
    return tuple(out)


def _starved(ids: Sequence[str], truth: Sequence[str], k: int) -> int | None:
    want = list(truth)[:k]
    if not want:
        return None
    got = set(ids)
    return sum(1 for x in want if x not in got)


def compare_traces(ta: FlowTrace, tb: FlowTrace, truth_a: Sequence[str] = (),
                   truth_b: Sequence[str] = (), labels: tuple[str, str] = ("A", "B"),
                   rbo_p: float = 0.9) -> Comparison:
    """Compare two runs of the same query; truth_* are each side's truth (best first)."""
    a, b = ta.final.ids, tb.final.ids
    return Comparison(
        labels=labels, pipelines=(ta.spec.name, tb.spec.name), ids=(tuple(a), tuple(b)),
        rows=_align(ta, tb), jaccard=jaccard(a, b), rbo=rbo(a, b, rbo_p), rbo_p=rbo_p,
        kendall_tau=kendall_tau(a, b), shared=len(set(a) & set(b)),
        truth=(tuple(truth_a), tuple(truth_b)),
        recall=(scoped_recall(a, truth_a, ta.limit), scoped_recall(b, truth_b, tb.limit)),
        starved=(_starved(a, truth_a, ta.limit), _starved(b, truth_b, tb.limit)),
        counters=(counters(ta), counters(tb)))


def compare(store: Any, a: Question, b: Question, labels: tuple[str, str] = ("A", "B"),
            rbo_p: float = 0.9, fixes: bool = False) -> tuple[Comparison, Any, Any]:
    """Answer both questions on the store (with their diagnoses; the fixes run when `fixes`)
    and each side's truth through its own runs; the comparison and both answers."""
    answers, truths = [], []
    for q in (a, b):
        cache = PoolCache()  # one side's fetches serve its answer and its truth
        got = answer(q, store, cache, fixes=fixes)
        runs, _, _ = runs_for(q, store, cache)
        answers.append(got)
        truths.append(truth_ids(runs) or [])
    return (compare_traces(answers[0].trace, answers[1].trace, truths[0], truths[1], labels,
                           rbo_p), answers[0], answers[1])


def change_of(spec: Any, item: str, what: str = "--against") -> tuple[dict[str, Any],
                                                                     dict[str, Any]]:
    """One KEY=VALUE change of a side: (--set assignments, question fields). A STAGE.PARAM or
    a pipeline setting is set as given; a query option (overfetch, filter, blend, ...) on the
    stage that holds it, as `inspector query` sets it; limit and scope are the question's.
    `what` names where the change was typed, for the sentence that refuses it."""
    from inspector.core.engine.flow.spec import held_options, parse_assignment

    key, value = parse_assignment(item)
    if "." in key or key in spec.settings:
        return {key: value}, {}
    if key == "limit":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InspectorError(f"{what} limit={value}: the limit is a whole number >= 1.")
        return {}, {"limit": value}
    if key == "scope":
        return {}, {"scopes": None if value in ("", None) else [str(value)]}
    option = key.replace("-", "_")
    if option == "scope_map":  # checked as a --scope-map file is
        from inspector.core.engine.scope import parse_scope_map

        value = {k: list(v) for k, v in parse_scope_map(value, f"{what} scope_map").items()}
    held = held_options(spec, {option: value}).get(option)
    if not held:
        raise InspectorError(f"{what} {item}: pipeline {spec.name} has no stage that takes "
                             f"{key}; give STAGE.PARAM=VALUE (see `inspector pipeline show "
                             f"{spec.name}`).")
    return held, {}


def other_side(q: Question, preset: str | None, items: Sequence[str],
               what: str = "--against") -> Question:
    """The question the other side of a comparison asks (`inspector report --against-preset
    P --against K=V`, the window's Compare tab): another preset on the same query, scopes,
    limit and clock, and/or the changes on top."""
    from inspector.core.engine.flow.question import resolve

    other = q
    if preset is not None:
        other = q.model_copy(update={"preset": preset, "pipeline_file": None, "set": {},
                                     "system_config": None, "widen": {}, "exact": False})
    spec, _, _ = resolve(other)
    sets: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    for item in items:
        more, also = change_of(spec, item, what)
        sets.update(more)
        fields.update(also)
    return other.model_copy(update={"set": {**other.set, **sets}, **fields})
