"""Ranking metrics against values computed by hand."""

from __future__ import annotations

import math

import pytest

from inspector.core.analysis.metrics import (
    all_metrics,
    metric,
    ndcg_at_k,
    parse_metric,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    scoped_recall,
)
from inspector.core.errors import InspectorError

RANKED = ["a", "b", "c", "d", "e"]
GRADES = {"b": 2, "d": 1, "x": 1, "c": 0}  # c judged not relevant; x never returned


def test_recall_counts_relevant_found_in_top_k_over_all_relevant() -> None:
    assert recall_at_k(RANKED, GRADES, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, GRADES, 5) == pytest.approx(2 / 3)


def test_precision_divides_by_k_even_when_fewer_are_returned() -> None:
    assert precision_at_k(RANKED, GRADES, 4) == pytest.approx(2 / 4)
    assert precision_at_k(["b"], GRADES, 5) == pytest.approx(1 / 5)


def test_reciprocal_rank_is_one_over_first_relevant_rank_within_k() -> None:
    assert reciprocal_rank(RANKED, GRADES, 5) == pytest.approx(1 / 2)
    assert reciprocal_rank(RANKED, GRADES, 1) == 0.0


def test_ndcg_uses_linear_gain_and_log2_discount() -> None:
    dcg = 2 / math.log2(3) + 1 / math.log2(5)  # b at rank 2, d at rank 4
    idcg = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)  # grades 2, 1, 1
    assert ndcg_at_k(RANKED, GRADES, 5) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(["b", "d", "x"], GRADES, 3) == pytest.approx(1.0)


def test_metrics_without_relevant_ids_are_undefined() -> None:
    assert recall_at_k(RANKED, {"a": 0}, 5) is None
    assert ndcg_at_k(RANKED, {}, 5) is None


def test_scoped_recall_compares_top_k_with_the_truth() -> None:
    assert scoped_recall(["a", "q", "b"], ["a", "b", "c"], 3) == pytest.approx(2 / 3)
    assert scoped_recall(["a"], [], 3) is None


def test_integer_ids_match_string_judgments() -> None:
    assert recall_at_k([7, 8], {"8": 1}, 2) == 1.0


def test_metric_names_parse_and_bad_names_explain() -> None:
    assert parse_metric("recall@5", 10) == ("recall", 5)
    assert parse_metric("mrr", 10) == ("mrr", 10)
    with pytest.raises(InspectorError, match="Unknown metric"):
        parse_metric("f1@3", 10)
    with pytest.raises(InspectorError, match="needs relevance judgments"):
        metric("ndcg", RANKED, 5)


def test_all_metrics_reports_what_the_evidence_supports() -> None:
    got = all_metrics(RANKED, 5, GRADES, ["a", "b"])
    assert set(got) == {"scoped_recall@5", "recall@5", "precision@5", "mrr", "ndcg@5"}
    assert set(all_metrics(RANKED, 5, None, ["a"])) == {"scoped_recall@5"}
