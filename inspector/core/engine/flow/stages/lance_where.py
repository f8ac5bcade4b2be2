"""A LanceDB vector leg for stores whose memories are not memory-lancedb-pro's rows: any id,
text and vector column, the scope, importance and time read from a plain column, a field of a
struct column (`metadata.user_id`) or a key of a JSON text column (`metadata_str.user_id`), a
filter placed where the system places it (LanceDB prefilter, LanceDB post-filter after the
top-k cut, or in Python over the fetched rows), and the system's own distance-to-score map.

Row semantics are each system's (`read_row` here, `legs.read_row` is memory-lancedb-pro's):
importance as stored (NaN when missing, for a stage to default), timestamps as epoch ms from
epoch numbers or ISO text (naive = UTC), scope as stored.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Row, Scored
from inspector.core.engine.index_rule import with_knobs
from inspector.core.engine.pools.searches import SEARCHES, store_key
from inspector.core.errors import InspectorError
from inspector.core.stores.safety.filters import (
    checked_filter,
    column_ref,
    narrowed,
    quoted_value,
)

SCORES = ("inv1p", "exp_neg_f32", "l2_relevance", "cosine_relevance", "neg_distance")
# the knobs a system may pass to LanceDB's indexed vector search (0: LanceDB's default)
INDEX_KNOBS = (
    P("nprobes", "int", 0, "IVF partitions probed (0: LanceDB's default, 20)", 0, 1_000_000,
      live=False, effect="index", zero=20),
    P("refine_factor", "int", 0, "re-rank limit x this candidates with full vectors (0: "
      "none)", 0, 50_000, live=False, effect="index"),
    P("ef", "int", 0, "HNSW candidate list (0: LanceDB's 1.5 x depth)", 0, 10_000_000,
      live=False, effect="index"),
)


def knobs(q: Any, ctx: Context, p: dict[str, Any]) -> Any:
    """The stage's index knobs on a LanceDB vector query; the what-if `exact` bypasses the
    index."""
    return with_knobs(q, exact=ctx.exact, nprobes=p.get("nprobes") or None,
                      refine_factor=p.get("refine_factor") or None, ef=p.get("ef") or None)
SCOPE_RULES = ("none", "equal", "prefix_like", "contains")
TIME_FORMATS = ("epoch_ms", "epoch_s", "iso")


# ------------------------------------------------------------------ reading values and rows

def value_at(rec: dict[str, Any], path: str) -> Any:
    """The value at `column` or `column.key` (a struct field, or a key of JSON text)."""
    if not path:
        return None
    col, dot, key = path.partition(".")
    v = rec.get(col)
    if not dot:
        return v
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return None
    return v.get(key) if isinstance(v, dict) else None


def epoch_ms(v: Any, fmt: str) -> float:
    """A stored time as epoch milliseconds (0 when missing or unreadable). ISO text without
    an offset is UTC (CrewAI writes naive utcnow().isoformat())."""
    if v is None:
        return 0.0
    if fmt == "iso" or isinstance(v, (str, dt.datetime)):
        when = parse_iso(v)
        return 0.0 if when is None else when.timestamp() * 1000
    try:
        x = float(v)
    except (TypeError, ValueError):
        return 0.0
    if not math.isfinite(x):
        return 0.0
    return x * 1000 if fmt == "epoch_s" else x


def parse_iso(v: Any) -> dt.datetime | None:
    """An aware UTC datetime from ISO text (or a datetime); None when unreadable."""
    if isinstance(v, dt.datetime):
        when = v
    else:
        try:
            when = dt.datetime.fromisoformat(str(v).replace("Z", "+00:00"))
        except ValueError:
            return None
    return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when



def meta_and_vector(rec: dict[str, Any], p: dict[str, Any]) -> tuple[Any, np.ndarray | None]:
    """A stored row's metadata (a struct, or JSON text read as JSON; None when unreadable) and
    its vector as float64 (None when missing, empty or not finite): what every LanceDB leg
    reads the same way."""
    meta = value_at(rec, p["metadata_path"]) if p["metadata_path"] else None
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = None
    vec = rec.get(p["vector_column"])
    arr = None
    if vec is not None:
        arr = np.asarray(vec, dtype=np.float64)
        arr = arr if arr.size and np.all(np.isfinite(arr)) else None
    return meta, arr

def read_row(rec: dict[str, Any], p: dict[str, Any]) -> Row:
    """A stored row through the stage's column paths, values as stored."""
    imp = value_at(rec, p["importance_path"])
    try:
        importance = float(imp) if imp is not None and not isinstance(imp, bool) else math.nan
    except (TypeError, ValueError):
        importance = math.nan
    meta, arr = meta_and_vector(rec, p)
    scope = value_at(rec, p["scope_path"])
    cols = {k: v for k, v in rec.items() if k != p["vector_column"] and not k.startswith("_")}
    return Row(id=str(rec.get(p["id_column"])), text=str(rec.get(p["text_column"]) or ""),
               vector=arr, scope=scope if isinstance(scope, str) or scope is None
               else json.dumps(scope), importance=importance,
               timestamp=epoch_ms(value_at(rec, p["time_path"]), p["time_format"]),
               metadata=meta if isinstance(meta, dict) else {}, columns=cols,
               rowid=int(rec.get("_rowid", -1)))


# ------------------------------------------------------------------ scope predicates

sql_text = quoted_value  # a text as a LanceDB SQL literal, quotes doubled


def like_prefix(prefix: str, column: str) -> str:
    r"""CrewAI's `scope LIKE '<prefix>%' ESCAPE '\'`, with \, % and _ escaped."""
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{column} LIKE {sql_text(pattern)[:-1]}%' ESCAPE '\\'"


def scope_sql(rule: str, path: str, scopes: tuple[str, ...]) -> str | None:
    """The scope as the SQL the system passes to LanceDB (None: no filter); a path that is
    not a plain identifier path is quoted (`column_ref`), so no path can change what the
    filter says."""
    name = column_ref(path)
    if rule == "equal":
        return " OR ".join(f"{name} = {sql_text(s)}" for s in scopes)
    if rule == "prefix_like":
        parts = [like_prefix(s.rstrip("/"), name) for s in scopes if s.strip("/")]
        return " OR ".join(parts) if len(parts) == len(scopes) else None
    raise InspectorError(f"The scope rule {rule} cannot be passed to LanceDB; place it in "
                         f"python.")


def scope_holds(rule: str, value: Any, scopes: tuple[str, ...]) -> bool:
    """The same rule evaluated on a fetched row (for JSON paths and list membership)."""
    if rule == "equal":
        return value in scopes
    if rule == "prefix_like":
        return any(not s.strip("/") or isinstance(value, str)
                   and value.startswith(s.rstrip("/")) for s in scopes)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = [value]
    return isinstance(value, list) and any(s in value for s in scopes)


def score_of(distance: float, how: str) -> float:
    """The score the system hands its caller for a LanceDB `_distance` (float32)."""
    if how == "inv1p":
        return 1.0 / (1.0 + distance)
    if how == "exp_neg_f32":  # numpy exp over the float32 column, as LlamaIndex computes it
        return float(np.exp(-np.float32(distance)))
    if how == "l2_relevance":  # langchain-core's _euclidean_relevance_score_fn
        return 1.0 - distance / math.sqrt(2)
    if how == "cosine_relevance":
        return 1.0 - distance
    return -distance


# ------------------------------------------------------------------ the leg

_PARAMS = (
    P("id_column", "str", "id", "the id column", live=False),
    P("text_column", "str", "text", "the text column", live=False),
    P("vector_column", "str", "vector", "the vector column", live=False),
    P("scope_path", "str", "", "where the scope is read: COLUMN or COLUMN.KEY (a struct "
      "field or a key of JSON text); empty: the rows have none", live=False),
    P("scope_rule", "str", "none", "equal (path = scope), prefix_like (CrewAI: LIKE "
      "'prefix%'), contains (a list or JSON list holds the scope), none", live=False,
      choices=SCOPE_RULES),
    P("prefilter", "bool", True, "the scope and `where` filters are a LanceDB prefilter "
      "(false: a post-filter after the top-k cut, as LangChain's prefilter=False); a scope "
      "inside JSON text or a list is filtered in Python over the fetched rows", live=False,
      effect="prefilter"),
    P("importance_path", "str", "", "where importance is read (empty: none)", live=False),
    P("time_path", "str", "", "where the creation time is read (empty: none)", live=False),
    P("time_format", "str", "epoch_ms", "how that time is stored", live=False,
      choices=TIME_FORMATS),
    P("metadata_path", "str", "", "a struct or JSON-text column read as the row's metadata",
      live=False),
    P("distance", "str", "l2", "LanceDB distance type (l2 is squared L2)", live=False,
      choices=("l2", "cosine", "dot")),
    P("score", "str", "inv1p", "distance to score: inv1p 1/(1+d), exp_neg_f32 float32 "
      "exp(-d), l2_relevance 1-d/sqrt(2), cosine_relevance 1-d, neg_distance -d", live=False,
      choices=SCORES),
    P("depth_factor", "float", 1.0, "LanceDB is asked for limit * factor + extra rows", 0, 1e6,
      live=False, effect="depth", step=0.5),
    P("depth_extra", "int", 0, "rows asked on top of limit * factor", 0, 1_000_000,
      live=False, effect="depth"),
    P("min_score", "float", -1e9, "rows scoring below this are skipped while reading", -1e9,
      1e9, live=False, effect="threshold", step=0.01),
    *INDEX_KNOBS,
)


def python_scope(ctx: Context, p: dict[str, Any]) -> bool:
    """True when LanceDB cannot evaluate the scope: list membership, or a key inside JSON
    text (a dotted path whose column is not a struct)."""
    if p["scope_rule"] == "contains":
        return True
    col, dot, _ = p["scope_path"].partition(".")
    schema = ctx.store.table.schema if ctx.store is not None else None
    return bool(dot) and schema is not None and col in schema.names \
        and not pa.types.is_struct(schema.field(col).type)


def leg_where(ctx: Context, p: dict[str, Any], scopes: tuple[str, ...] | None) -> \
        tuple[str | None, str | None]:
    """(SQL for LanceDB, description of a Python-side filter) for the scope and `where`;
    the `where` is checked (safety.filters) and joined so that it can only narrow the scope."""
    where = checked_filter(ctx.settings.get("where"), "The filter (setting where)")
    parts = [where] if where else []
    py = None
    if scopes and p["scope_rule"] != "none":
        if not p["scope_path"]:
            raise InspectorError("This pipeline's rows have no scope column: name it with "
                                 "--set fetch.scope_path=COLUMN or COLUMN.KEY (e.g. "
                                 "metadata.user_id).")
        if python_scope(ctx, p):
            py = f"{p['scope_path']} {p['scope_rule']} {list(scopes)}"
        else:
            sql = scope_sql(p["scope_rule"], p["scope_path"], scopes)
            if sql:
                parts.append(sql)
    return narrowed(*parts), py


def search(ctx: Context, p: dict[str, Any], k: int, scopes: tuple[str, ...] | None,
           vector: np.ndarray) -> tuple[pa.Table, str | None, str | None]:
    """LanceDB's rows for one search as the system asks it, equal distances by row id."""
    where, py = leg_where(ctx, p, scopes)
    have = set(ctx.store.table.schema.names)
    for role in ("id", "text", "vector"):
        col = p[f"{role}_column"]
        if col not in have:
            raise InspectorError(f"This preset reads the {role} from the column {col!r}, which "
                                 f"table {ctx.store.table_name!r} lacks (it has "
                                 f"{', '.join(sorted(have))}): map it with --column "
                                 f"{role}=COLUMN.")
    qv = vector.astype(np.float32)

    def run(n: int, flt: str | None = where) -> pa.Table:
        q = (ctx.store.table.search(qv, vector_column_name=p["vector_column"])
             .distance_type(p["distance"]).with_row_id(True).limit(n))
        q = knobs(q, ctx, p)
        if flt:
            q = q.where(flt, prefilter=p["prefilter"])
        try:
            return q.to_arrow()
        except ValueError as exc:  # LanceDB's word on a filter it cannot plan or parse
            if not flt:
                raise
            raise InspectorError(f"LanceDB cannot run the filter {flt!r} on this table: "
                                 f"{str(exc).splitlines()[0]}.") from None

    base = store_key(ctx.store)
    shape = None if base is None else (
        base, qv.tobytes(), p["vector_column"], p["distance"], p.get("nprobes"),
        p.get("refine_factor"), p.get("ef"), ctx.exact)
    post = bool(where) and not p["prefilter"]
    tbl = SEARCHES.search(None if shape is None else (*shape, where, p["prefilter"]), k, run,
                          flat(ctx, p),
                          (None if shape is None else (*shape, None, True),
                           lambda n: run(n, None)) if post else None)
    return (tbl if k > 0 else tbl.slice(0, 0)), where, py


def flat(ctx: Context, p: dict[str, Any]) -> bool:
    """True when this leg's search is exact (no ANN index on its column with its metric, or
    the index bypassed): a deeper search's first rows are a shallower one's."""
    index = getattr(ctx.store, "vector_index", None)
    if ctx.exact or index is None or index.column != p["vector_column"]:
        return True
    return index.metric is not None and index.metric != p["distance"]


def depth(ctx: Context, p: dict[str, Any]) -> int:
    """limit * factor + extra (or deeper, where a what-if widens this stage)."""
    return ctx.wide(max(0, math.ceil(ctx.limit * p["depth_factor"] - 1e-9) + p["depth_extra"]))


@stage("lancedb_vector_where", "fetch", *_PARAMS, widens=True, vector=True)
def vector_where(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """LanceDB vector search with the scope (and the setting `where`) placed as the system
    places it; columns read through paths; the system's own score."""
    if ctx.scopes == ():
        return Outcome([], note="an empty scope list denies everything: no search is made")
    if ctx.vector is None:
        raise InspectorError(ctx.settings.get("_vector_error") or "This pipeline needs a query "
                             "vector: give --vector, --vector-of ID, or --text with an "
                             "embedder.")
    k = depth(ctx, p)
    tbl, where, py = search(ctx, p, k, ctx.scopes, ctx.vector)
    out, dropped = read_hits(ctx, p, tbl, ctx.scopes)
    place = "prefilter" if p["prefilter"] else "post-filter after the top-k cut"
    note = f"asked LanceDB for {k} rows"
    if where:
        note += f"; where {where!r} as a {place}"
    if py:
        note += f"; {py} filtered in Python"
    return Outcome(out, tuple(dropped), note)


def read_hits(ctx: Context, p: dict[str, Any], tbl: pa.Table,
              scopes: tuple[str, ...] | None) -> tuple[list[Scored], list[Drop]]:
    out: list[Scored] = []
    dropped: list[Drop] = []
    dim = len(ctx.vector) if ctx.vector is not None else 0
    in_python = bool(scopes) and p["scope_rule"] != "none" and python_scope(ctx, p)
    for rec in tbl.to_pylist():
        row = read_row(rec, p)
        if row.vector is None or len(row.vector) != dim:
            dropped.append(Drop(row.id, "no_vector"))
            continue
        if in_python and not scope_holds(p["scope_rule"], value_at(rec, p["scope_path"]),
                                            scopes):
            dropped.append(Drop(row.id, "out_of_scope", (("scope", row.scope),)))
            continue
        score = score_of(float(rec["_distance"]), p["score"])
        if not score >= p["min_score"]:
            dropped.append(Drop(row.id, "below_min_score", (("score", score),
                                                            ("min", p["min_score"]))))
            continue
        out.append(Scored(row, score, (("vector", score), ("distance",
                                                           float(rec["_distance"])))))
    return out, dropped
