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


def test_a_tick_matches_each_text_against_the_noise_patterns_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A slider tick runs the filter again on the same texts: each text is decided once per
    rule (minimum length and patterns), with the drops a fresh filter gives; another rule
    decides again."""
    from inspector.core.engine import js
    from inspector.core.engine.flow.stages import cuts

    searched: list[str] = []
    real = js.js_regex

    class Counted:
        def __init__(self, rx: Any) -> None:
            self.rx = rx

        def search(self, text: str) -> Any:
            searched.append(text)
            return self.rx.search(text)

    monkeypatch.setattr(js, "js_regex", lambda pat, flags="": Counted(real(pat, flags)))
    monkeypatch.setattr(cuts, "_NOISE", {})
    monkeypatch.setattr(cuts, "_NOISE_COUNT", [0])
    pats = {"denial": [["i don'?t remember", "i"]], "boiler": [["^(hi|hello)", "i"]]}
    rows = [Scored(row("deny", text="I dont remember"), 0.9),
            Scored(row("hello", text=" Hello there friend"), 0.8),
            Scored(row("ok", text="the user likes tea"), 0.7),
            Scored(row("short", text=" hey "), 0.6)]
    first = apply("noise_filter", rows, patterns=pats)
    n = len(searched)
    assert n == 5  # deny: 1 pattern, hello: 2, ok: 2; the short text matches none
    again = apply("noise_filter", list(reversed(rows)), patterns=pats)
    assert len(searched) == n  # decided already
    assert [s.id for s in again.rows] == ["ok"] and {d.id: d.detail for d in again.dropped} \
        == {d.id: d.detail for d in first.dropped}
    assert dict(first.dropped[1].detail) == {"group": "boiler", "pattern": "^(hi|hello)"}
    other = apply("noise_filter", rows, patterns={"tea": [["tea", ""]]}, min_length=16)
    assert len(searched) == n + 2  # another rule: "ok" and "deny" matched again
    assert [s.id for s in other.rows] == ["hello"]


def test_the_noise_memo_starts_again_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.core.engine.flow.stages import cuts

    monkeypatch.setattr(cuts, "_NOISE", {})
    monkeypatch.setattr(cuts, "_NOISE_COUNT", [0])
    monkeypatch.setattr(cuts, "NOISE_TEXTS_MAX", 5)
    for i in range(4):
        rows = [Scored(row(f"{i}-{j}", text=f"memory number {i} {j}"), 0.5) for j in range(3)]
        assert len(apply("noise_filter", rows).rows) == 3
        assert sum(map(len, cuts._NOISE.values())) <= 5


def test_a_tick_compares_each_pair_of_vectors_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """MMR compares the same rows' vectors again on every tick: each pair is computed once,
    the deferrals are a fresh run's, and equal vectors in other arrays are computed anew."""
    from inspector.core.engine import js
    from inspector.core.engine.flow.stages import diversity

    calls: list[int] = []
    real = js.cosine
    monkeypatch.setattr(js, "cosine", lambda a, b: calls.append(1) or real(a, b))
    monkeypatch.setattr(diversity, "_COSINES", {})
    rows = [Scored(row("a", vec=[1, 0]), 0.9), Scored(row("a2", vec=[1, 0.1]), 0.8),
            Scored(row("b", vec=[0, 1]), 0.5), Scored(row("c", vec=[0.2, 1]), 0.4)]
    first = apply("mmr_defer", rows)
    n = len(calls)
    assert n == 4  # a2~a; b~a; c~a, c~b (a2 deferred: not compared)
    again = apply("mmr_defer", rows)
    assert len(calls) == n
    assert [s.id for s in again.rows] == [s.id for s in first.rows] == ["a", "b", "a2", "c"]
    copies = [Scored(row(s.id, vec=list(s.row.vector)), s.score) for s in rows]
    assert [s.id for s in apply("mmr_defer", copies).rows] == ["a", "b", "a2", "c"]
    assert len(calls) == 2 * n
    monkeypatch.setattr(diversity, "COSINES_MAX", 3)
    apply("mmr_defer", copies[::-1])
    assert len(diversity._COSINES) <= 3


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

    with pytest.raises(InspectorError, match="mmr.threshold must be a finite number in"):
        KINDS["mmr_defer"].resolve({"threshold": 2}, "mmr")
    with pytest.raises(InspectorError, match="has no parameter"):
        KINDS["mmr_defer"].resolve({"thresold": 0.5}, "mmr")


# ----------------------------------------------- openclaw-mem's docs engine (openclaw_docs)

class _DocsFile:
    """A store answering `source_rows` from a tiny SQLite file of the docs engine's shape."""

    model = "m"

    def __init__(self, chunks: list[tuple[int, str, str, str]],
                 embeddings: list[tuple[int, list[float]]] = ()) -> None:
        import sqlite3

        self.connection = con = sqlite3.connect(":memory:")
        con.executescript(
            "CREATE TABLE docs_chunks (id INTEGER PRIMARY KEY, doc_id TEXT, chunk_id TEXT, "
            "repo TEXT, path TEXT, doc_kind TEXT, heading_path TEXT, title TEXT, text TEXT);"
            "CREATE VIRTUAL TABLE docs_chunks_fts USING fts5(text, title, heading_path, path, "
            "repo, doc_kind, content='docs_chunks', content_rowid='id');"
            "CREATE TABLE docs_embeddings (chunk_rowid INTEGER, model TEXT, dim INTEGER, "
            "vector BLOB, norm REAL, PRIMARY KEY(chunk_rowid, model));"
            "CREATE INDEX idx_docs_embeddings_model ON docs_embeddings(model);")
        for cid, repo, path, text in chunks:
            con.execute("INSERT INTO docs_chunks VALUES (?, ?, 'c', ?, ?, 'doc', '', '', ?)",
                        (cid, f"{repo}:{path}", repo, path, text))
            con.execute("INSERT INTO docs_chunks_fts(rowid, text, title, heading_path, path, "
                        "repo, doc_kind) VALUES (?, ?, '', '', ?, ?, 'doc')",
                        (cid, text, path, repo))
        for cid, vec in embeddings:
            v = np.asarray(vec, np.float32)
            con.execute("INSERT OR REPLACE INTO docs_embeddings VALUES (?, 'm', ?, ?, ?)",
                        (cid, len(vec), v.tobytes(), math.sqrt(sum(x * x for x in vec))))

    def source_rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, args).fetchall()


def docs_ctx(store: Any, text: str, limit: int = 3, scopes: tuple[str, ...] | None = None,
             vector: list[float] | None = None) -> Context:
    return Context(store=store, text=text, vector=None if vector is None else
                   np.asarray(vector, np.float64), scopes=scopes, limit=limit, now_ms=NOW,
                   settings={})


def test_openclaw_scope_spelling_is_normalised_as_the_plugin_does() -> None:
    from inspector.core.engine.flow.stages.openclaw_docs import norm_scope, scope_key

    assert norm_scope("[iso:Steamer-Card-Engine]") == "steamer-card-engine"
    assert norm_scope("  //Docs:Specs]] ") == "docs:specs"
    assert norm_scope("SCOPE:global") == "global"
    assert norm_scope("iso:scope:x") == "scope:x"  # one prefix at a time
    assert scope_key("docs:specs") == "docs" and scope_key("steamer/cards") == "steamer"
    assert scope_key(":x") == ":x"  # an empty first part keeps the whole


def test_openclaw_pushdown_normalises_again_and_unions_the_map() -> None:
    from inspector.core.engine.flow.stages.openclaw_docs import pushdown_repos

    # the plugin passes the normalised scope, and computeScopePushdownRepos normalises again
    assert pushdown_repos("iso:x", "repo_prefix", {}) == ["x"]
    smap = {"steamer": ["A_Repo", "steamer-card-engine"],
            "steamer/cards": ["steamer-card-engine/docs", "/Steamer-Card-Engine"]}
    # the scope's own entries, then its key's; entries with '/' out; case-insensitive de-dup
    assert pushdown_repos("steamer/cards", "map", smap) == ["Steamer-Card-Engine", "A_Repo"]
    assert pushdown_repos("steamer/cards", "path_prefix", smap) == []
    assert pushdown_repos("global", "repo_prefix", {}) == []


def test_openclaw_post_filter_rules() -> None:
    from inspector.core.engine.flow.stages.openclaw_docs import matches_scope

    pp = "path_prefix"
    assert matches_scope("r", "docs/specs/a.md", "docs:specs", pp, {})  # ':' becomes '/'
    assert matches_scope("r", "x/docs/specs/a.md", "docs:specs", pp, {})
    assert not matches_scope("r", "docs/specsx.md", "docs:specs", pp, {})
    assert matches_scope("Steamer", "a.md", "steamer", "repo_prefix", {})  # lower-cased repo
    assert matches_scope("other", "steamer/a.md", "steamer", "repo_prefix", {})
    # map: paths are relative to the repo, so a "repo/dir" entry never matches a path
    smap = {"ops": ["ops-runbooks/runbooks"]}
    assert not matches_scope("ops-runbooks", "runbooks/a.md", "ops", "map", smap)
    assert not matches_scope("x", "a.md", "unmapped", "map", smap)  # no entries: nothing
    assert matches_scope("x", "a.md", "anything", "none", {})


def test_openclaw_scope_map_keys_of_object_prototype_throw_as_javascript_does() -> None:
    from inspector.core.engine.flow.stages.openclaw_docs import matches_scope, pushdown_repos
    from inspector.core.errors import InspectorError

    with pytest.raises(InspectorError, match="TypeError"):
        pushdown_repos("constructor", "map", {})
    with pytest.raises(InspectorError, match="TypeError"):
        matches_scope("r", "p", "__proto__", "map", {"other": ["x"]})
    # the scope is lower-cased first, so camel-cased names are ordinary missing keys
    assert matches_scope("r", "p", "toString", "map", {}) is False
    assert pushdown_repos("constructor", "map", {"constructor": ["r"]}) == ["r"]


def test_openclaw_scope_map_config_is_resolved_as_the_plugin_resolves_it() -> None:
    from inspector.core.engine.flow.stages.openclaw_docs import normalize_scope_map

    got = normalize_scope_map({"b": ["x"], "[ISO:Team]": [" /a ", 3, "", "b"], "10": ["ten"],
                               "2": ["two"], "team": ["later"], "empty": [], "bad": "x"})
    assert list(got) == ["2", "10", "b", "team"]  # index keys first, as Object.entries
    assert got["team"] == ["later"]  # a later key normalising alike wins
    assert normalize_scope_map({"k": [str(i) for i in range(20)]})["k"] == \
        [str(i) for i in range(16)]


def test_openclaw_snippet_clip_counts_utf16_units_and_javascript_whitespace() -> None:
    from inspector.core.engine.flow.stages.openclaw_docs import clip_snippet

    assert clip_snippet("\ufeff a \u00a0\n b \u2028", 280) == "a b"
    assert clip_snippet("\x1c a", 280) == "\x1c a"  # not JavaScript whitespace
    assert clip_snippet("x" * 100, 10) == "x" * 80 + "…"  # at least 80
    assert clip_snippet("😀" * 50, 80) == "😀" * 40 + "…"  # 2 UTF-16 units each
    assert clip_snippet("y" * 1300, 5000) == "y" * 1200 + "…"  # at most 1200


def test_openclaw_depths_follow_the_plugin_and_the_cli() -> None:
    store = _DocsFile([])
    c = docs_ctx(store, "  q  ", limit=3, scopes=("steamer",))
    out = apply("openclaw_docs_request", [], c, search_fts_k=40, search_vec_k=10)
    assert c.request["limit"] == 40 and c.request["fts_k"] == 40 and c.request["vec_k"] == 40
    assert c.request["query"] == "q" and out.facts["pushdownRepos"] == ["steamer"]
    c = docs_ctx(store, "q", limit=10, scopes=("steamer",))
    apply("openclaw_docs_request", [], c)
    assert c.request["limit"] == 50 and c.request["pool"] == 50
    c = docs_ctx(store, "q", limit=3, scopes=("steamer",))
    out = apply("openclaw_docs_request", [], c, overfetch=False, pushdown=False)
    assert (c.request["limit"], c.request["fts_k"], out.facts["pushdownRepos"]) == (3, 20, [])
    c = docs_ctx(store, "q", limit=3, scopes=("",))
    apply("openclaw_docs_request", [], c, max_items=2)
    assert (c.request["limit"], c.request["plugin_limit"], c.request["scoped"]) == (2, 2, False)
    c = docs_ctx(store, "q", limit=4)
    apply("openclaw_docs_cli_args", [], c, fts_k=0, vec_k=3, k=0)
    assert (c.request["fts_k"], c.request["vec_k"], c.request["rrf_k"]) == (8, 4, 60)


def test_openclaw_request_refusals_and_failures() -> None:
    from inspector.core.errors import InspectorError

    store = _DocsFile([])
    with pytest.raises(InspectorError, match="one scope"):
        apply("openclaw_docs_request", [], docs_ctx(store, "q", scopes=("a", "b")))
    c = docs_ctx(store, " \ufeff ")
    assert apply("openclaw_docs_request", [], c).facts["error"] == "empty_query"
    c = docs_ctx(store, "-card")  # the CLI's argparse takes it for an option
    assert apply("openclaw_docs_request", [], c).facts["error"] == "docs_search_failed"
    assert c.inexact
    c = docs_ctx(store, "-card engine")  # with a space argparse takes it as the query
    assert apply("openclaw_docs_request", [], c).facts["error"] is None
    with pytest.raises(InspectorError, match="empty query"):
        apply("openclaw_docs_cli_args", [], docs_ctx(store, "  "))


def _leg(store: Any, text: str, kind: str = "sqlite_fts5", scopes: Any = None,
         vector: list[float] | None = None, **params: Any) -> Any:
    c = docs_ctx(store, text, limit=10, scopes=scopes, vector=vector)
    apply("openclaw_docs_cli_args", [], c)
    return apply(kind, [], c, **params)


def test_openclaw_fts5_leg_hands_the_raw_text_to_fts5() -> None:
    store = _DocsFile([(1, "r", "a.md", "alpha beta"), (2, "r", "b.md", "alpha"),
                       (3, "R", "c.md", "beta gamma"), (4, "r", "d.md", "alpha-beta x")])
    assert [s.id for s in _leg(store, "alpha beta").rows] == ["1", "4"]  # implicit AND
    assert [s.id for s in _leg(store, "alpha NOT beta").rows] == ["2"]
    assert {s.id for s in _leg(store, "gam*").rows} == {"3"}
    out = _leg(store, "alpha-beta")  # FTS5 reads '-beta' as a column: retried as one phrase
    assert out.facts["syntax_error"] and out.facts["retried_as_phrase"]
    assert out.facts["match"] == '"alpha-beta"' and {s.id for s in out.rows} == {"1", "4"}
    out = _leg(store, "alpha-beta", phrase_retry=False)
    assert out.rows == [] and out.facts["match"] is None
    out = _leg(store, 'alpha "beta')  # a syntax error without '-': the leg is empty
    assert out.rows == [] and not out.facts["retried_as_phrase"]
    assert [s.id for s in _leg(store, "beta", scopes=("R",)).rows] == ["3"]  # exact repo
    assert _leg(store, "beta", scopes=("r",)).rows[0].id != "3"
    scores = [s.score for s in _leg(store, "alpha").rows]
    assert scores == sorted(scores)  # bm25, lower is better


def test_openclaw_cjk_fallback_ranks_by_terms_matched_then_id() -> None:
    from inspector.core.engine.flow.stages.openclaw_docs import cjk_terms

    assert cjk_terms("倉庫白名單") == ["倉庫白名單", "倉庫", "庫白", "白名", "名單"]
    assert cjk_terms("範圍 飢餓 x 字") == ["範圍", "飢餓"]
    # chunk 2 holds 倉庫, 白名 and 名單
    store = _DocsFile([(1, "r", "a.md", "倉庫 only"), (2, "r", "b.md", "有白名單與倉庫"),
                       (3, "r", "c.md", "白名 here"), (4, "r", "d.md", "none")])
    out = _leg(store, "倉庫白名單")
    assert out.facts["fallback"] == "cjk_like"
    assert [(s.id, s.score) for s in out.rows] == [("2", -3.0), ("1", -1.0), ("3", -1.0)]
    assert _leg(store, "倉庫白名單", cjk_fallback=False).rows == []


def test_openclaw_cosine_leg_keeps_scan_order_for_equal_cosines() -> None:
    store = _DocsFile([(1, "r", "a.md", "a"), (2, "r", "b.md", "b"), (3, "r", "c.md", "c"),
                       (4, "r", "d.md", "d")],
                      [(3, [1.0, 0.0]), (1, [0.0, 1.0]), (2, [2.0, 0.0]), (4, [0.0, 0.0])])
    store.connection.execute("DELETE FROM docs_embeddings WHERE chunk_rowid = 3")
    store.connection.execute("INSERT INTO docs_embeddings VALUES (3, 'm', 2, ?, 1.0)",
                             (np.asarray([1.0, 0.0], np.float32).tobytes(),))  # re-embedded
    out = _leg(store, "q", kind="sqlite_cosine", vector=[1.0, 0.0])
    # 2 and 3 tie at cosine 1: 3 was embedded again, so it is scanned (and ranked) last;
    # the zero vector (norm 0) is skipped
    assert [(s.id, s.score) for s in out.rows] == [("2", 1.0), ("3", 1.0), ("1", 0.0)]


def test_openclaw_python_sums_compensated_or_plain() -> None:
    from inspector.core.engine.flow.stages.openclaw_docs import _py_sum

    xs = np.asarray([[1e16, 1.0, -1e16]])
    assert _py_sum(xs, compensated=False)[0] == sum([1e16, 1.0, -1e16]) == 0.0  # this Python
    assert _py_sum(xs, compensated=True)[0] == 1.0  # CPython 3.12's sum()


def test_openclaw_rrf_orders_equal_scores_by_chunk_id() -> None:
    store = _DocsFile([])
    c = docs_ctx(store, "q", limit=1)
    apply("openclaw_docs_cli_args", [], c)
    a, b = (Row(id=str(i), text="", vector=None, scope="r", importance=0.0, timestamp=0.0,
                metadata={}, columns={}, rowid=i) for i in (20, 10))
    c.legs = {"fts_leg": [Scored(a, 0.0), Scored(b, 0.0)],
              "vec_leg": [Scored(b, 0.0), Scored(a, 0.0)]}
    out = apply("rrf_fusion", [], c, cut=1)
    assert [s.id for s in out.rows] == ["10"] and out.rows[0].score == 1 / 61 + 1 / 62
    assert [d.id for d in out.dropped] == ["20"]
    assert apply("rrf_fusion", [], c, k=1).rows[0].score == 1 / 2 + 1 / 3
