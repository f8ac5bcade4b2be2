"""The classic pipeline's fetch as an ordinary stage: LanceDB's legs fused into a pool cut to
`ceil(limit * F)` (capped). The scope rule before it and the scope post-filter after it are
`scoping.py`; the importance blend is `importance.py`, the min score and the limit are the
shared cuts (`cuts.py`).

The fetch asks the one pool source (`engine.pools`) for its legs, in the canonical order
(distance ascending or BM25 descending, ties by row id) in which a shallow fetch is a prefix
of a deep one, so a change of the over-fetch, the cap or a leg's k is answered from a deeper
cached pool without a search wherever the search is prefix-exact (flat; never an ANN index).
Equal scores are ordered by the pipeline's tie rule (setting `tie_rule`, see `engine.ties`).
"""

from __future__ import annotations

import ast
import math
import operator
import weakref
from itertools import compress, repeat
from typing import Any

import numpy as np

from inspector.core.engine import pools
from inspector.core.engine import scope as scopes
from inspector.core.engine.flow.columns import Columns
from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import columns, stage
from inspector.core.engine.flow.rows import (
    Context,
    Drop,
    Outcome,
    Row,
    Scored,
    Tie,
    scored,
)
from inspector.core.engine.flow.rows import row as stored_row
from inspector.core.engine.params import Params, depths, pool_depth
from inspector.core.engine.pool import Pool, Query, column_rows, cut_values, tied_at
from inspector.core.engine.ties import tied_runs
from inspector.core.errors import InspectorError
from inspector.core.stores.safety.bounds import MAX_CANDIDATES

MODES = ("vector", "fts", "hybrid")
TIE_RULES = ("lancedb", "id")
_FTS_ONLY = 1 << 40  # merge key offset: full-text-only rows follow every vector result


# ------------------------------------------------------------------------------ the fetch

_KNOBS = (
    P("nprobes", "int", 0, "IVF partitions probed (0: LanceDB's default, 20)", 0, 1_000_000,
      live=False, effect="index", zero=20),
    P("min_nprobes", "int", 0, "minimum partitions (0: the default)", 0, 1_000_000,
      live=False),
    P("max_nprobes", "int", -1, "maximum partitions (0: no maximum; -1: the default)", -1,
      1_000_000, live=False),
    P("refine_factor", "int", 0, "re-rank depth x this with full vectors (0: none)", 0,
      1_000_000, live=False, effect="index"),
    P("ef", "int", 0, "HNSW candidate list (0: LanceDB's 1.5 x depth)", 0, 10_000_000,
      live=False, effect="index"),
)


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}
_FUNCS = {"min": min, "max": max}


def evaluate_depth(expr: str, limit: int) -> float:
    """A depth expression over `limit`: numbers, + - * /, min(), max(); nothing else."""
    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id == "limit":
            return limit
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _FUNCS and not node.keywords and node.args:
            return _FUNCS[node.func.id](*(ev(a) for a in node.args))
        raise InspectorError(f"The depth expression {expr!r} may use numbers, limit, "
                             f"+ - * / and min/max only.")

    if len(expr) > 1000:
        raise InspectorError("A depth expression is at most 1,000 characters.")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise InspectorError(f"The depth expression {expr!r} is not an expression.") from None
    try:
        return float(ev(tree))
    except (ZeroDivisionError, OverflowError, RecursionError):
        raise InspectorError(f"The depth expression {expr!r} has no finite value at limit "
                             f"{limit}.") from None


def fetch_params(ctx: Context, p: dict[str, Any]) -> Params:
    """What the pool source is asked: this stage's parameters, the scope rule's, the limit and
    the what-ifs (a widened depth, the index bypassed)."""
    spec = ctx.request.get("scope_spec") or scopes.ScopeSpec()
    scoped = bool(ctx.request.get("scoped"))
    over = evaluate_depth(p["scoped_overfetch"], ctx.limit) \
        if scoped and p["scoped_overfetch"] else p["overfetch"]
    if not math.isfinite(over) or over <= 0:
        raise InspectorError(f"fetch.scoped_overfetch gives an over-fetch of {over:g}; it "
                             f"must be a positive number.")
    cap = p["cap"]
    if over < 1:  # a pool smaller than the limit (the docs engine's min(50, ...) at limit 60):
        # that pool as the cap, the legs widened to it as an over-fetch widens them
        depth = pool_depth(ctx.limit, over, 0)
        cap, over = (min(cap, depth) if cap else depth), math.nextafter(1.0, 2.0)
    q = Params(mode=p["mode"], distance=p["distance"], limit=ctx.limit, overfetch=over,
               cap=cap, fts_k=p["fts_k"], vec_k=p["vec_k"], rrf_k=p["rrf_k"],
               scope=spec.scope, scope_strategy=spec.strategy, scope_map=spec.scope_map,
               scope_column=spec.column,
               filter="pushdown" if ctx.request.get("pushdown") else "post",
               tie_rule=ctx.settings.get("tie_rule", "lancedb"),
               nprobes=p["nprobes"] or None, min_nprobes=p["min_nprobes"] or None,
               max_nprobes=None if p["max_nprobes"] < 0 else p["max_nprobes"],
               refine_factor=p["refine_factor"] or None, ef=p["ef"] or None, exact=ctx.exact)
    wide = ctx.wide(0)
    if wide > pool_depth(q.limit, q.overfetch, q.cap):  # what-if: a deeper pool, no cap
        q = q.with_(overfetch=min(wide, MAX_CANDIDATES) / q.limit, cap=0)
    return q


def query_of(ctx: Context) -> Query:
    vec = None if ctx.vector is None else np.asarray(ctx.vector, np.float32)
    return Query(text=ctx.text, vector=vec, source=ctx.settings.get("_query_source", "text"))


def leg_ranks(rank: np.ndarray, k: int) -> np.ndarray:
    """1-based rank within the leg's first k rows, 0 elsewhere."""
    inside = (rank >= 0) & (rank < k)
    return np.where(inside, rank + 1, 0)


def fuse(pool: Pool, p: Params, vr: np.ndarray, fr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every fused candidate in the system's order, and the fused score per pool row (NaN for
    rows in neither leg). vr, fr: 1-based ranks within each leg's k, 0 outside. The tie rule
    (engine.ties): `lancedb` is LanceDB's RRFReranker (float32 scores, vector results first,
    then full-text-only rows, a stable sort); `id` the docs engine's (float64, ties by id)."""
    vec, fts = vr > 0, fr > 0
    with np.errstate(divide="ignore"):
        fused = (np.where(vec, 1.0 / (p.rrf_k + vr), 0.0)
                 + np.where(fts, 1.0 / (p.rrf_k + fr), 0.0))
    if p.tie_rule == "lancedb":
        fused = fused.astype(np.float32).astype(np.float64)
        then = np.where(vec, vr, _FTS_ONLY + fr)
    else:
        then = pool.id_order
    cand = np.flatnonzero(vec | fts)
    order = cand[np.lexsort((then[cand], -fused[cand]))]
    return order, np.where(vec | fts, fused, np.nan)


def native_fts_ranks(pool: Pool, order: tuple[Any, ...]) -> np.ndarray:
    """1-based rank per pool row in LanceDB's own full-text order at the leg's k (0 outside):
    the pool's canonical ranking (by row id among equal BM25 scores) answers the live
    re-ranking, this one the order the system sees."""
    at = {v: i for i, v in enumerate(pool.ids.tolist())}
    fr = np.zeros(pool.size, int)
    for r, rid in enumerate(order, start=1):
        i = at.get(rid)
        if i is not None and not fr[i]:
            fr[i] = r
    return fr


def raw_order(pool: Pool, p: Params, native: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(raw rows in order, base score, fused score, vector ranks, full-text ranks) per pool
    row for p's depths; `native`: the full-text ranks in LanceDB's own order at fts_k."""
    d = depths(p)
    n = pool.size
    vr = leg_ranks(pool.vec_rank, d.vec_k) if pool.vec_leg is not None else np.zeros(n, int)
    fr = leg_ranks(pool.fts_rank, d.fts_k) if pool.fts_leg is not None else np.zeros(n, int)
    if native is not None:
        fr = native
    fused = np.full(n, np.nan)
    if p.mode == "vector":
        rows = pool.vec_leg.rows[: d.pool]
        base = 1.0 / (1.0 + pool.vec_dist)
    elif p.mode == "fts":
        rows = pool.fts_leg.rows[: d.pool] if native is None else \
            np.flatnonzero(native)[np.argsort(native[native > 0], kind="stable")][: d.pool]
        base = pool.fts_score / (1.0 + pool.fts_score)
    else:
        order, fused = fuse(pool, p, vr, fr)
        rows = order[: d.pool]
        base = fused
    return rows, base, fused, vr, fr


def pool_for(ctx: Context, p: Params) -> Pool:
    """The pool that answers p exactly: a cached one (a deeper pool where the search is
    prefix-exact), else p's own fetch; a live session fetches it deep at once."""
    store, query = ctx.store, query_of(ctx)
    found = pools.SOURCE.answering(store, query, p)
    if found is not None:
        return found
    # this stage asks LanceDB's own full-text order at p's k where the leg ties there: it is
    # searched beside the vector leg (PoolSource.pool)
    if ctx.settings.get("_live"):
        return pools.fetch(store, query, p, *pools.depth_for("live", store, p),
                           order_ahead=True)
    return pools.fetch_for(store, query, p, order_ahead=True)


# id(pool) -> what was read from it once: its rows, the fetch stage's candidates per shape of
# the fetch (with the ties each fetch stage of that shape reports: the shape fixes them, and
# each candidate's row in the pool), each candidate by its inputs (a live re-rank of a cached
# pool passes the same ones on: a Row, a Scored and a Tie are never changed, later stages
# re-score with new ones), and the scope filter's verdict on each row per rule
# (`_pool_verdicts`); dropped with the pool
_Shape = tuple[list[Scored], dict[str, tuple[Tie, ...]], np.ndarray]
_Verdicts = tuple[np.ndarray, list[str], list[str], dict[int, Drop]]
_Read = tuple[list[Row | None], dict[Any, _Shape], dict[Any, Scored], dict[Any, _Verdicts]]
_READ: dict[int, _Read] = {}
_SHAPES_MAX = 32  # fetch shapes remembered a pool (over-fetch values a slider visits)
_SHAPE_ROWS_MAX = 100_000  # and candidates a pool, over all its shapes


def _read(pool: Pool) -> _Read:
    got = _READ.get(id(pool))
    if got is None:
        got = _READ[id(pool)] = ([None] * pool.size, {}, {}, {})
        weakref.finalize(pool, _READ.pop, id(pool), None)
    return got


# (store token, table, version, the pool's columns, its roles) -> row address -> the Row read:
# pools of one table share its rows (a sweep's or an audit's queries each fetch their own pool
# of the same rows, and a row's scope verdict is remembered by the Row, _scope_verdicts). A
# version's rows never change and the token names one store object while it lives (never
# reused), so a row read once is the row. Bounded: past SHARED_ROWS_MAX rows, start again.
_SHARED: dict[Any, dict[int, Row]] = {}
SHARED_ROWS_MAX = pools.CACHE_ROWS
_SHARED_COUNT = [0]


def _shared_rows(store: Any, pool: Pool) -> dict[int, Row] | None:
    """The rows of the pool's table read so far by any pool of the same reading (None: the
    pool or store cannot say which stored rows it holds)."""
    if pool.rowids is None:
        return None
    token = pools.SOURCE.token(store)
    if token is None:
        return None
    key = (token, pool.store.get("table"), pool.store.get("version"), tuple(pool.columns),
           tuple(sorted(pool.roles.items())))
    got = _SHARED.get(key)
    if got is None:
        if _SHARED_COUNT[0] > SHARED_ROWS_MAX:
            _SHARED.clear()
            _SHARED_COUNT[0] = 0
        got = _SHARED.setdefault(key, {})
    return got


def _read_rows(pool: Pool, wanted: list[int], shared: dict[int, Row] | None = None) -> None:
    """Rows `wanted` of the pool not read yet, read at once (each column read per row, not
    each row per column): the row's columns as stored, its text, scope, importance and time
    through the store's roles. `shared` (_shared_rows): rows another pool of the same table
    read already, taken from it, and where this pool's new rows go."""
    rows = _read(pool)[0]
    todo = [i for i in dict.fromkeys(wanted) if rows[i] is None]
    if todo and shared is not None:
        assert pool.rowids is not None
        left = []
        for i, got in zip(todo, map(shared.get, pool.rowids[todo].tolist()), strict=True):
            if got is None:
                left.append(i)
            else:
                rows[i] = got
        todo = left
    if not todo:
        return
    roles = pool.roles
    names = list(pool.columns)
    scope_c = roles.get("scope") or roles.get("agent") or roles.get("repo")
    column = {c: column_rows(pool.columns, c, todo) for c in names}
    nothing = [None] * len(todo)  # a role the pool has no column for
    cols = list(map(dict, map(zip, repeat(names), zip(*column.values(), strict=True)))) \
        if names else [{} for _ in todo]
    text = ["" if t is None else str(t) for t in column.get(roles.get("text") or "", nothing)]
    scope = [None if v is None else str(v) for v in
             (column.get(scope_c, nothing) if scope_c is not None else nothing)]
    made = map(stored_row, map(str, pool.ids[todo].tolist()), text, repeat(None), scope,
               map(float, pool.importance[todo].tolist()),
               map(_stamp, column.get(roles.get("created") or "", nothing)),
               map(dict, repeat(())), cols, repeat(-1),
               map(bool, pool.missing_importance()[todo].tolist()))
    for i, got in zip(todo, made, strict=True):
        rows[i] = got
    if shared is not None:
        assert pool.rowids is not None
        shared.update(zip(pool.rowids[todo].tolist(), (rows[i] for i in todo), strict=True))
        _SHARED_COUNT[0] += len(todo)


def _stamp(created: Any) -> float:
    """A row's time: its created value as a number (not a bool), 0 where it is none."""
    try:
        ts = float(created) if created is not None and not isinstance(created, bool) else 0.0
    except (TypeError, ValueError):
        ts = 0.0
    return ts if math.isfinite(ts) else 0.0


def _cut_values(leg: Any, k: int) -> tuple[int, np.ndarray]:
    """A leg's rows inside its cut at k, and its values to one past the cut (when known)."""
    return cut_values(leg.values, leg.next_value, k)


def _fts_tied(pool: Pool, k: int) -> bool:
    """Some BM25 scores tie within the full-text leg's first k rows or across its cut. Without
    a tie, LanceDB's own order at k is the pool's (score descending, each row's place fixed),
    so its search at k is not needed to know it."""
    return tied_at(pool.fts_leg.values, pool.fts_leg.next_value, k)


def _leg_ties(ctx: Context, pool: Pool, p: Params, stage_name: str) -> None:
    d = depths(p)
    for name, leg, k, measure in (("vector", pool.vec_leg, d.vec_k, "distance"),
                                  ("fulltext", pool.fts_leg, d.fts_k, "bm25")):
        if leg is None or not k:
            continue
        c, values = _cut_values(leg, k)
        arbitrary = name == "fulltext" and pool.fts_ties != "rowid"
        order = ("row id (LanceDB's flat vector search)" if name == "vector" else
                 "rowid (the SQLite FTS5 table)" if not arbitrary else
                 "arbitrary: LanceDB's full-text search keeps any order (shown by row id)")
        label = f"{stage_name}.{name}" if p.mode == "hybrid" else stage_name
        for s, e, end in tied_runs(values, c, c):
            rows = leg.rows[s:e]
            ctx.ties.append(Tie(stage=label, ids=tuple(str(pool.ids[i]) for i in rows),
                                value=float(values[s]), measure=measure, cut=k,
                                beyond=end - e, arbitrary=arbitrary, at_cut=s < c < end,
                                members=tuple(str(pool.ids[i]) for i in rows), order=order))


def _candidates(pool: Pool, mode: str, raw: np.ndarray, base: np.ndarray, fused: np.ndarray,
                vr: np.ndarray, fr: np.ndarray,
                shared: dict[int, Row] | None = None) -> list[Scored]:
    """The fetch's candidates in raw order (each pool row at most once), each with the inputs
    of its score. A row whose inputs another shape of the fetch gave already (an over-fetch
    tick: the same leg ranks) gets that shape's Scored again, so each tick builds only the
    rows new to it. Hybrid too: its base score is the fused one, so the key (row, leg ranks,
    base) fixes every input (distance and BM25 are the row's own), and a row keeps its leg
    ranks across depths."""
    rows, _, made, _ = _read(pool)
    if len(made) > pool.size:  # bounded by one shape's worth of rows
        made.clear()
    raw_ids = raw.tolist()
    _read_rows(pool, raw_ids, shared)  # every row of raw is read from here on
    base_of = base[raw].tolist()
    keys = list(zip(raw_ids, vr[raw].tolist(), fr[raw].tolist(), base_of, strict=True))
    out: list[Scored | None] = list(map(made.get, keys)) if made else [None] * len(keys)
    new = list(compress(range(len(out)), map(operator.is_, out, repeat(None))))
    if not new:
        return out  # type: ignore[return-value]
    if len(new) < len(out):
        at, base_of = raw[new], [base_of[j] for j in new]
    else:
        at = raw
    inputs = _inputs(pool, at, vr[at], fr[at], fused[at], mode == "hybrid")
    got = list(map(scored, map(rows.__getitem__, at.tolist()), base_of, inputs,
                   map(str, pool.ids[at].tolist())))  # each row's id, as _read_rows reads it
    made.update(zip(map(keys.__getitem__, new), got, strict=True))
    if len(new) == len(out):
        return got
    for j, s in zip(new, got, strict=True):
        out[j] = s
    return out  # type: ignore[return-value]


def _vector_shapes(shapes: dict[Any, _Shape], shape: tuple[Any, ...]
                   ) -> list[tuple[int, _Shape]]:
    """(depth, entry) of every vector shape made whose candidates a vector shape's share
    (LanceDB's own full-text order none of them), [] unless `shape` is one.

    In vector mode a shape's candidates are the vector leg's first `pool` rows in leg order,
    each scored 1 / (1 + its distance) with its leg rank as input, and the leg's depth is
    the pool's (`params.depths`): so the candidates at a depth are the first ones of any
    deeper shape's, equal to those `_candidates` would make (the very objects while its memo
    holds them: it keys them by the same row, ranks and score)."""
    mode, _, _, _, native = shape
    if mode != "vector" or native is not None:
        return []
    return [(dd.pool, entry) for (m, dd, *rest), entry in shapes.items()
            if m == "vector" and rest[-1] is None]


def _deeper_vector_shape(shapes: dict[Any, _Shape], shape: tuple[Any, ...]
                         ) -> _Shape | None:
    """A vector fetch's shape already made at a depth at least this one's, the shallowest,
    else None: its first candidates are this one's (`_vector_shapes`). An over-fetch slider
    moved back rebuilt 1,000 to 3,000 of them per tick."""
    pool = shape[1].pool
    made = [(depth, entry) for depth, entry in _vector_shapes(shapes, shape)
            if depth >= pool and len(entry[2]) >= pool]
    return min(made, key=lambda e: e[0])[1] if made else None


def _shallower_vector_shape(shapes: dict[Any, _Shape], shape: tuple[Any, ...],
                            raw: np.ndarray) -> list[Scored]:
    """The candidates of the deepest vector shape made at a depth below this one's whose
    rows are the first of `raw` (this shape's rows in order), else []: they are this shape's
    first candidates (`_vector_shapes`), and only the rows past them are new. An over-fetch
    slider moved up built 1,000 to 3,000 candidates per tick, each looked up in
    `_candidates`' memo."""
    pool = shape[1].pool
    made = [entry for depth, entry in _vector_shapes(shapes, shape)
            if depth < pool and len(entry[0]) == len(entry[2]) <= len(raw)]
    if not made:
        return []
    best = max(made, key=lambda e: len(e[2]))
    return best[0] if np.array_equal(best[2], raw[:len(best[2])]) else []


def _inputs(pool: Pool, at: np.ndarray, vr: np.ndarray, fr: np.ndarray, fused: np.ndarray,
            hybrid: bool) -> list[tuple[tuple[str, float], ...]]:
    """Per pool row `at`, the inputs of its score: its vector leg's rank, distance and
    1 / (1 + distance) where it has a rank there, its full-text rank and BM25 where it has
    one there, the fused score in hybrid; each a column at once (numpy's 1 / (1 + d) is the
    same IEEE operations as Python's)."""
    parts: list[tuple[np.ndarray | None, list[tuple[tuple[str, float], ...]]]] = []
    if (has := vr != 0).any():
        d = pool.vec_dist[at]
        parts.append((has, list(zip(zip(repeat("vec_rank"), vr.astype(np.float64).tolist()),
                                    zip(repeat("distance"), d.tolist()),
                                    zip(repeat("vector"), (1.0 / (1.0 + d)).tolist()),
                                    strict=True))))
    if (has := fr != 0).any():
        parts.append((has, list(zip(zip(repeat("fts_rank"), fr.astype(np.float64).tolist()),
                                    zip(repeat("bm25"), pool.fts_score[at].tolist()),
                                    strict=True))))
    if hybrid:
        parts.append((None, list(zip(zip(repeat("fused"), fused.tolist())))))
    if len(parts) == 1 and (parts[0][0] is None or parts[0][0].all()):
        return parts[0][1]  # every row has the same kinds of input
    out: list[tuple[tuple[str, float], ...]] = [()] * len(at)
    for has, got in parts:
        out = [a + g for a, g in zip(out, got, strict=True)] if has is None else \
            [a + g if h else a for a, g, h in zip(out, got, has.tolist(), strict=True)]
    return out


@stage("lancedb_pool", "fetch",
       P("mode", "str", "vector", "vector, fts (LanceDB's BM25) or hybrid (RRF of both)",
         live=False, choices=MODES),
       P("distance", "str", "l2", "l2 (squared) or cosine", live=False,
         choices=("l2", "cosine")),
       P("overfetch", "float", 1.0, "the pool is the first ceil(limit * F) rows (capped)", 1,
         1e6, effect="depth", step=0.1),
       P("scoped_overfetch", "str", "", "F when a scope is given, as an expression of limit "
         "(e.g. min(50, max(limit * 5, 20)) / limit); empty: overfetch", live=False),
       P("cap", "int", 50, "the deepest pool (0: none)", 0, MAX_CANDIDATES, effect="depth"),
       P("fts_k", "int", 0, "hybrid: the full-text leg's depth, at least (with over-fetch 1: "
         "exactly)", 0, MAX_CANDIDATES, effect="depth"),
       P("vec_k", "int", 0, "hybrid: the vector leg's depth, at least (with over-fetch 1: "
         "exactly)", 0, MAX_CANDIDATES, effect="depth"),
       P("rrf_k", "int", 60, "the RRF constant: score = sum of 1 / (k + rank)", 0,
         MAX_CANDIDATES),
       *_KNOBS, widens=True, vector=True, store_roles=True,
       rowwise=lambda p: p["mode"] == "vector")  # 1 / (1 + its own distance); RRF is ranks
def lancedb_pool(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """LanceDB's legs fused into the pool the rest of the pipeline sees: the first
    ceil(limit * F) rows (capped); vector 1 / (1 + d), full-text s / (1 + s), hybrid RRF."""
    q = _asked(ctx, p)
    pool = pool_for(ctx, q)
    d = depths(q)
    native = None
    if _native_order(ctx, q, pool, d):  # LanceDB's order at k
        order = pools.fts_order(ctx.store, ctx.text, d.fts_k, q)
        native = native_fts_ranks(pool, order)
        lost = len(set(order)) - int(np.count_nonzero(native))
        if lost:  # a BM25 tie past TIE_FETCH_MAX rows at the leg's cut: the pool lacks them
            ctx.warnings.append(f"LanceDB's full-text search at k {d.fts_k} returned {lost} "
                                f"tied rows the fetched pool lacks; the fused ranking leaves "
                                f"them out, so it may differ from the system's.")
    shapes = _read(pool)[1]
    shape = (q.mode, d, q.rrf_k, q.tie_rule, None if native is None else native.tobytes())
    entry = shapes.get(shape)
    ordered = None
    if entry is None:
        deeper = _deeper_vector_shape(shapes, shape)
        if deeper is not None:  # a shallower over-fetch of a vector pool: its prefix
            entry = (deeper[0][:d.pool], {}, deeper[2][:d.pool])
        else:
            ordered = raw, base, fused, vr, fr = raw_order(pool, q, native)
            # a deeper over-fetch of a vector pool: a shallower shape's candidates, then
            # those of the rows past it (made now)
            head = _shallower_vector_shape(shapes, shape, raw)
            made = _candidates(pool, q.mode, raw[len(head):], base, fused, vr, fr,
                               _shared_rows(ctx.store, pool))
            entry = (head + made if head else made, {}, raw)
        if len(shapes) >= min(_SHAPES_MAX, max(1, _SHAPE_ROWS_MAX // max(pool.size, 1))):
            shapes.clear()
        shapes[shape] = entry
    out = list(entry[0])
    ties = entry[1].get(ctx.stage)  # the shape fixes the ties too (its legs, depths, order)
    if ties is not None:
        ctx.ties.extend(ties)
    else:
        before = len(ctx.ties)
        _leg_ties(ctx, pool, q, ctx.stage)
        if q.mode == "hybrid":
            raw, _, fused, vr, fr = ordered or raw_order(pool, q, native)
            c = min(d.pool, len(raw))
            order, _ = fuse(pool, q, vr, fr)  # fr: LanceDB's own full-text order at fts_k
            rule = ("merge order: vector results first, then full-text-only rows (a stable "
                    "sort)" if q.tie_rule == "lancedb" else "id ascending")
            values = fused[order]
            for s, e, end in tied_runs(values, c, c):
                ids = tuple(str(pool.ids[i]) for i in order[s:e])
                ctx.ties.append(Tie(stage=ctx.stage, ids=ids, value=float(values[s]),
                                    measure="fused", cut=d.pool, beyond=end - e,
                                    arbitrary=False, at_cut=s < c < end, members=ids,
                                    order=rule))
        entry[1][ctx.stage] = tuple(ctx.ties[before:])
    ctx.warnings.extend(w for w in pool.warnings if w not in ctx.warnings)
    note = _fetch_note(q, d, pool)
    facts = {"depth": d.pool, "vec_k": d.vec_k, "fts_k": d.fts_k,
             "pushdown_sql": pool.pushdown_sql or None if q.filter == "pushdown" else None,
             "index": pool.index.type if pool.index is not None and not q.exact else None}
    return Outcome(out, note=note, facts=facts, source=(weakref.ref(pool), entry[2]))


def _fetch_note(q: Params, d: Any, pool: Pool) -> str:
    legs = {"vector": d.vec_k, "fulltext": d.fts_k}
    shown = " and ".join(f"{k} {v}" for k, v in legs.items() if v)
    note = (f"depth {d.pool} = limit {q.limit} x over-fetch {q.overfetch:g}"
            + (f" (cap {q.cap})" if q.cap else "") + f"; legs {shown}")
    if q.filter == "pushdown" and pool.pushdown_sql:
        note += f"; prefilter {pool.pushdown_sql}"
    elif q.filter == "pushdown":
        note += f"; no prefilter: {pool.pushdown_note}"
    return note


def _asked(ctx: Context, p: dict[str, Any]) -> Params:
    """What the fetch asks the pool source; InspectorError where the query has no vector and
    the store's embedder said why."""
    q = fetch_params(ctx, p)
    if ctx.vector is None and q.mode != "fts" and ctx.settings.get("_vector_error"):
        raise InspectorError(ctx.settings["_vector_error"])  # why no vector (an embedder)
    return q


@columns("lancedb_pool")
def lancedb_pool_columns(ctx: Context, cols: Columns, p: dict[str, Any]) -> Columns | None:
    """The fetch over columns: the same pool's candidates in raw order with their base scores
    (`raw_order`, as `_candidates` scores them). Where the fetch would ask LanceDB's own
    full-text order at its k (a BM25 tie under LanceDB's rule), the rows answer."""
    q = _asked(ctx, p)
    if q.mode != "fts" and ctx.vector is None:
        return None
    return _fetched_remembered(ctx, q)


def _fetched_remembered(ctx: Context, q: Params) -> Columns | None:
    """`_fetched_columns(ctx, q)`, remembered in the question's memo: the pool that answered
    q answers it while the question lives (the store and the query are its), and the fetch's
    columns read that pool, q and the question's text alone. A sweep asks the same q of every
    cell of a depth, each truth and each curve point."""
    if ctx.memo is None:
        return _fetched_columns(ctx, q)
    kept = ctx.memo.setdefault("fetched", {})
    key = (q, bool(ctx.settings.get("_live")))
    try:
        if key in kept:
            return kept[key]
    except TypeError:  # an unhashable parameter: made each time
        return _fetched_columns(ctx, q)
    if len(kept) >= _FETCHED_MAX:
        kept.clear()
    got = kept[key] = _fetched_columns(ctx, q)
    return got


_FETCHED_MAX = 512  # fetch parameters a question remembers its fetch's columns for


def _fetched_columns(ctx: Context, q: Params) -> Columns | None:
    pool = pool_for(ctx, q)
    d = depths(q)
    if _native_order(ctx, q, pool, d) or (q.mode == "vector" and pool.vec_leg is None) \
            or (q.mode == "fts" and pool.fts_leg is None):
        return None
    if q.mode == "vector":  # the leg's rows, scored 1 / (1 + d): no fused ranks to make
        raw = np.asarray(pool.vec_leg.rows[: d.pool], np.int64)
        base = 1.0 / (1.0 + pool.vec_dist[raw])
    else:
        raw, all_base = raw_order(pool, q)[:2]
        raw = np.asarray(raw, np.int64)
        base = all_base[raw]
    return Columns(pool, raw, np.asarray(base, np.float64), _fetch_note(q, d, pool))


def _native_order(ctx: Context, q: Params, pool: Pool, d: Any) -> bool:
    """The fetch asks LanceDB's own full-text order at the leg's k: LanceDB's rule, a
    full-text leg whose ties LanceDB orders arbitrarily, a tie within its first k."""
    return bool(q.tie_rule == "lancedb" and pool.fts_leg is not None
                and pool.fts_ties == "arbitrary" and d.fts_k and ctx.text
                and _fts_tied(pool, d.fts_k))
