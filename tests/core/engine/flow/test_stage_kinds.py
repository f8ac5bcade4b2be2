"""Each stage kind's formula on rows built by hand, against numbers worked out here: the
fixture exercises the stages together; these pin each rule where the fixture has no row."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from inspector.core.engine.flow import stages  # noqa: F401
from inspector.core.engine.flow.registry import KINDS
from inspector.core.engine.flow.rows import Context, Row, Scored

NOW = 1_800_000_000_000.0
DAY = 86_400_000


def row(rid: str, text: str = "some memory text", vec: list[float] | None = None,
        importance: float = 0.7, age_days: float = 0.0, **meta: Any) -> Row:
    v = None if vec is None else np.asarray(vec, np.float64)
    return Row(id=rid, text=text, vector=v, scope="global", importance=importance,
               timestamp=NOW - age_days * DAY, metadata=meta, columns={})


def ctx(limit: int = 3, vector: list[float] | None = None, **settings: Any) -> Context:
    return Context(store=None, text="q", vector=None if vector is None else np.asarray(vector),
                   scopes=None, limit=limit, now_ms=NOW, settings=settings)


def apply(kind: str, rows: list[Scored], c: Context | None = None, **params: Any) -> Any:
    k = KINDS[kind]
    return k.fn(c or ctx(), rows, k.resolve(params, kind))


def test_weighted_fusion_keeps_the_bm25_floor_for_a_strong_keyword_hit() -> None:
    c = ctx()
    c.legs = {"vector_leg": [Scored(row("a"), 0.4, (("vector", 0.4),))],
              "bm25_leg": [Scored(row("a"), 0.9, (("bm25", 0.9),)),
                           Scored(row("b"), 0.8, (("bm25", 0.8),))]}
    out = apply("weighted_fusion", [], c)
    got = {s.id: s.score for s in out.rows}
    assert got["a"] == pytest.approx(max(0.7 * 0.4 + 0.3 * 0.9, 0.92 * 0.9))  # floor wins
    assert got["b"] == pytest.approx(0.8)  # BM25-only rows keep their score, unweighted
    assert [s.id for s in out.rows] == ["a", "b"]


def test_weighted_fusion_floor_needs_bm25_of_at_least_075() -> None:
    c = ctx()
    c.legs = {"vector_leg": [Scored(row("a"), 0.4)], "bm25_leg": [Scored(row("a"), 0.74)]}
    out = apply("weighted_fusion", [], c)
    assert out.rows[0].score == pytest.approx(0.7 * 0.4 + 0.3 * 0.74)


def test_fusion_orders_vector_rows_first_among_equal_scores() -> None:
    c = ctx()
    c.legs = {"vector_leg": [Scored(row("v"), 0.5 / 0.7)], "bm25_leg": [Scored(row("t"), 0.5)]}
    out = apply("weighted_fusion", [], c, bm25_floor_at=1.0)
    assert [s.id for s in out.rows] == ["v", "t"]
    assert out.rows[0].score == pytest.approx(out.rows[1].score)


def test_recency_boost_adds_a_decaying_bonus_and_caps_at_one() -> None:
    rows = [Scored(row("old", age_days=14), 0.5), Scored(row("new"), 0.95)]
    out = {s.id: s.score for s in apply("recency_boost", rows).rows}
    assert out["old"] == pytest.approx(0.5 + 0.1 * math.exp(-1))
    assert out["new"] == 1.0


def test_importance_weight_scales_by_07_plus_03_importance() -> None:
    out = apply("importance_weight", [Scored(row("a", importance=0.5), 0.8)]).rows
    assert out[0].score == pytest.approx(0.8 * 0.85)


def test_length_norm_penalises_long_texts_but_not_corpus_chunks() -> None:
    long = "x" * 2000
    rows = [Scored(row("a", text=long), 0.8), Scored(row("corpus:f#L1", text=long), 0.8),
            Scored(row("short", text="tiny text"), 0.8)]
    out = {s.id: s.score for s in apply("length_norm", rows).rows}
    assert out["a"] == pytest.approx(0.8 / (1 + 0.5 * math.log2(4)))
    assert out["corpus:f#L1"] == 0.8 and out["short"] == 0.8


def test_length_counts_utf16_units_as_javascript_does() -> None:
    text = "😀" * 300  # 300 code points, 600 UTF-16 units
    out = apply("length_norm", [Scored(row("a", text=text), 0.8)]).rows
    assert out[0].score == pytest.approx(0.8 / (1 + 0.5 * math.log2(600 / 500)))


def test_time_decay_half_life_stretches_with_recent_recalls() -> None:
    plain = row("a", age_days=60)
    recalled = row("b", age_days=60, access_count=4, last_accessed_at=NOW)
    out = {s.id: s.score for s in apply("time_decay", [Scored(plain, 0.8),
                                                       Scored(recalled, 0.8)]).rows}
    assert out["a"] == pytest.approx(0.8 * (0.5 + 0.5 * math.exp(-1)))
    eff = min(60 + 60 * 0.5 * math.log1p(4), 180)
    assert out["b"] == pytest.approx(0.8 * (0.5 + 0.5 * math.exp(-60 / eff)))


def test_lifecycle_decay_never_takes_a_working_row_below_its_tier_floor() -> None:
    ancient = row("a", age_days=5000, importance=0.0)
    out = apply("lifecycle_decay", [Scored(ancient, 0.8)]).rows
    assert out[0].score == pytest.approx(0.8 * (0.3 + 0.7 * 0.7))  # working floor 0.7


def test_lifecycle_decay_peripheral_floor_and_core_floor_differ() -> None:
    rows = [Scored(row("p", age_days=5000, importance=0.0, tier="peripheral"), 0.8),
            Scored(row("c", age_days=5000, importance=0.0, tier="core"), 0.8)]
    out = {s.id: s.score for s in apply("lifecycle_decay", rows).rows}
    assert out["p"] == pytest.approx(0.8 * (0.3 + 0.7 * 0.5))
    assert out["c"] == pytest.approx(0.8 * (0.3 + 0.7 * 0.9))


def test_mmr_defers_a_near_duplicate_without_resorting() -> None:
    rows = [Scored(row("a", vec=[1, 0]), 0.9), Scored(row("a2", vec=[1, 0.1]), 0.8),
            Scored(row("b", vec=[0, 1]), 0.5)]
    out = apply("mmr_defer", rows)
    assert [s.id for s in out.rows] == ["a", "b", "a2"]
    assert out.deferred == ("a2",)


def test_noise_filter_drops_short_and_denial_texts() -> None:
    pats = {"denial": [["i don'?t remember", "i"]], "boiler": [["^(hi|hello)", "i"]]}
    rows = [Scored(row("short", text=" hey "), 0.9), Scored(row("deny", text="I dont remember"),
                                                             0.9),
            Scored(row("hello", text="Hello there friend"), 0.9),
            Scored(row("ok", text="the user likes tea"), 0.9)]
    out = apply("noise_filter", rows, patterns=pats)
    assert [s.id for s in out.rows] == ["ok"]
    assert {d.id: d.code for d in out.dropped} == {"short": "noise", "deny": "noise",
                                                   "hello": "noise"}


def test_window_and_limit_drop_with_their_rank() -> None:
    rows = [Scored(row(str(i)), 1 - i / 10) for i in range(8)]
    out = apply("window", rows, ctx(limit=3), per_limit=2)
    assert len(out.rows) == 6 and out.dropped[0].code == "outside_window"
    out = apply("limit", rows, ctx(limit=3))
    assert [s.id for s in out.rows] == ["0", "1", "2"]
    assert dict(out.dropped[0].detail) == {"rank": 4, "limit": 3}


def test_min_score_then_expiry() -> None:
    rows = [Scored(row("low"), 0.2), Scored(row("gone", valid_until=NOW - 1), 0.9),
            Scored(row("ok", valid_until=NOW + DAY), 0.9)]
    out = apply("min_score", rows, min=0.3, drop_expired=True)
    assert [s.id for s in out.rows] == ["ok"]
    assert [d.code for d in out.dropped] == ["below_min_score", "expired"]


def test_query_expansion_appends_up_to_five_synonyms_for_manual_callers() -> None:
    syn = {"config": {"match_cn": ["配置"], "match_en": ["config"],
                      "add": ["配置", "config", "configuration", "settings", "设置"]}}
    c = ctx(source="manual")
    c.text = "postgres pool config"
    apply("query_expansion", [], c, synonyms=syn)
    assert c.bm25_text == "postgres pool config 配置 configuration settings 设置"
    c2 = ctx(source="auto-recall")
    c2.text = "postgres pool config"
    apply("query_expansion", [], c2, synonyms=syn)
    assert c2.bm25_text == "postgres pool config"


def test_cosine_rerank_blends_with_the_query_cosine() -> None:
    c = ctx(vector=[1.0, 0.0])
    rows = [Scored(row("a", vec=[1.0, 1.0]), 0.6)]
    out = apply("rerank", rows, c).rows
    assert out[0].score == pytest.approx(0.7 * 0.6 + 0.3 * (1 / math.sqrt(2)))


def test_a_configured_cross_encoder_is_said_to_be_not_reproducible() -> None:
    c = ctx(vector=[1.0, 0.0])
    apply("rerank", [Scored(row("a", vec=[1.0, 0.0]), 0.6)], c, api_key_set=True)
    assert c.inexact and "cross-encoder" in c.inexact[0]


def test_parameters_out_of_range_are_refused_with_their_name() -> None:
    from inspector.core.errors import InspectorError

    with pytest.raises(InspectorError, match="mmr.threshold must lie in"):
        KINDS["mmr_defer"].resolve({"threshold": 2}, "mmr")
    with pytest.raises(InspectorError, match="has no parameter"):
        KINDS["mmr_defer"].resolve({"thresold": 0.5}, "mmr")
