"""Fetch legs: LanceDB's vector search and its native full-text search, each to a depth the
system derives from the limit, with the scope as a prefilter (or a post-filter), the row-level
checks the system runs while it reads the results, and a stop once the leg holds enough rows."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core import heap
from inspector.core.engine import js
from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Row, Scored, Tie
from inspector.core.engine.flow.stages.lance_where import INDEX_KNOBS, knobs
from inspector.core.engine.flow.stages.meta import active_at
from inspector.core.errors import InspectorError
from inspector.core.stores.safety.bounds import TIE_FETCH_MAX

COLUMNS = ("id", "text", "vector", "category", "scope", "importance", "timestamp", "metadata")
LEGACY_SECONDS = 1e12  # timestamps below this are seconds (memory-lancedb-pro's store)

_DEPTH = (
    P("pool_size", "int", 20, "candidatePoolSize: the retriever asks for max(this, 2 * limit)",
      1, 10_000, live=False, effect="depth"),
    P("keep_max", "int", 20, "the store keeps at most this many rows a leg", 1, 10_000,
      live=False, effect="depth"),
    P("fetch_factor", "int", 20, "rows asked of LanceDB per kept row (20 with excludeInactive)",
      1, 1_000, live=False, effect="depth"),
    P("fetch_cap", "int", 200, "the most rows asked of LanceDB", 1, 100_000, live=False,
      effect="depth"),
    P("prefilter", "bool", True, "the scope goes into LanceDB's where() before the top-k cut "
      "(false: after it)", live=False, effect="prefilter"),
    P("exclude_inactive", "bool", True, "skip rows not yet valid or superseded", live=False),
)


def depths(ctx: Context, p: dict[str, Any]) -> tuple[int, int]:
    """(rows kept, rows asked of LanceDB): clamp(max(pool, 2 * limit), 1, keep_max), then
    min(kept * factor, cap)."""
    keep = max(1, min(p["keep_max"], max(p["pool_size"], 2 * ctx.limit)))
    want = min(keep * p["fetch_factor"], p["fetch_cap"])
    wide = ctx.wide(0)  # what-if: keep and ask for at least that many
    return (wide, max(want, wide)) if wide > keep else (keep, want)


def scope_predicate(scopes: tuple[str, ...], column: str = "scope") -> str:
    """`(scope = 'a' OR scope = 'b')`, quotes doubled, as the plugin writes it (NULL never
    matches)."""
    return "(" + " OR ".join(f"{column} = '{s.replace(chr(39), chr(39) * 2)}'"
                             for s in scopes) + ")"


def read_row(rec: dict[str, Any]) -> Row:
    """A stored row as memory-lancedb-pro's store maps it: importance through clampImportance
    (NaN/inf 0.7, NULL 0), timestamp in ms (seconds x 1000; missing 0), scope NULL = global."""
    imp = js.number(rec.get("importance"))
    imp = min(1.0, max(0.0, imp)) if math.isfinite(imp) else 0.7
    ts = js.number(rec.get("timestamp"))
    ts = 0.0 if not math.isfinite(ts) or ts <= 0 else float(math.floor(ts))
    ts = ts * 1000 if 0 < ts < LEGACY_SECONDS else ts
    raw = rec.get("metadata") or "{}"
    try:
        meta = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        meta = {}
    vec = rec.get("vector")
    arr = None
    if vec is not None:
        arr = np.asarray(vec, dtype=np.float64)
        arr = arr if arr.size and np.all(np.isfinite(arr)) else None
    cols = {k: v for k, v in rec.items() if k not in ("vector",) and not k.startswith("_")}
    return Row(id=str(rec.get("id")), text=rec.get("text") or "", vector=arr,
               scope=rec.get("scope"), importance=imp, timestamp=ts,
               metadata=meta if isinstance(meta, dict) else {}, columns=cols,
               rowid=int(rec.get("_rowid", -1)))


def _columns(ctx: Context) -> list[str]:
    have = set(ctx.store.table.schema.names)
    missing = [c for c in ("id", "text", "vector") if c not in have]
    if missing:
        raise InspectorError(f"This pipeline reads the columns {', '.join(COLUMNS)}; the table "
                             f"lacks {', '.join(missing)}.")
    return [c for c in COLUMNS if c in have]


def _canonical(tbl: pa.Table, col: str, ascending: bool) -> pa.Table:
    """Equal values in row-id order (LanceDB's own for flat vector search)."""
    if not tbl.num_rows:
        return tbl
    vals = tbl.column(col).to_numpy(zero_copy_only=False).astype(np.float64)
    rowid = tbl.column("_rowid").to_numpy(zero_copy_only=False)
    return tbl.take(pa.array(np.lexsort((rowid, vals if ascending else -vals))))


def _search(ctx: Context, build: Any, want: int, col: str, ascending: bool, name: str,
            measure: str, complete_ties: bool) -> pa.Table:
    """`want` rows in canonical order; where rows tied on `col` straddle the cut and LanceDB's
    order among them is arbitrary, fetch past the tie, keep the lowest row ids, and record it."""
    got = _canonical(build(want + 1).to_arrow(), col, ascending)
    if not complete_ties or got.num_rows <= want:
        return got.slice(0, want)
    vals = got.column(col).to_numpy(zero_copy_only=False)
    cut = vals[want - 1]
    if vals[want] != cut:
        return got.slice(0, want)
    deeper = want + 1
    while vals[-1] == cut and got.num_rows >= deeper and deeper < TIE_FETCH_MAX:
        deeper = min(deeper * 2, TIE_FETCH_MAX)
        got = _canonical(build(deeper).to_arrow(), col, ascending)
        vals = got.column(col).to_numpy(zero_copy_only=False)
    tied = np.flatnonzero(vals == cut)
    kept = got.slice(0, want)
    ids = [str(i) for i, v in zip(kept.column("id").to_pylist(),
                                   kept.column(col).to_pylist(), strict=True) if v == cut]
    members = tuple(str(i) for i in got.column("id").take(pa.array(tied)).to_pylist())
    ctx.ties.append(Tie(stage=name, ids=tuple(ids), value=float(cut), measure=measure, cut=want,
                        beyond=int(len(tied) - len(ids)), arbitrary=True, members=members))
    return kept


def _keep(ctx: Context, p: dict[str, Any], tbl: pa.Table, score_of: Any, keep: int,
          min_score: float | None, source: str) -> Outcome:
    """Walk LanceDB's rows as the store does: score, threshold, scope double-check, inactive
    rows skipped, stop at `keep`."""
    out: list[Scored] = []
    dropped: list[Drop] = []
    for rec in tbl.to_pylist():
        if len(out) >= keep:
            break
        row = read_row(rec)
        score = score_of(rec, row)
        if score is None:
            dropped.append(Drop(row.id, "no_vector"))
            continue
        if min_score is not None and score < min_score:
            dropped.append(Drop(row.id, "below_min_score", (("score", score),
                                                            ("min", min_score))))
            continue
        if ctx.scopes and (row.scope if row.scope is not None else "global") not in ctx.scopes:
            dropped.append(Drop(row.id, "out_of_scope", (("scope", row.scope),)))
            continue
        if p["exclude_inactive"] and not active_at(row, ctx.now_ms):
            dropped.append(Drop(row.id, "inactive"))
            continue
        out.append(Scored(row, score, ((source, score),)))
    return Outcome(out, tuple(dropped))


def _where(q: Any, ctx: Context, prefilter: bool) -> Any:
    if ctx.scopes:
        return q.where(scope_predicate(ctx.scopes), prefilter=prefilter)
    return q


@stage("lancedb_vector", "fetch", *_DEPTH,
       P("distance", "str", "cosine", "LanceDB distance type", live=False,
         choices=("cosine", "l2", "dot")),
       P("min_score", "float", 0.1, "rows scoring 1 / (1 + distance) below this are skipped",
         0, 1, live=False, effect="threshold", step=0.01),
       *INDEX_KNOBS, widens=True, vector=True)
def vector_leg(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """LanceDB vector search; score 1 / (1 + _distance)."""
    if ctx.scopes == ():
        return Outcome([], note="an empty scope list denies everything: no search is made")
    if ctx.vector is None:
        raise InspectorError(ctx.settings.get("_vector_error") or "This pipeline's vector leg "
                             "needs a query vector: give --vector, --vector-of ID, or --text "
                             "with an embedder.")
    keep, want = depths(ctx, p)
    cols = _columns(ctx)
    qv = ctx.vector.astype(np.float32)

    def build(k: int) -> Any:
        q = (ctx.store.table.search(qv, vector_column_name="vector").distance_type(p["distance"])
             .select([*cols, "_distance"]).with_row_id(True).limit(k))
        q = knobs(q, ctx, p)
        return _where(q, ctx, p["prefilter"])

    tbl = _search(ctx, build, want, "_distance", True, "vector_leg", "distance", False)
    dim = len(ctx.vector)
    heap.trim_after(int(ctx.store.rows) * dim)  # a large flat search's freed memory goes back

    def score(rec: dict[str, Any], row: Row) -> float | None:
        if row.vector is None or len(row.vector) != dim:
            return None
        return 1.0 / (1.0 + float(rec["_distance"]))

    out = _keep(ctx, p, tbl, score, keep, p["min_score"], "vector")
    return Outcome(out.rows, out.dropped, f"asked LanceDB for {want} rows, kept up to {keep}")


@stage("lancedb_fts", "fetch", *_DEPTH,
       P("score", "str", "sigmoid5", "BM25 to [0, 1]: sigmoid5 = raw > 0 ? 1/(1+exp(-raw/5)) "
         ": 0.5; saturate = raw/(1+raw)", live=False, choices=("sigmoid5", "saturate")),
       P("fallback", "str", "lexical", "when the index is missing or returns no row: lexical "
         "= scan the scoped rows for the whole query as a substring; none", live=False,
         choices=("lexical", "none")),
       P("query", "str", "bm25", "which text is searched: bm25 (after query expansion) or "
         "original", live=False, choices=("bm25", "original")), widens=True)
def fts_leg(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """LanceDB native full-text (BM25) search, scores mapped to [0, 1]."""
    if ctx.scopes == ():
        return Outcome([], note="an empty scope list denies everything: no search is made")
    text = (ctx.bm25_text if p["query"] == "bm25" and ctx.bm25_text is not None else ctx.text)
    if not text:
        raise InspectorError("This pipeline's full-text leg needs query text: give --text.")
    keep, want = depths(ctx, p)
    cols = _columns(ctx)
    if ctx.store.fts_index_column() is None:
        return _fallback(ctx, p, text, keep, "the table has no full-text index")

    def build(k: int) -> Any:
        q = (ctx.store.table.search(text, query_type="fts").select([*cols, "_score"])
             .with_row_id(True).limit(k))
        return _where(q, ctx, p["prefilter"])

    tbl = _search(ctx, build, want, "_score", False, "bm25_leg", "bm25", True)

    def score(rec: dict[str, Any], row: Row) -> float:
        raw = float(rec["_score"]) if rec.get("_score") is not None else 0.0
        if p["score"] == "saturate":
            return raw / (1.0 + raw)
        return 1.0 / (1.0 + math.exp(-raw / 5)) if raw > 0 else 0.5

    out = _keep(ctx, p, tbl, score, keep, None, "bm25")
    _inner_ties(ctx, tbl, out.rows, want)
    if not out.rows:
        return _fallback(ctx, p, text, keep, "the index returned no row")
    return Outcome(out.rows, out.dropped, f"asked LanceDB for {want} rows, kept up to {keep}")


NEAR_ULPS = 4  # BM25 scores this many float32 units apart are ordered differently by clients


def _inner_ties(ctx: Context, tbl: pa.Table, kept: list[Scored], want: int) -> None:
    """Groups of kept rows whose raw BM25 scores are equal (or a few float32 units apart)
    but not already reported at the cut: their order is LanceDB's arbitrary choice."""
    if not kept:
        return
    raw = dict(zip(tbl.column("id").to_pylist(),
                   tbl.column("_score").to_numpy(zero_copy_only=False).astype(np.float32),
                   strict=True))
    at_cut = {i for t in ctx.ties if t.stage == "bm25_leg" and t.at_cut for i in t.ids}
    ids = [s.id for s in kept]
    group: list[str] = [ids[0]]

    def close(a: np.float32, b: np.float32) -> bool:
        return bool(abs(float(a) - float(b)) <= NEAR_ULPS * float(np.spacing(max(a, b))))

    def flush() -> None:
        if len(group) > 1 and not set(group) <= at_cut:
            vals = {float(raw[i]) for i in group}
            ctx.ties.append(Tie(stage="bm25_leg", ids=tuple(group), value=float(raw[group[0]]),
                                measure="bm25", cut=want, beyond=0, arbitrary=True,
                                at_cut=False, near=len(vals) > 1, members=tuple(group)))

    for prev, cur in zip(ids, ids[1:], strict=False):
        if close(raw[prev], raw[cur]):
            group.append(cur)
        else:
            flush()
            group = [cur]
    flush()


_FIELDS = (("text", 1.0), ("l0_abstract", 0.98), ("l1_overview", 0.92), ("l2_content", 0.96))


def _fallback(ctx: Context, p: dict[str, Any], text: str, keep: int, why: str) -> Outcome:
    """The store's lexical fallback: every scoped row whose text (or abstract, overview,
    content) holds the whole query scores min(0.95, 0.72 + 0.02 * len) * field weight."""
    if p["fallback"] == "none":
        return Outcome([], note=why + "; no fallback")
    needle = text.strip().lower()
    if not needle:
        return Outcome([], note=why)
    q = ctx.store.table.search().select(_columns(ctx)).with_row_id(True)
    q = _where(q, ctx, True)
    base = min(0.95, 0.72 + js.length(needle) * 0.02)
    hits: list[Scored] = []
    for rec in q.limit(ctx.store.rows or 1).to_arrow().to_pylist():
        row = read_row(rec)
        if ctx.scopes and (row.scope if row.scope is not None else "global") not in ctx.scopes:
            continue
        if p["exclude_inactive"] and not active_at(row, ctx.now_ms):
            continue
        m = row.metadata
        texts = {"text": row.text, "l0_abstract": _str(m.get("l0_abstract"), row.text),
                 "l2_content": _str(m.get("l2_content"), row.text)}
        texts["l1_overview"] = _str(m.get("l1_overview"), "- " + texts["l0_abstract"])
        score = max([base * w for f, w in _FIELDS if needle in texts[f].strip().lower()],
                    default=0.0)
        if score > 0:
            hits.append(Scored(row, score, (("bm25", score),)))
    hits.sort(key=lambda s: (-s.score, -s.row.timestamp))
    return Outcome(hits[:keep], note=why + "; lexical fallback over the scoped rows")


def _str(v: Any, fallback: str) -> str:
    return v.strip() if isinstance(v, str) and v.strip() else fallback
