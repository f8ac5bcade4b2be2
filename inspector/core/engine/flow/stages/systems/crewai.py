"""CrewAI's unified Memory on its LanceDB storage: the storage search (scope prefix as a
LanceDB prefilter, categories and metadata filtered in Python after a x3 over-fetch), the
deep recall's search over the child scopes, private rows, and the composite score
0.5 * sem + 0.3 * 0.5^(age_days / 30) + 0.2 * importance (crewai 1.15.30)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Scored
from inspector.core.engine.flow.stages.lance_where import (
    like_prefix,
    parse_iso,
    read_hits,
    search,
)
from inspector.core.errors import InspectorError

_ROW = {"id_column": "id", "text_column": "content", "vector_column": "vector",
        "scope_path": "scope", "scope_rule": "prefix_like", "prefilter": True,
        "importance_path": "importance", "time_path": "created_at", "time_format": "iso",
        "metadata_path": "metadata_str", "distance": "l2", "score": "inv1p",
        "min_score": 0.0, "depth_factor": 1.0, "depth_extra": 0}

_FILTERS = (
    P("categories", "list", (), "recall(categories=...): kept when any is among the row's "
      "categories_str; LanceDB is then asked for 3 x the rows", live=False),
    P("metadata_filter", "table", {}, "storage metadata_filter: every key equal in "
      "metadata_str; LanceDB is then asked for 3 x the rows", live=False),
)


def storage_search(ctx: Context, p: dict[str, Any], limit: int,
                   scope: str | None) -> tuple[list[Scored], list[Drop], str]:
    """LanceDBStorage.search(emb, scope_prefix, categories, metadata_filter, limit,
    min_score=0): at most `limit` rows, in LanceDB's order."""
    if ctx.vector is None:
        raise InspectorError(ctx.settings.get("_vector_error") or "CrewAI's recall needs a "
                             "query vector: give --vector, --vector-of ID, or --text with an "
                             "embedder.")
    cats, meta = p["categories"], p["metadata_filter"]
    k = ctx.wide(limit * 3 if (cats or meta) else limit)
    scopes = (scope,) if scope is not None and scope.strip("/") else None
    tbl, where, _ = search(ctx, _ROW, k, scopes, ctx.vector)
    hits, dropped = read_hits(ctx, _ROW, tbl, None)
    out: list[Scored] = []
    for s in hits:
        if cats and not any(c in _categories(s) for c in cats):
            dropped.append(Drop(s.id, "category", (("categories", list(_categories(s))),)))
            continue
        if meta and not all(s.row.metadata.get(key) == v for key, v in meta.items()):
            dropped.append(Drop(s.id, "metadata_filter"))
            continue
        if len(out) >= limit:
            dropped.append(Drop(s.id, "past_limit", (("limit", limit),)))
            continue
        out.append(s)
    return out, dropped, f"asked LanceDB for {k} rows" + (f" where {where!r}" if where else "")


def _categories(s: Scored) -> list[Any]:
    try:
        got = json.loads(s.row.columns.get("categories_str") or "[]")
    except ValueError:
        return []
    return got if isinstance(got, list) else []


@stage("crewai_search", "fetch", *_FILTERS, widens=True, vector=True)
def shallow(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """recall(depth="shallow"): one storage search for exactly `limit` rows under the scope
    prefix; sem = 1 / (1 + distance)."""
    if ctx.scopes is not None and len(ctx.scopes) > 1:
        raise InspectorError("CrewAI's recall takes one scope (a path prefix); several are "
                             "a MemorySlice: preset crewai-memory-slice.")
    scope = ctx.scopes[0] if ctx.scopes else None
    out, dropped, note = storage_search(ctx, p, ctx.limit, scope)
    return Outcome(out, tuple(dropped), note)


def child_scopes(ctx: Context, prefix: str, scan_limit: int) -> list[str]:
    """LanceDBStorage.list_scopes(prefix): the first path component under it, sorted, from
    a scan of at most `scan_limit` rows (in table order) under the prefix."""
    parent = prefix.rstrip("/") or ""
    head = (parent + "/") if parent else "/"
    q = ctx.store.table.search().select(["scope"])
    if head != "/":
        q = q.where(like_prefix(head.rstrip("/"), "scope"))
    children: set[str] = set()
    for rec in q.limit(scan_limit).to_arrow().to_pylist():
        sc = str(rec.get("scope", ""))
        if sc.startswith(head) and sc != (head.rstrip("/") or "/"):
            first = sc[len(head):].split("/", 1)[0]
            if first:
                children.add(head + first)
    return sorted(children)


_DEEP = (
    P("oversample", "int", 2, "each search asks for limit x this (the module constant "
      "_RECALL_OVERSAMPLE_FACTOR: MemoryConfig.recall_oversample_factor is not read)",
      1, 1000, live=False, effect="depth"),
    P("max_scopes", "int", 20, "at most this many child scopes are searched", 1, 10_000,
      live=False),
    P("query_analysis_threshold", "int", 200, "Memory(query_analysis_threshold=...): a "
      "query text this long goes to the LLM for analysis", 0, 1_000_000, live=False),
    P("llm", "str", "configured", "what the LLM does with a long query: configured (it "
      "distils sub-queries, scopes and a time filter: not reproducible, the answer is marked "
      "inexact) or fails (no LLM, or its call fails: CrewAI searches the raw query in the "
      "first 5 child scopes of the scope, or '/' when it has none, exactly as shown)",
      live=False, choices=("configured", "fails")),
    P("scan_limit", "int", 50_000, "list_scopes reads at most this many rows "
      "(_SCAN_ROWS_LIMIT): child scopes only further down the table are not searched", 1,
      100_000_000, live=False),
)


def deep_scopes(ctx: Context, p: dict[str, Any], scope: str | None) -> list[str]:
    """The scopes the RecallFlow searches: a short query, the first max_scopes child scopes
    of the scope (the scope itself without children); a long one whose LLM analysis failed,
    the first 5 child scopes (analyze_query's defaults), '/' without children."""
    prefix = (scope or "/").rstrip("/") or "/"
    children = child_scopes(ctx, prefix, p["scan_limit"])
    if ctx.text is not None and len(ctx.text) >= p["query_analysis_threshold"]:
        if p["llm"] == "configured":
            ctx.inexact.append(f"CrewAI's deep recall hands a query of {len(ctx.text)} "
                               f"characters (>= {p['query_analysis_threshold']}) to its LLM, "
                               f"which distils sub-queries, scopes and a time filter: not "
                               f"reproduced; shown is the search CrewAI makes when that call "
                               f"fails (--set search.llm=fails says it does)")
        return (children or ["/"])[:5]
    return children[:p["max_scopes"]] or [prefix]


def deep_rows(ctx: Context, p: dict[str, Any], limit: int, scope: str | None
              ) -> tuple[list[Scored], list[Drop], list[str]]:
    """The RecallFlow's searches for one recall: limit x oversample rows per candidate
    scope, deduplicated by id in scope order."""
    scopes = deep_scopes(ctx, p, scope)
    seen: set[str] = set()
    out: list[Scored] = []
    dropped: list[Drop] = []
    for sc in scopes:
        got, drop, _ = storage_search(ctx, p, limit * p["oversample"], sc)
        dropped += drop
        for s in got:
            if s.id not in seen:
                seen.add(s.id)
                out.append(s.rescored(s.score, **{"scope_searched": float(scopes.index(sc))}))
    return out, dropped, scopes


@stage("crewai_deep_search", "fetch", *_FILTERS, *_DEEP, widens=True, vector=True)
def deep(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """recall(depth="deep") without the LLM's analysis (a query shorter than
    query_analysis_threshold, or one whose LLM call fails): one search per candidate scope
    (limit x 2 rows each), rows deduplicated by id."""
    if ctx.scopes is not None and len(ctx.scopes) > 1:
        raise InspectorError("CrewAI's recall takes one scope (a path prefix); several are "
                             "a MemorySlice: preset crewai-memory-slice.")
    out, dropped, scopes = deep_rows(ctx, p, ctx.limit, ctx.scopes[0] if ctx.scopes else None)
    return Outcome(out, tuple(dropped), f"searched {len(scopes)} scope(s): "
                   f"{', '.join(scopes[:5])}{' …' if len(scopes) > 5 else ''}; "
                   f"{ctx.limit * p['oversample']} rows asked of each")


@stage("drop_private", "filter",
       P("include_private", "bool", False, "recall(include_private=True) keeps every row",
         effect="prefilter"),
       P("source", "str", "", "recall(source=...): private rows of this source are kept"))
def drop_private(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Private rows are dropped unless include_private, or their source is the caller's."""
    if p["include_private"]:
        return Outcome(rows, note="include_private")
    keep, dropped = [], []
    for s in rows:
        private = bool(s.row.columns.get("private"))
        if private and not (p["source"] and s.row.columns.get("source") == p["source"]):
            dropped.append(Drop(s.id, "private", (("source", s.row.columns.get("source")),)))
        else:
            keep.append(s)
    return Outcome(keep, tuple(dropped))


@stage("crewai_composite", "transform",
       P("semantic_weight", "float", 0.5, "Memory(semantic_weight=...)", 0, 1,
         effect="weight", step=0.05),
       P("recency_weight", "float", 0.3, "Memory(recency_weight=...)", 0, 1, effect="weight",
         step=0.05),
       P("importance_weight", "float", 0.2, "Memory(importance_weight=...)", 0, 1,
         effect="weight", step=0.05),
       P("half_life_days", "int", 30, "Memory(recency_half_life_days=...)", 1, 1_000_000))
def composite(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """w_sem * sem + w_rec * 0.5^(age_days / half_life) + w_imp * importance, age from
    created_at (naive UTC) to now, clamped at 0; a stable descending sort."""
    now = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ctx.now_ms)
    out = []
    for s in rows:
        created = parse_iso(s.row.columns.get("created_at"))
        if created is None:
            raise InspectorError(f"Row {s.id}: created_at {s.row.columns.get('created_at')!r} "
                                 f"is not ISO text, which CrewAI would fail on too.")
        age = max((now - created.replace(tzinfo=None)).total_seconds() / 86400.0, 0.0)
        decay = 0.5 ** (age / p["half_life_days"])
        score = (p["semantic_weight"] * s.score + p["recency_weight"] * decay
                 + p["importance_weight"] * s.row.importance)
        out.append(s.rescored(score, recency=decay, importance=s.row.importance))
    out.sort(key=lambda s: s.score, reverse=True)
    return Outcome(out)


_COMPOSITE = ("semantic_weight", "recency_weight", "importance_weight", "half_life_days")


@stage("crewai_slice", "fetch", *_FILTERS, *_DEEP,
       P("depth", "str", "deep", "MemorySlice.recall(depth=...)", live=False,
         choices=("deep", "shallow")),
       P("include_private", "bool", False, "recall(include_private=True) keeps every row",
         live=False, effect="prefilter"),
       P("source", "str", "", "recall(source=...)", live=False),
       P("semantic_weight", "float", 0.5, "Memory(semantic_weight=...)", 0, 1, live=False,
         effect="weight", step=0.05),
       P("recency_weight", "float", 0.3, "Memory(recency_weight=...)", 0, 1, live=False,
         effect="weight", step=0.05),
       P("importance_weight", "float", 0.2, "Memory(importance_weight=...)", 0, 1,
         live=False, effect="weight", step=0.05),
       P("half_life_days", "int", 30, "Memory(recency_half_life_days=...)", 1, 1_000_000,
         live=False), widens=True, vector=True)
def slice_recall(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """MemorySlice(scopes=[...]).recall: one full recall per scope at limit x 2 (search,
    private rows dropped, composite, sorted; deep recalls cut to limit x 2), the results
    concatenated in scope order, sorted by score (stable), de-duplicated by id; the final
    stage cuts to limit."""
    scopes = [s.rstrip("/") or "/" for s in (ctx.scopes or ("/",))]
    inner = ctx.limit * p["oversample"]
    private = {"include_private": p["include_private"], "source": p["source"]}
    weights = {k: p[k] for k in _COMPOSITE}
    merged: list[Scored] = []
    dropped: list[Drop] = []
    for sc in scopes:
        if p["depth"] == "shallow":
            got, drop, _ = storage_search(ctx, p, inner, None if sc == "/" else sc)
        else:
            got, drop, _ = deep_rows(ctx, p, inner, sc)
        kept = drop_private(ctx, got, private)
        scored = composite(ctx, kept.rows, weights).rows
        if p["depth"] == "deep":
            dropped += [Drop(s.id, "past_limit", (("limit", inner), ("scope", sc)))
                        for s in scored[inner:]]
            scored = scored[:inner]
        dropped += list(drop) + list(kept.dropped)
        merged += [s.rescored(s.score, slice_scope=float(scopes.index(sc))) for s in scored]
    merged.sort(key=lambda s: s.score, reverse=True)
    seen: set[str] = set()
    out: list[Scored] = []
    for s in merged:
        if s.id not in seen:
            seen.add(s.id)
            out.append(s)
    return Outcome(out, tuple(dropped), f"{len(scopes)} recall(s) ({p['depth']}), "
                   f"{inner} rows each: {', '.join(scopes)}")
