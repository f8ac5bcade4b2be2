"""openclaw-mem CLI's two legs on the SQLite file: FTS5 with the raw text as its MATCH
expression (one phrase retry, the CJK LIKE fallback) and a brute-force cosine over
`docs_embeddings` in its scan order."""

from __future__ import annotations

import math
import re
import sqlite3
from typing import Any

import numpy as np

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Outcome, Row, Scored
from inspector.core.engine.flow.stages.openclaw_docs.rules import (
    CHUNK_COLUMNS,
    _request,
)
from inspector.core.errors import InspectorError


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
         live=False), widens=True)
def fts5_leg(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The docs engine's FTS5 leg: the raw text as the MATCH expression, bm25, ties by id.

    FTS5 syntax is the user's: implicit AND, OR, NOT, prefix *, "phrases", column filters.
    Pushed-down repos become `c.repo IN (...)`, compared exactly."""
    req = _request(ctx)
    if req["error"]:
        return Outcome([], note=f"no search: {req['error']}")
    query, k, repos = req["query"], ctx.wide(int(req["fts_k"])), tuple(req["scope_repos"])
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
         "as the CLI without an API key (false)", live=False), widens=True)
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
    k, repos = ctx.wide(int(req["vec_k"])), tuple(req["scope_repos"])
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
