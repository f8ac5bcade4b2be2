"""LanceDB's own vector, full-text and hybrid searches, run exactly as a system asks them: at
the system's own k, rows in the order LanceDB returns them.

LanceDB returns equal BM25 scores in an order that changes with the limit asked (k 10 puts
one row first, k 20 another), so a full-text leg fetched deeper than the system asks cannot
be cut back to the system's order: this stage asks for exactly the system's k (a what-if
deepens it, and says so). Hybrid is LanceDB's default RRFReranker over both legs at k, as
LanceDB runs it: the vector rows first, then the full-text rows it lacks, each scored
sum(1 / (K + rank)) in float32, a stable descending sort, the first k.

Columns are read through paths (`payload.content`: a struct field or a key of JSON text), so
stores whose text sits inside a payload (Agno, Cognee) read like any other.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Row, Scored, Tie
from inspector.core.engine.flow.stages.lance_where import (
    INDEX_KNOBS,
    epoch_ms,
    knobs,
    meta_and_vector,
    score_of,
    sql_text,
    value_at,
)
from inspector.core.errors import InspectorError
from inspector.core.stores.safety.filters import checked_filter, column_ref, narrowed
from inspector.core.stores.store import run_search, search_builder

QUERY_TYPES = ("vector", "fts", "hybrid")
# what the system hands its caller: a distance map (lance_where.score_of), the raw LanceDB
# measure (`distance`, `bm25`, `relevance`: the hybrid's RRF score), LlamaIndex's
# linspace(1, 0, n) over the returned rows, or nothing (`none`: the rank's 1 / rank is shown)
SCORES = ("distance", "inv1p", "exp_neg_f32", "l2_relevance", "cosine_relevance", "bm25",
          "relevance", "linspace", "none")
# how --scope becomes SQL: equal (path = 'u'), agno_user (path = 'u' OR path IS NULL),
# set_any / set_all (array_has_any / array_has_all(path, ['a', 'b']), Cognee's node_name)
SCOPE_RULES = ("none", "equal", "agno_user", "set_any", "set_all")

PARAMS = (
    P("query_type", "str", "vector", "LanceDB's search: vector, fts (BM25) or hybrid (RRF of "
      "both)", live=False, choices=QUERY_TYPES),
    P("id_column", "str", "id", "the id column (or COLUMN.KEY inside a payload)", live=False),
    P("text_column", "str", "text", "where the text is read: COLUMN or COLUMN.KEY (a struct "
      "field or a key of JSON text)", live=False),
    P("fts_column", "str", "", "the column LanceDB's full-text index covers (empty: the "
      "text path's column)", live=False),
    P("vector_column", "str", "vector", "the vector column", live=False),
    P("metadata_path", "str", "", "a struct or JSON-text column (or key) read as the row's "
      "metadata", live=False),
    P("time_path", "str", "", "where a creation time is read (empty: none)", live=False),
    P("scope_path", "str", "", "the column --scope is compared with", live=False),
    P("scope_rule", "str", "none", "how --scope becomes SQL: equal, agno_user (= 'u' OR IS "
      "NULL), set_any / set_all (array_has_any / array_has_all), none", live=False,
      choices=SCOPE_RULES),
    P("prefilter", "bool", True, "the scope and `where` go into LanceDB's where() before the "
      "top-k cut (false: after it)", live=False, effect="prefilter"),
    P("distance", "str", "l2", "the vector leg's distance type (l2 is squared L2)",
      live=False, choices=("l2", "cosine", "dot")),
    P("score", "str", "distance", "what the system returns as the score", live=False,
      choices=SCORES),
    P("depth_factor", "float", 1.0, "LanceDB is asked for limit * factor + extra rows", 0,
      1e6, live=False, effect="depth", step=0.5),
    P("depth_extra", "int", 0, "rows asked on top of limit * factor", 0, 1_000_000,
      live=False, effect="depth"),
    P("all_rows", "bool", False, "ask for every row (Cognee's limit=None)", live=False,
      effect="depth"),
    P("rrf_k", "int", 60, "hybrid: LanceDB's RRFReranker K", 1, 1_000_000, live=False),
    *INDEX_KNOBS,
)


def depth(ctx: Context, p: dict[str, Any]) -> int:
    """The k the system asks LanceDB for (every row, or limit * factor + extra), or deeper
    where a what-if widens this stage."""
    if p["all_rows"]:
        return ctx.wide(max(1, int(ctx.store.rows or 1)))
    return ctx.wide(max(1, int(ctx.limit * p["depth_factor"] + 1e-9) + p["depth_extra"]))


def _list_sql(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(sql_text(v) for v in values) + "]"


def scope_where(p: dict[str, Any], scopes: tuple[str, ...] | None) -> str | None:
    """--scope as the SQL the system writes (None: no scope)."""
    if not scopes or p["scope_rule"] == "none":
        return None
    if not p["scope_path"]:
        raise InspectorError("This pipeline's rows have no scope column: name it with --set "
                             "fetch.scope_path=COLUMN.")
    path = column_ref(p["scope_path"])  # a name, never SQL of its own
    rule = p["scope_rule"]
    if rule == "equal":
        return " OR ".join(f"{path} = {sql_text(s)}" for s in scopes)
    if rule == "agno_user":
        if len(scopes) != 1:
            raise InspectorError("Agno's search takes one user_id: give --scope once.")
        return f"({path} = {sql_text(scopes[0])} OR {path} IS NULL)"
    fn = "array_has_any" if rule == "set_any" else "array_has_all"
    return f"{fn}({path}, {_list_sql(scopes)})"


def where_of(ctx: Context, p: dict[str, Any]) -> str | None:
    """The caller's `where` (checked: one expression that can only narrow) and the scope,
    each parenthesised, so neither can widen the other."""
    where = checked_filter(ctx.settings.get("where"), "The filter (setting where)")
    return narrowed(where, scope_where(p, ctx.scopes))


def need_columns(ctx: Context, p: dict[str, Any], fts: bool, vector: bool) -> None:
    """Every column this search reads is in the table, or one sentence naming the missing one
    and how to map it."""
    have = set(ctx.store.table.schema.names)
    wants = [("id", p["id_column"], "--column id=COLUMN"),
             ("text", p["text_column"], "--column text=COLUMN")]
    if vector:
        wants.append(("vector", p["vector_column"], "--column vector=COLUMN"))
    if fts:
        wants.append(("full-text", fts_column(p), "--set fetch.fts_column=COLUMN"))
    for role, path, how in wants:
        col = path.partition(".")[0]
        if col and col not in have:
            raise InspectorError(
                f"This preset reads the {role} from the column {col!r}, which table "
                f"{ctx.store.table_name!r} lacks (it has {', '.join(sorted(have))}): map it "
                f"with {how}.")


def fts_column(p: dict[str, Any]) -> str:
    return p["fts_column"] or p["text_column"].partition(".")[0]


def fts_source(ctx: Context, p: dict[str, Any]) -> Any:
    """The table to run LanceDB's full-text search on: the store's own when its index covers
    the column, else the inspector's private indexed copy (the store is never written)."""
    col = fts_column(p)
    for idx in _indices(ctx.store):
        if getattr(idx, "index_type", "") == "FTS" and col in idx.columns:
            return ctx.store.table
    from inspector.core.stores.fts import fts_table

    roles = getattr(ctx.store, "roles", None)
    if roles is None or roles.text != col:
        raise InspectorError(f"Table {ctx.store.table_name!r} has no full-text index on "
                             f"{col!r}; the system creates one on its first keyword search. "
                             f"Open the store with --column text={col} so the inspector "
                             f"indexes a private copy of it.")
    ctx.warnings.append(f"the table has no full-text index on {col}: the system would create "
                        f"one (LanceDB's defaults) on its first keyword search; the "
                        f"inspector searched its own private copy, indexed the same way")
    return fts_table(ctx.store)[0]


def _indices(store: Any) -> list[Any]:
    try:
        return list(store.__dict__.get("_indices") or store.table.list_indices())
    except Exception:  # noqa: BLE001 - an unreadable index list: no usable index
        return []


def _run(q: Any, where: str | None, prefilter: bool) -> pa.Table:
    if where:
        q = q.where(where, prefilter=prefilter)
    try:
        return run_search(q)  # q.to_arrow(), in one trip to LanceDB's loop
    except ValueError as exc:
        if not where:
            raise
        raise InspectorError(f"LanceDB cannot run the filter {where!r} on this table: "
                             f"{str(exc).splitlines()[0]}.") from None


def vector_rows(ctx: Context, p: dict[str, Any], k: int, where: str | None) -> pa.Table:
    """LanceDB's vector search at k (flat: equal distances by row id, its own order)."""
    if ctx.vector is None:
        raise InspectorError(ctx.settings.get("_vector_error") or "This search needs a query "
                             "vector: give --vector, --vector-of ID, or --text with an "
                             "embedder.")
    q = (search_builder(ctx.store.table, np.asarray(ctx.vector, np.float32), "vector",
                        vector_column=p["vector_column"])
         .distance_type(p["distance"]).with_row_id(True).limit(k))
    tbl = _run(knobs(q, ctx, p), where, p["prefilter"])
    if tbl.num_rows:  # LanceDB's own order for a flat search; an index's order as given
        d = tbl.column("_distance").to_numpy(zero_copy_only=False).astype(np.float64)
        rowid = tbl.column("_rowid").to_numpy(zero_copy_only=False)
        tbl = tbl.take(pa.array(np.lexsort((rowid, d))))
    return tbl


def fts_rows(ctx: Context, p: dict[str, Any], k: int, where: str | None) -> pa.Table:
    """LanceDB's full-text search at exactly k, in the order LanceDB returns (never re-sorted:
    equal BM25 scores come back in an order that depends on k)."""
    if not ctx.text or not ctx.text.strip():
        raise InspectorError("This search needs query text: give --text.")
    src = fts_source(ctx, p)
    # the systems name no column: LanceDB searches every column its full-text index covers
    cols = None if src is ctx.store.table else fts_column(p)
    q = search_builder(src, ctx.text, "fts", fts_columns=cols).with_row_id(True).limit(k)
    return _run(q, where, p["prefilter"])


def rrf(vec: pa.Table, fts: pa.Table, k: int, rrf_k: int) -> list[tuple[str, int, float]]:
    """LanceDB's RRFReranker: (leg, position, score) of the first k fused rows; rows merged
    vector first, then the full-text rows the vector leg lacks; float32 scores, a stable
    descending sort."""
    score: dict[int, float] = defaultdict(float)
    for tbl in (vec, fts):
        for i, rid in enumerate(tbl.column("_rowid").to_pylist() if tbl.num_rows else [], 1):
            score[rid] += 1 / (i + rrf_k)
    merged: list[tuple[str, int, int]] = []
    seen: set[int] = set()
    for leg, tbl in (("vector", vec), ("fts", fts)):
        for i, rid in enumerate(tbl.column("_rowid").to_pylist() if tbl.num_rows else []):
            if rid not in seen:
                seen.add(rid)
                merged.append((leg, i, rid))
    vals = np.array([score[rid] for _, _, rid in merged], np.float32)
    order = np.argsort(-vals, kind="stable")[:k]
    return [(merged[j][0], merged[j][1], float(vals[j])) for j in order]


def read(rec: dict[str, Any], p: dict[str, Any]) -> Row:
    """One LanceDB row through the stage's paths, values as stored."""
    meta, arr = meta_and_vector(rec, p)
    text = value_at(rec, p["text_column"])
    scope = value_at(rec, p["scope_path"]) if p["scope_path"] else None
    cols = {k: v for k, v in rec.items() if k != p["vector_column"] and not k.startswith("_")}
    return Row(id=str(value_at(rec, p["id_column"])), text="" if text is None else str(text),
               vector=arr, scope=scope if isinstance(scope, str) or scope is None
               else json.dumps(scope), importance=float("nan"),
               timestamp=epoch_ms(value_at(rec, p["time_path"]), "epoch_ms")
               if p["time_path"] else 0.0,
               metadata=meta if isinstance(meta, dict) else {}, columns=cols,
               rowid=int(rec.get("_rowid", -1)))


def shown_score(p: dict[str, Any], raw: float, measure: str, i: int, n: int) -> float:
    """The score the system returns for the i-th of n rows (see SCORES)."""
    how = p["score"]
    if how == "linspace":
        return float(np.linspace(1, 0, n)[i]) if n > 1 else 1.0
    if how == "none":
        return 1.0 / (i + 1)
    if how in ("distance", "bm25", "relevance") or measure != "distance":
        return raw
    return score_of(raw, how)


def _bm25_ties(ctx: Context, ids: list[str], raw: list[float], k: int) -> None:
    """Groups of equal BM25 scores among the rows kept: LanceDB's own order at this k."""
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or raw[i] != raw[start]:
            if i - start > 1:
                group = tuple(ids[start:i])
                ctx.ties.append(Tie(stage=ctx.stage, ids=group, value=raw[start],
                                    measure="bm25", cut=k, beyond=0, arbitrary=True,
                                    at_cut=False, members=group,
                                    order=f"LanceDB's own order at k {k}: equal BM25 scores "
                                          f"come back in an order that changes with k; the "
                                          f"search ran at the system's k"))
            start = i


@stage("lancedb_search", "fetch", *PARAMS, widens=True, vector=True)
def lancedb_search(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """LanceDB's own vector, full-text or hybrid search at the system's k, rows in LanceDB's
    own order; the scope and `where` placed as the system places them."""
    if ctx.scopes == ():
        return Outcome([], note="an empty scope list denies everything: no search is made")
    qt = p["query_type"]
    need_columns(ctx, p, qt != "vector", qt != "fts")
    k = depth(ctx, p)
    where = where_of(ctx, p)
    legs: dict[str, pa.Table] = {}
    if qt != "fts":
        legs["vector"] = vector_rows(ctx, p, k, where)
    if qt != "vector":
        legs["fts"] = fts_rows(ctx, p, k, where)
    if qt == "hybrid":
        picked = rrf(legs["vector"], legs["fts"], k, p["rrf_k"])
    else:
        picked = [(qt, i, 0.0) for i in range(legs[qt].num_rows)]
    recs = {leg: tbl.to_pylist() for leg, tbl in legs.items()}
    ranks = {leg: {r["_rowid"]: i + 1 for i, r in enumerate(rs)} for leg, rs in recs.items()}
    out: list[Scored] = []
    dropped: list[Drop] = []
    dim = len(ctx.vector) if ctx.vector is not None else 0
    for i, (leg, pos, fused) in enumerate(picked):
        rec = recs[leg][pos]
        row = read(rec, p)
        if qt != "fts" and leg == "vector" and (row.vector is None or len(row.vector) != dim):
            dropped.append(Drop(row.id, "no_vector"))
            continue
        inputs: list[tuple[str, float]] = []
        for name, rank in ranks.items():
            r = rank.get(rec["_rowid"])
            if r is None:
                continue
            src = recs[name][r - 1]
            if name == "vector":
                inputs += [("vec_rank", float(r)), ("distance", float(src["_distance"]))]
            else:
                inputs += [("fts_rank", float(r)), ("bm25", float(src["_score"]))]
        raw = fused if qt == "hybrid" else float(rec["_distance"] if leg == "vector"
                                                 else rec["_score"])
        if qt == "hybrid":
            inputs.append(("fused", fused))
        measure = "distance" if qt == "vector" else "bm25" if qt == "fts" else "relevance"
        out.append(Scored(row, shown_score(p, raw, measure, i, len(picked)), tuple(inputs)))
    if qt == "fts":
        _bm25_ties(ctx, [s.id for s in out], [s.input("bm25") or 0.0 for s in out], k)
    note = f"LanceDB {qt} search for {k} rows"
    if where:
        note += f"; where {where!r} as a " + ("prefilter" if p["prefilter"] else
                                             "post-filter after the top-k cut")
    facts = {"depth": k, "query_type": qt, "where": where}
    return Outcome(out, tuple(dropped), note, facts=facts)
