"""Ranking metrics against graded judgments, and scoped recall against an exact ranking.

Every function takes the result ids in rank order and returns a float (or None when the
measure is undefined, e.g. recall with nothing relevant). Ids are compared as strings so
integer ids in a table match ids typed into a judgments file.

Conventions (also in docs/design/tuning.md):
- relevant = judged with grade > 0; precision@k divides by k, not by the number returned;
- MRR here is the reciprocal rank of the first relevant result within k (0 if none);
  averaging it over a query set gives the mean;
- nDCG@k uses linear gain (gain = grade) and the log2(rank + 1) discount; the ideal DCG
  ranks every judged-relevant id by grade.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from inspector.core.errors import InspectorError

METRICS = ("recall", "precision", "mrr", "ndcg", "scoped_recall")
_NAME = re.compile(r"^(recall|precision|mrr|ndcg|scoped_recall)(?:@(\d+))?$")


def _ids(ranked: Sequence[Any], k: int) -> list[str]:
    return [str(x) for x in list(ranked)[:k]]


def _relevant(grades: Mapping[str, float]) -> dict[str, float]:
    return {str(i): float(g) for i, g in grades.items() if g > 0}


def recall_at_k(ranked: Sequence[Any], grades: Mapping[str, float], k: int) -> float | None:
    """Share of the relevant ids found in the top k; None when nothing is relevant."""
    rel = _relevant(grades)
    if not rel:
        return None
    return sum(1 for i in _ids(ranked, k) if i in rel) / len(rel)


def precision_at_k(ranked: Sequence[Any], grades: Mapping[str, float], k: int) -> float:
    """Relevant ids in the top k, divided by k (a short list is penalised)."""
    rel = _relevant(grades)
    return sum(1 for i in _ids(ranked, k) if i in rel) / k


def reciprocal_rank(ranked: Sequence[Any], grades: Mapping[str, float], k: int) -> float:
    """1 / rank of the first relevant id within the top k, 0 if there is none."""
    rel = _relevant(grades)
    for r, i in enumerate(_ids(ranked, k), 1):
        if i in rel:
            return 1.0 / r
    return 0.0


def ndcg_at_k(ranked: Sequence[Any], grades: Mapping[str, float], k: int) -> float | None:
    """Linear-gain nDCG@k; None when no judged id is relevant."""
    rel = _relevant(grades)
    if not rel:
        return None
    dcg = sum(rel.get(i, 0.0) / math.log2(r + 1) for r, i in enumerate(_ids(ranked, k), 1))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(r + 1) for r, g in enumerate(ideal, 1))
    return dcg / idcg


def scoped_recall(ranked: Sequence[Any], truth: Sequence[Any], k: int) -> float | None:
    """Share of the exact in-scope top k that the run's top k holds; None if the truth is empty."""
    want = set(_ids(truth, k))
    if not want:
        return None
    return len(want.intersection(_ids(ranked, k))) / len(want)


def parse_metric(name: str, default_k: int) -> tuple[str, int]:
    """'recall@5' -> ('recall', 5); a bare name takes default_k."""
    m = _NAME.match(name.strip().lower())
    if not m:
        raise InspectorError(f"Unknown metric '{name}'; use recall@K, precision@K, mrr, "
                             "ndcg@K or scoped_recall@K.")
    k = int(m.group(2)) if m.group(2) else default_k
    if k < 1:
        raise InspectorError(f"The k in '{name}' must be at least 1.")
    return m.group(1), k


def metric(name: str, ranked: Sequence[Any], k: int, grades: Mapping[str, float] | None = None,
           truth: Sequence[Any] | None = None) -> float | None:
    """One named metric; judgment metrics need grades, scoped_recall needs the truth ranking."""
    if name == "scoped_recall":
        if truth is None:
            raise InspectorError("scoped_recall needs the exact in-scope ranking.")
        return scoped_recall(ranked, truth, k)
    if grades is None:
        raise InspectorError(f"{name}@{k} needs relevance judgments for this query.")
    fn = {"recall": recall_at_k, "precision": precision_at_k, "mrr": reciprocal_rank,
          "ndcg": ndcg_at_k}[name]
    return fn(ranked, grades, k)


def all_metrics(ranked: Sequence[Any], k: int, grades: Mapping[str, float] | None,
                truth: Sequence[Any] | None) -> dict[str, float | None]:
    """Every metric that the given evidence supports, keyed like 'ndcg@10'."""
    out: dict[str, float | None] = {}
    if truth is not None:
        out[f"scoped_recall@{k}"] = scoped_recall(ranked, truth, k)
    if grades:
        out[f"recall@{k}"] = recall_at_k(ranked, grades, k)
        out[f"precision@{k}"] = precision_at_k(ranked, grades, k)
        out["mrr"] = reciprocal_rank(ranked, grades, k)
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, grades, k)
    return out
