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

import math
import re
import sqlite3
from typing import Any

import numpy as np

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Row, Scored
from inspector.core.errors import InspectorError

STRATEGIES = ("repo_prefix", "path_prefix", "map", "none")
CHUNK_COLUMNS = ("id", "doc_id", "chunk_id", "repo", "path", "doc_kind", "heading_path",
                 "title", "text")

# --------------------------------------------------------------- JavaScript string semantics

# String.prototype.trim and /\s/: WhiteSpace and LineTerminator (Python's isspace differs:
# it strips U+001C..U+001F and U+0085, and keeps U+FEFF)
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_TRIM = re.compile(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+\\Z")
_JS_SPACE_RUN = re.compile(f"[{_JS_SPACE}]+")
_SCOPE_PREFIX = re.compile(r"^\[?(iso|scope):", re.IGNORECASE | re.ASCII)
_LEADING_SLASHES = re.compile(r"^/+")
_TRAILING_BRACKETS = re.compile(r"\]+\Z")
# what a plain object answers for keys it does not own: [...value] then throws a TypeError
# (scopes are lower-cased first, so only constructor and __proto__ can be asked for)
_OBJECT_PROTO = frozenset((
    "constructor", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
    "__lookupSetter__", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
    "toLocaleString", "toString", "valueOf"))
_INDEX_KEY = re.compile(r"0|[1-9][0-9]*")


def js_trim(text: str) -> str:
    return _JS_TRIM.sub("", text)


def norm_scope(scope: str | None) -> str:
    """normalizeScopeToken: trim, lower-case, drop one leading `[iso:`/`iso:`/`[scope:`/
    `scope:`, leading '/'s and trailing ']'s, trim."""
    s = js_trim(str(scope or "")).lower()
    s = _SCOPE_PREFIX.sub("", s, count=1)
    s = _TRAILING_BRACKETS.sub("", _LEADING_SLASHES.sub("", s))
    return js_trim(s)


def scope_key(scope: str) -> str:
    """shortScopeKey: the normalised scope up to its first '/' or ':' (the whole if that is
    empty)."""
    n = norm_scope(scope)
    if not n:
        return ""
    return re.split(r"[/:]", n)[0] or n


def _js_entries(obj: dict[str, Any]) -> list[tuple[str, Any]]:
    """Object.entries order: array-index keys ascending first, then the rest as inserted."""
    index = sorted((k for k in obj if _INDEX_KEY.fullmatch(k) and int(k) < 2**32 - 1), key=int)
    return [(k, obj[k]) for k in index] + [(k, v) for k, v in obj.items() if k not in index]


def normalize_scope_map(raw: dict[str, Any]) -> dict[str, list[str]]:
    """The plugin's config resolution of scopeMap: keys normalised (a later key wins a
    collision), string entries only, trimmed, leading '/' dropped, empty ones dropped, at
    most 16; keys left with no entry dropped."""
    out: dict[str, list[str]] = {}
    for k, v in _js_entries({str(k): v for k, v in raw.items()}):
        key = norm_scope(k)
        if not key or not isinstance(v, list):
            continue
        entries = [_LEADING_SLASHES.sub("", js_trim(x)) for x in v if isinstance(x, str)]
        entries = [e for e in entries if e][:16]
        if entries:
            out[key] = entries
    return out


def _map_entries(scope_map: dict[str, list[str]], key: str) -> list[Any]:
    """`scopeMap?.[key] || []` spread into an array, as JavaScript does it."""
    if key in scope_map:
        return list(scope_map[key] or [])
    if key in _OBJECT_PROTO:
        raise InspectorError(f"The plugin throws here: scopeMap[{key!r}] is Object.prototype's "
                             f"{key}, which is not iterable (TypeError); it returns no result.")
    return []


def _js_string(v: Any) -> str:
    """String(v || "") for the JSON values a scope map can hold."""
    if not v:
        return ""
    if isinstance(v, bool):
        return "true"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def pushdown_repos(scope: str, strategy: str, scope_map: dict[str, list[str]]) -> list[str]:
    """computeScopePushdownRepos: repo_prefix -> [key]; map -> the entries of the scope and
    of its key without '/', leading '/' stripped, de-duplicated case-insensitively with the
    first spelling kept; other strategies -> []."""
    n = norm_scope(scope)
    if not n or n == "global":
        return []
    if strategy == "repo_prefix":
        key = scope_key(n)
        return [key] if key else []
    if strategy != "map":
        return []
    seen: set[str] = set()
    out: list[str] = []
    for item in _map_entries(scope_map, n) + _map_entries(scope_map, scope_key(n)):
        cand = _LEADING_SLASHES.sub("", js_trim(_js_string(item)))
        if not cand or "/" in cand or cand.lower() in seen:
            continue
        seen.add(cand.lower())
        out.append(cand)
    return out


def matches_scope(repo: str | None, path: str | None, scope: str, strategy: str,
                  scope_map: dict[str, list[str]]) -> bool:
    """matchesScope, on lower-cased repo and path."""
    n = norm_scope(scope)
    if not n or n == "global":
        return True
    r, d = (repo or "").lower(), (path or "").lower()
    if strategy == "repo_prefix":
        key = scope_key(n)
        return not key or r == key or d.startswith(key + "/")
    if strategy == "path_prefix":
        pre = n.replace(":", "/")
        return d.startswith(pre + "/") or d == pre or f"/{pre}/" in d
    if strategy == "map":
        prefixes = [_LEADING_SLASHES.sub("", js_trim(_js_string(x)).lower())
                    for x in _map_entries(scope_map, n) + _map_entries(scope_map, scope_key(n))]
        prefixes = [x for x in prefixes if x]
        return bool(prefixes) and any(r == x or d.startswith(x + "/") or d == x
                                      for x in prefixes)
    return True  # none


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def clip_snippet(text: str | None, max_chars: int) -> str:
    """clipSnippet: whitespace runs to one space, trimmed, cut at max(80, min(1200, max))
    UTF-16 units with an ellipsis."""
    compact = js_trim(_JS_SPACE_RUN.sub(" ", str(text or "")))
    if not compact:
        return ""
    cap = max(80, min(1200, math.floor(max_chars)))
    units = _utf16(compact)
    if len(units) // 2 <= cap:
        return compact
    return units[:2 * cap].decode("utf-16-le", "surrogatepass") + "…"


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def _argparse_takes_as_option(arg: str) -> bool:
    """Whether the CLI's argparse reads this value as an (unknown) option, not as a value."""
    return (len(arg) > 1 and arg.startswith("-") and " " not in arg
            and not _NEGATIVE_NUMBER.match(arg))


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
         "max(limit sent, this)", 1, 100, live=False),
       P("search_vec_k", "int", 20, "searchVecK: the vector leg's depth, max(limit sent, "
         "this)", 1, 100, live=False),
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
         live=False),
       P("overfetch_factor", "int", 5, "the over-fetch's factor of L", 1, 1000, live=False),
       P("overfetch_cap", "int", 50, "the over-fetch's cap", 1, 100_000, live=False),
       P("pushdown", "bool", True, "send the scope's repos as --scope-repos (8ed98cd; "
         "repo_prefix and map only)", live=False))
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
       P("fts_k", "int", 30, "--fts-k (0: 2 x limit)", 0, 1_000_000, live=False),
       P("vec_k", "int", 30, "--vec-k (0: 2 x limit)", 0, 1_000_000, live=False),
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


def _request(ctx: Context) -> dict[str, Any]:
    if not ctx.request:
        raise InspectorError("This stage reads the docs search's request: put an "
                             "openclaw_docs_request or openclaw_docs_cli_args stage first.")
    return ctx.request


# ------------------------------------------------------------------------------------- legs

def _source(ctx: Context) -> Any:
    rows = getattr(ctx.store, "source_rows", None)
    if rows is None or getattr(ctx.store, "connection", None) is None:
        raise InspectorError("The openclaw-mem pipelines read the docs engine's own SQLite file "
                             "(docs_chunks, docs_chunks_fts, docs_embeddings); this store is "
                             "not one.")
    return rows


def _row(rec: tuple[Any, ...]) -> Row:
    cols = dict(zip(CHUNK_COLUMNS, rec, strict=False))
    cid = int(cols["id"])
    return Row(id=str(cid), text=str(cols.get("text") or ""), vector=None,
               scope=cols.get("repo"), importance=0.0, timestamp=0.0, metadata={},
               columns=cols, rowid=cid)


def _repo_sql(repos: tuple[str, ...]) -> str:
    return f" AND c.repo IN ({','.join(['?'] * len(repos))})" if repos else ""


_FTS_SQL = """
            SELECT c.id, c.doc_id, c.chunk_id, c.repo, c.path, c.doc_kind, c.heading_path, c.title, c.text,
                   bm25(docs_chunks_fts) AS score
            FROM docs_chunks_fts
            JOIN docs_chunks c ON c.id = docs_chunks_fts.rowid
            WHERE docs_chunks_fts MATCH ?{repo_sql}
            ORDER BY score ASC, c.id ASC
            LIMIT ?
            """  # noqa: E501 - the engine's statement as it sends it
_CJK = re.compile(r"[\u3400-\u9fff]+")


def cjk_terms(query: str, max_terms: int = 16) -> list[str]:
    """CJK runs of two or more characters, each followed by its bigrams when longer than
    two; de-duplicated in order; at most 16."""
    terms: list[str] = []
    for run in _CJK.findall(query):
        if len(run) < 2:
            continue
        terms.append(run)
        if len(run) > 2:
            terms += [run[i:i + 2] for i in range(len(run) - 1)]
    return list(dict.fromkeys(terms))[:max_terms]


@stage("sqlite_fts5", "fetch",
       P("phrase_retry", "bool", True, "on an FTS5 error, retry once with the text as one "
         "phrase when it holds '-' (and does not start with '\"'); otherwise the leg is "
         "empty", live=False),
       P("cjk_fallback", "bool", True, "no FTS5 row and CJK in the text: rank by LIKE over "
         "the CJK runs and their bigrams, score -(terms matched) (CLI 4b9e0c1 and later)",
         live=False))
def fts5_leg(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The docs engine's FTS5 leg: the raw text as the MATCH expression, bm25, ties by id.

    FTS5 syntax is the user's: implicit AND, OR, NOT, prefix *, "phrases", column filters.
    Pushed-down repos become `c.repo IN (...)`, compared exactly."""
    req = _request(ctx)
    if req["error"]:
        return Outcome([], note=f"no search: {req['error']}")
    query, k, repos = req["query"], int(req["fts_k"]), tuple(req["scope_repos"])
    sql = _FTS_SQL.format(repo_sql=_repo_sql(repos))
    run = _source(ctx)
    facts: dict[str, Any] = {"match": query, "k": k, "scope_repos": list(repos),
                             "syntax_error": None, "retried_as_phrase": False,
                             "fallback": None}
    try:
        got = run(sql, (query, *repos, k))
    except sqlite3.OperationalError as exc:
        facts["syntax_error"], facts["match"], got = str(exc), None, []
        if p["phrase_retry"] and "-" in query and not query.strip().startswith('"'):
            retry = f'"{query}"'
            facts["retried_as_phrase"] = True
            try:
                got = run(sql, (retry, *repos, k))
                facts["match"] = retry
            except sqlite3.OperationalError as exc2:
                facts["retry_error"] = str(exc2)
    measure = "bm25"
    if not got and p["cjk_fallback"] and _CJK.search(query):
        terms = cjk_terms(query)
        if terms:
            likes = [f"%{t}%" for t in terms]
            score = " + ".join(["CASE WHEN c.text LIKE ? THEN 1 ELSE 0 END"] * len(likes))
            where = " OR ".join(["c.text LIKE ?"] * len(likes))
            cols = ", ".join(f"c.{c}" for c in CHUNK_COLUMNS)
            like_sql = (f"SELECT {cols}, -1.0 * ({score}) AS score FROM docs_chunks c "
                        f"WHERE ({where}){_repo_sql(repos)} ORDER BY score ASC, c.id ASC "
                        f"LIMIT ?")
            got = run(like_sql, (*likes, *likes, *repos, k))
            facts["fallback"], facts["cjk_terms"] = "cjk_like", terms
            measure = "like"
    out = [Scored(_row(r[:-1]), float(r[-1]), ((measure, float(r[-1])),)) for r in got]
    note = f"FTS5 MATCH {facts['match']!r}, k {k}" if facts["fallback"] is None else \
        f"no FTS5 row: LIKE over {len(facts['cjk_terms'])} CJK term(s), k {k}"
    if facts["match"] is None and facts["fallback"] is None:
        note = f"FTS5 error ({facts['syntax_error']}): empty leg"
    return Outcome(out, note=note, facts=facts)


def _py_sum(prods: np.ndarray, compensated: bool) -> np.ndarray:
    """Python's sum() of each row's floats, left to right: CPython 3.12 and later add them
    with Neumaier's compensation, 3.11 and older plainly."""
    total = np.zeros(prods.shape[0])
    comp = np.zeros(prods.shape[0])
    for j in range(prods.shape[1]):
        x = prods[:, j]
        t = total + x
        if compensated:
            comp += np.where(np.abs(total) >= np.abs(x), (total - t) + x, (x - t) + total)
        total = t
    if compensated:
        fix = (comp != 0) & np.isfinite(comp)
        total = np.where(fix, total + comp, total)
    return total


def rank_cosine(q: np.ndarray, items: list[tuple[Any, ...]], limit: int,
                compensated: bool) -> list[tuple[int, float]]:
    """rank_cosine: dot(q, v) / (|q| * stored norm) in float64 with Python's own sums; rows
    with no blob, a zero or non-finite norm, a malformed blob, another dimension or a
    non-finite score skipped; score descending, equal scores in input order."""
    qn = float(np.sqrt(_py_sum((q * q)[None, :], compensated)[0]))
    if qn == 0.0 or not math.isfinite(qn) or limit <= 0:
        return []
    ids: list[int] = []
    norms: list[float] = []
    vecs: list[np.ndarray] = []
    for cid, blob, norm in items:
        if not blob or not norm:
            continue
        norm = float(norm)
        if not math.isfinite(norm) or len(blob) % 4 or len(blob) // 4 != len(q):
            continue
        ids.append(int(cid))
        norms.append(norm)
        vecs.append(np.frombuffer(blob, "<f4").astype(np.float64))
    if not ids:
        return []
    dots = _py_sum(np.vstack(vecs) * q[None, :], compensated)
    with np.errstate(all="ignore"):
        scores = dots / (qn * np.asarray(norms))
    keep = np.flatnonzero(np.isfinite(scores))
    order = keep[np.lexsort((keep, -scores[keep]))][:limit]
    return [(ids[i], float(scores[i])) for i in order]


@stage("sqlite_cosine", "fetch",
       P("model", "str", "", "the embeddings model the CLI searches (its --model / "
         "OPENCLAW_MEM_EMBED_MODEL, default text-embedding-3-small); empty: the store's",
         live=False),
       P("summation", "str", "compensated", "how the engine's Python adds the dot products: "
         "compensated (sum() in CPython 3.12+) or plain (3.11 and older)", live=False,
         choices=("compensated", "plain")),
       P("require_vector", "bool", True, "no query vector: an error (true), or an empty leg "
         "as the CLI without an API key (false)", live=False))
def cosine_leg(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The docs engine's vector leg: brute-force cosine over docs_embeddings, top vec_k.

    Rows are scored in the order SQLite scans them (the model index: embedding insertion
    order), and equal cosines keep that order."""
    req = _request(ctx)
    if req["error"]:
        return Outcome([], note=f"no search: {req['error']}")
    if ctx.vector is None:
        if p["require_vector"]:
            raise InspectorError(ctx.settings.get("_vector_error") or "The docs engine's "
                                 "vector leg needs the query's embedding: give --vector.")
        return Outcome([], note="no query vector: empty, as the CLI without an API key",
                       facts={"vector_status": "missing_api_key"})
    model = p["model"] or getattr(ctx.store, "model", None) or ""
    k, repos = int(req["vec_k"]), tuple(req["scope_repos"])
    run = _source(ctx)
    q = np.asarray(ctx.vector, np.float64)
    if repos:
        items = run("SELECT e.chunk_rowid, e.vector, e.norm FROM docs_embeddings e JOIN "
                    "docs_chunks c ON c.id = e.chunk_rowid WHERE e.model = ? AND e.dim = ?"
                    + _repo_sql(repos), (model, len(q), *repos))
    else:
        items = run("SELECT chunk_rowid, vector, norm FROM docs_embeddings WHERE model = ? "
                    "AND dim = ?", (model, len(q)))
    ranked = rank_cosine(q, items, max(1, k), p["summation"] == "compensated")
    by_id: dict[int, tuple[Any, ...]] = {}
    if ranked:
        marks = ",".join(["?"] * len(ranked))
        for rec in run(f"SELECT {', '.join(CHUNK_COLUMNS)} FROM docs_chunks WHERE id IN "
                       f"({marks})", tuple(cid for cid, _ in ranked)):
            by_id[int(rec[0])] = rec
    out = [Scored(_row(by_id[cid]), s, (("cosine", s),)) for cid, s in ranked if cid in by_id]
    facts = {"model": model, "k": k, "scope_repos": list(repos), "scanned": len(items),
             "ranked_without_chunk": len(ranked) - len(out)}
    return Outcome(out, note=f"cosine over {len(items)} embedding(s) of {model}, top {k}",
                   facts=facts)


# ------------------------------------------------------------------------- fusion and cuts

@stage("rrf_fusion", "fusion",
       P("text_leg", "str", "fts_leg", "name of the full-text leg stage"),
       P("vector_leg", "str", "vec_leg", "name of the vector leg stage"),
       P("k", "int", 0, "the RRF constant (0: the request's --k)", 0, 1_000_000),
       P("cut", "int", 0, "rows kept (0: the CLI's max(limit, fts_k, vec_k))", 0, 1_000_000))
def rrf_fusion(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Reciprocal rank fusion as the engine's rank_rrf: float64, ties by chunk id.

    score = sum over [fts, vector] of 1 / (k + rank), rank 1-based; sorted by (-score, id);
    cut to the CLI's max(limit, fts_k, vec_k)."""
    req = ctx.request
    k = p["k"] or int(req.get("rrf_k", 60))
    cut = p["cut"] or int(req.get("pool", 20))
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
    dropped = tuple(Drop(s.id, "past_limit", (("rank", i + 1), ("limit", max(1, cut))))
                    for i, s in enumerate(out[max(1, cut):], start=max(1, cut)))
    return Outcome(kept, dropped, note=f"RRF k {k}, ties by chunk id, cut to {max(1, cut)}")


@stage("docs_limit", "cut",
       P("of", "str", "cli", "cli: the CLI's --limit (its results); plugin: the plugin's "
         "limit L (its items)", choices=("cli", "plugin")))
def docs_limit(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep the first `limit` rows: the CLI's results, or the plugin's items."""
    req = _request(ctx)
    n = int(req["limit"] if p["of"] == "cli" else req["plugin_limit"])
    if req["error"]:
        return Outcome([], note=f"no result: {req['error']}")
    return Outcome(rows[:n], tuple(Drop(s.id, "past_limit", (("rank", i + 1), ("limit", n)))
                                   for i, s in enumerate(rows[n:], start=n)),
                   note=f"first {n}")


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

