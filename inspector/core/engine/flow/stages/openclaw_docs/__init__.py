"""openclaw-mem's docs search (seed 000's docs engine) on its own SQLite file, stage by stage.

- The plugin's request (`docsColdLane.js` docsSearchWithCli): the query trimmed, the limit
  clamped, the scope normalised, the over-fetch depth and the repo pushdown, turned into the
  arguments of `openclaw-mem docs search`; or the CLI's own arguments when it is called alone.
- The CLI's legs (`cmd_docs_search`): the raw text handed to FTS5 as its MATCH expression
  (bm25, ties by chunk id; one phrase retry on a syntax error when the text holds '-'; an
  empty leg otherwise; the CJK LIKE fallback), and a brute-force cosine over
  `docs_embeddings` in its scan order (equal cosines keep embedding-insertion order).
- RRF `1 / (k + rank)` over [fts, vector], float64, ties by chunk id; the CLI's cut.
- The plugin's post-filter (`matchesScope`) and snippets (`clipSnippet`).

Every query runs on the read-only SQLite source (`DocsStore.source_rows`). Query stages put
what shapes the fetches into `ctx.request`, which is part of each fetch's cache key.
Read from github.com/phenomenoner/openclaw-mem; the commits are in the pipeline files.
"""

from __future__ import annotations

from typing import Any

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, CutDrops, Drop, Outcome, Row, Scored
from inspector.core.engine.flow.stages.openclaw_docs.rules import (  # noqa: F401
    CHUNK_COLUMNS,
    STRATEGIES,
    _argparse_takes_as_option,
    _js_entries,
    _js_string,
    _map_entries,
    _request,
    _utf16,
    clip_snippet,
    js_trim,
    matches_scope,
    norm_scope,
    normalize_scope_map,
    pushdown_repos,
    scope_key,
)
from inspector.core.errors import InspectorError

# ------------------------------------------------------------------------------ the request

def _one_scope(ctx: Context) -> str:
    if ctx.scopes is None:
        return ""
    if len(ctx.scopes) != 1:
        raise InspectorError("The docs cold lane takes one scope string (or none): give "
                             "--scope SCOPE once.")
    return ctx.scopes[0]


def _cli_depths(limit: int, fts_k: int, vec_k: int, k: int) -> dict[str, int]:
    """cmd_docs_search: limit = max(1, limit or 10); each leg max(limit, k or 2 * limit);
    the RRF constant max(1, k or 60); the fused list cut to max(limit, fts_k, vec_k)."""
    limit = max(1, limit or 10)
    fts = max(limit, fts_k or limit * 2)
    vec = max(limit, vec_k or limit * 2)
    return {"limit": limit, "fts_k": fts, "vec_k": vec, "rrf_k": max(1, k or 60),
            "pool": max(limit, fts, vec)}


def _dedupe_repos(repos: list[str]) -> tuple[str, ...]:
    """_docs_scope_repos: stripped, empty ones dropped, de-duplicated exactly."""
    return tuple(dict.fromkeys(r.strip() for r in repos if r.strip()))


@stage("openclaw_docs_request", "query",
       P("search_fts_k", "int", 20, "searchFtsK: the FTS leg's depth asked of the CLI, "
         "max(limit sent, this)", 1, 100, live=False, effect="depth"),
       P("search_vec_k", "int", 20, "searchVecK: the vector leg's depth, max(limit sent, "
         "this)", 1, 100, live=False, effect="depth"),
       P("search_rrf_k", "int", 60, "searchRrfK: the RRF constant sent as --k", 1, 200,
         live=False),
       P("max_items", "int", 10, "maxItems: the plugin's tools ask for min(maxItems, limit) "
         "(10: docsSearchWithCli called directly)", 1, 10, live=False),
       P("strategy", "str", "repo_prefix", "scopeMappingStrategy", live=False,
         choices=STRATEGIES),
       P("scope_map", "table", {}, "scopeMap: {scope: [repo or path prefix, ...]}, "
         "normalised as the plugin's config resolution does", live=False),
       P("overfetch", "bool", True, "a scoped query asks the CLI for max(L, min(cap, "
         "max(factor * L, searchFtsK, searchVecK))) rows (ef614f4); false: L (38d2596)",
         live=False, effect="depth"),
       P("overfetch_factor", "int", 5, "the over-fetch's factor of L", 1, 1000, live=False,
         effect="depth"),
       P("overfetch_cap", "int", 50, "the over-fetch's cap", 1, 100_000, live=False,
         effect="depth"),
       P("pushdown", "bool", True, "send the scope's repos as --scope-repos (8ed98cd; "
         "repo_prefix and map only)", live=False, effect="prefilter"))
def plugin_request(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The plugin's call of `openclaw-mem docs search` (docsSearchWithCli).

    The query trimmed, the limit L clamped to 1..10 (by the pipeline's limit), one scope
    normalised, the over-fetch depth and the repo pushdown; the CLI's own reading of them
    goes into ctx.request."""
    if ctx.text is None:
        raise InspectorError("The docs cold lane searches text: give --text (and --vector "
                             "for its vector leg).")
    query = js_trim(ctx.text)
    scope = _one_scope(ctx)
    L = max(1, min(p["max_items"], ctx.limit))
    strategy = p["strategy"]
    smap = normalize_scope_map(p["scope_map"])
    n = norm_scope(scope)
    scoped = bool(n) and n != "global"
    repos = pushdown_repos(n, strategy, smap) if scoped and p["pushdown"] else []
    sent = L
    if scoped and p["overfetch"]:
        sent = max(L, min(p["overfetch_cap"], max(L * p["overfetch_factor"],
                                                  p["search_fts_k"], p["search_vec_k"])))
    fts_arg, vec_arg = max(sent, p["search_fts_k"]), max(sent, p["search_vec_k"])
    k_arg = max(1, p["search_rrf_k"])
    argv = ["docs", "search", query, "--limit", str(sent), "--fts-k", str(fts_arg),
            "--vec-k", str(vec_arg), "--k", str(k_arg)]
    if repos:
        argv += ["--scope-repos", *repos]
    error = None
    if not query:
        error = "empty_query"
    elif any(_argparse_takes_as_option(a) for a in [query, *repos]):
        error = "docs_search_failed"
        ctx.inexact.append("the CLI's argument parser takes a query or repo starting with '-' "
                           "for an option and exits 2; the plugin then returns no row and an "
                           "error whose text (the failed command) is not reproduced")
    cli_query = query.strip()
    ctx.bm25_text = cli_query
    ctx.request = {"query": cli_query, **_cli_depths(sent, fts_arg, vec_arg, k_arg),
                   "scope_repos": _dedupe_repos(repos), "plugin_limit": L, "scope": n,
                   "scoped": scoped, "strategy": strategy, "scope_map": smap, "error": error}
    facts = {"argv": argv if error != "empty_query" else [], "limit": L, "scope": n,
             "scoped": scoped, "pushdownRepos": repos, "pushdownApplied": bool(repos),
             "error": error}
    note = f"openclaw-mem {' '.join(argv)}" if error is None else f"no result: {error}"
    return Outcome(rows, note=note, facts=facts)


@stage("openclaw_docs_cli_args", "query",
       P("fts_k", "int", 30, "--fts-k (0: 2 x limit)", 0, 1_000_000, live=False,
         effect="depth"),
       P("vec_k", "int", 30, "--vec-k (0: 2 x limit)", 0, 1_000_000, live=False,
         effect="depth"),
       P("k", "int", 60, "--k, the RRF constant (0: 60)", 0, 1_000_000, live=False))
def cli_args(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The CLI's own arguments: `openclaw-mem docs search` called alone.

    `docs search QUERY --limit N --fts-k K --vec-k K --k K [--scope-repos SCOPE...]`: each
    --scope is one repo of the allowlist, compared exactly."""
    if ctx.text is None:
        raise InspectorError("docs search takes a query: give --text (and --vector for its "
                             "vector leg).")
    query = ctx.text.strip()
    if not query:
        raise InspectorError("docs search: empty query (the CLI exits 2).")
    if ctx.scopes == ():
        raise InspectorError("docs search takes --scope REPO (repeated) for --scope-repos; an "
                             "empty list is not an argument it can be given.")
    repos = _dedupe_repos(list(ctx.scopes or ()))
    if any(_argparse_takes_as_option(a) for a in [query, *(ctx.scopes or ())]):
        raise InspectorError("docs search: the CLI's argument parser takes a value starting "
                             "with '-' for an option and exits 2.")
    depths = _cli_depths(ctx.limit, p["fts_k"], p["vec_k"], p["k"])
    ctx.bm25_text = query
    ctx.request = {"query": query, **depths, "scope_repos": repos, "error": None}
    argv = ["docs", "search", query, "--limit", str(depths["limit"]), "--fts-k",
            str(p["fts_k"]), "--vec-k", str(p["vec_k"]), "--k", str(p["k"])]
    if repos:
        argv += ["--scope-repos", *repos]
    return Outcome(rows, note=f"openclaw-mem {' '.join(argv)}",
                   facts={"argv": argv, "pushdown_repos": list(repos),
                          "pushdown_applied": bool(repos)})


# ------------------------------------------------------------------------- fusion and cuts

@stage("rrf_fusion", "fusion",
       P("text_leg", "str", "fts_leg", "name of the full-text leg stage"),
       P("vector_leg", "str", "vec_leg", "name of the vector leg stage"),
       P("k", "int", 0, "the RRF constant (0: the request's --k)", 0, 1_000_000),
       P("cut", "int", 0, "rows kept (0: the CLI's max(limit, fts_k, vec_k))", 0, 1_000_000),
       widens=True)
def rrf_fusion(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Reciprocal rank fusion as the engine's rank_rrf: float64, ties by chunk id.

    score = sum over [fts, vector] of 1 / (k + rank), rank 1-based; sorted by (-score, id);
    cut to the CLI's max(limit, fts_k, vec_k)."""
    req = ctx.request
    k = p["k"] or int(req.get("rrf_k", 60))
    cut = ctx.wide(p["cut"] or int(req.get("pool", 20)))
    legs = [ctx.legs.get(p["text_leg"], []), ctx.legs.get(p["vector_leg"], [])]
    scores: dict[int, float] = {}
    base: dict[int, Row] = {}
    ranks: dict[int, list[tuple[str, float]]] = {}
    for name, leg in zip(("fts_rank", "vec_rank"), legs, strict=True):
        for rank, s in enumerate(leg):
            rid = s.row.rowid
            scores[rid] = scores.get(rid, 0.0) + 1.0 / (k + rank + 1)
            base.setdefault(rid, s.row)
            ranks.setdefault(rid, []).append((name, float(rank + 1)))
    fused = sorted(scores.items(), key=lambda x: (-x[1], x[0]))
    out = [Scored(base[rid], sc, (*ranks[rid], ("fused", sc))) for rid, sc in fused]
    kept = out[:max(1, cut)]
    dropped = CutDrops(out, max(1, cut), "past_limit", "limit")
    return Outcome(kept, dropped, note=f"RRF k {k}, ties by chunk id, cut to {max(1, cut)}")


@stage("docs_limit", "cut",
       P("of", "str", "cli", "cli: the CLI's --limit (its results); plugin: the plugin's "
         "limit L (its items)", choices=("cli", "plugin")), widens=True)
def docs_limit(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep the first `limit` rows: the CLI's results, or the plugin's items."""
    req = _request(ctx)
    n = ctx.wide(int(req["limit"] if p["of"] == "cli" else req["plugin_limit"]))
    if req["error"]:
        return Outcome([], note=f"no result: {req['error']}")
    return Outcome(rows[:n], CutDrops(rows, n, "past_limit", "limit"), note=f"first {n}")


@stage("openclaw_docs_scope", "filter")
def docs_scope(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The plugin's post-filter (matchesScope) of the CLI's results, for a scoped query.

    Kept with pushdown too; lower-cased repo and path. Counters as the plugin reports them
    (rawCandidates, scopedCandidates, filteredByScope)."""
    req = _request(ctx)
    keep, dropped = [], []
    for s in rows:
        c = s.row.columns
        if not req["scoped"] or matches_scope(c.get("repo"), c.get("path"), req["scope"],
                                              req["strategy"], req["scope_map"]):
            keep.append(s)
        else:
            dropped.append(Drop(s.id, "out_of_scope", (("repo", c.get("repo")),
                                                       ("path", c.get("path")),
                                                       ("rule", req["strategy"]))))
    facts = {"rawCandidates": len(rows), "scopedCandidates": len(keep),
             "filteredByScope": len(rows) - len(keep) if req["scoped"] else 0}
    note = (f"{req['strategy']} on {req['scope']!r}" if req["scoped"] else
            "unscoped: nothing filtered")
    return Outcome(keep, tuple(dropped), note=note, facts=facts)


@stage("openclaw_docs_snippets", "transform",
       P("max_snippet_chars", "int", 280, "maxSnippetChars: each item's text is cut at "
         "max(80, min(1200, this)) UTF-16 units", 0, 100_000))
def docs_snippets(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The plugin's items: score = rrf_score, text clipped (clipSnippet), order unchanged."""
    snippets = [clip_snippet(s.row.text, p["max_snippet_chars"]) for s in rows]
    facts = {"snippets": snippets, "error": ctx.request.get("error")}
    return Outcome(rows, note=f"snippets of at most {max(80, min(1200, p['max_snippet_chars']))}"
                   " UTF-16 units", facts=facts)


# the legs register on import; their helpers are named here too (tests reach them)
from inspector.core.engine.flow.stages.openclaw_docs.legs import (  # noqa: E402, F401
    _py_sum,
    cjk_terms,
    rank_cosine,
)
