"""The classic pipeline's importance blend: each row's score times its importance multiplier
(the formula is `engine.blend`'s), the rows re-sorted by the pipeline's tie rule (setting
`tie_rule`, see `engine.ties`), and groups of equal blended scores reported as ties. A
question's runs blend each row once per weight and default importance (its memo,
`Context.memo`)."""

from __future__ import annotations

import operator
from itertools import compress, repeat
from typing import Any

import numpy as np

from inspector.core.engine.blend import blend_scores
from inspector.core.engine.flow.columns import Columns
from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import columns, stage
from inspector.core.engine.flow.rows import Context, Outcome, Scored, Tie, scored
from inspector.core.engine.ties import score_order, tied_runs

# a column of a list of rows at once (map, not a Python step per row)
_ROW, _SCORE, _INPUTS = (operator.attrgetter(a) for a in ("row", "score", "inputs"))
_IMPORTANCE, _MISSING = (operator.attrgetter(a) for a in ("importance", "importance_missing"))
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_UNSEEN = (None, None)  # a memo's miss: no row is None


def id_key(rows: list[Scored], column: str) -> list[Any]:
    """The stored ids in the order the docs engine breaks ties by: numbers numerically when
    every id is a whole number, else as text."""
    return _as_keys([s.row.columns.get(column, s.id) for s in rows])


def _as_keys(ids: list[Any]) -> list[Any]:
    numeric = all(isinstance(x, int) and not isinstance(x, bool) for x in ids)
    return ids if numeric else [str(x) for x in ids]


def _ranks(keys: list[Any]) -> np.ndarray:
    """Each key's position in ascending order (a stable sort: equal keys keep theirs)."""
    rank = np.empty(len(keys), np.int64)
    rank[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
    return rank


def resort_order(rows: list[Scored], scores: np.ndarray, rule: str,
                 id_column: str = "id") -> np.ndarray:
    """The positions the rows take by the one tie rule (engine.ties.score_order) over their
    ids."""
    if not rows:
        return np.empty(0, np.int64)
    rank = _ranks(id_key(rows, id_column)) if rule == "id" else None
    return score_order(scores, rule, rank)


@stage("importance_blend", "transform",
       P("weight", "float", 0.5, "w: score * ((1 - w) + w * clamp(importance, 0, 1))", 0, 1,
         effect="weight", step=0.05),
       P("default_importance", "float", 0.7, "used where no importance is stored", -1e9,
         1e9), rowwise=True)
def importance_blend(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """score * ((1 - w) + w * clamp(importance ?? default, 0, 1)), re-sorted by the tie rule.

    A stored NaN stays NaN (`??` keeps it), so at w > 0 that row scores NaN, which no min
    score keeps; at w = 0 the multiplier is exactly 1 and importance is never read."""
    out = _blended(rows, p["weight"], p["default_importance"], ctx.memo)
    score = np.fromiter(map(_SCORE, out), np.float64, len(out))
    rule = ctx.settings.get("tie_rule", "lancedb")
    roles = getattr(ctx.store, "roles", None)
    order = resort_order(out, score, rule, getattr(roles, "id", None) or "id")
    ranked = list(map(out.__getitem__, order.tolist()))
    _score_ties(ctx, ranked, "score", "their order before (a stable sort)"
                if rule == "lancedb" else "id ascending", score[order])
    return Outcome(ranked)


@columns("importance_blend")
def importance_blend_columns(ctx: Context, cols: Columns, p: dict[str, Any]
                             ) -> Columns | None:
    """The blend over columns: the same formula (`blend_scores`) over the pool's importance
    (what each row is read with), re-sorted by the same tie rule (`resort_order`'s: LanceDB's
    a stable sort, the rule by id each row's stored id as `id_key` reads it from its row)."""
    if cols.pool is None:
        return None
    pool = cols.pool
    score = blend_scores(cols.score, pool.importance[cols.at],
                         pool.missing_importance()[cols.at], p["default_importance"],
                         p["weight"])[2]
    rule = ctx.settings.get("tie_rule", "lancedb")
    rank = None
    if rule == "id":
        roles = getattr(ctx.store, "roles", None)
        column = getattr(roles, "id", None) or "id"
        stored = pool.columns.get(column)  # a row's columns are the pool's (`_read_rows`)
        ids = list(map(stored.__getitem__, cols.at.tolist())) if stored is not None \
            else cols.ids()
        rank = _ranks(_as_keys(ids))
    return cols.order(score_order(score, rule, rank), score)


# the question's memo (Context.memo) keeps, under "blend", (weight, default importance) ->
# id(row in) -> (row in, row out): each row's blend under those parameters, made once. A live
# over-fetch tick hands the blend the very rows it blended at the last depth (the fetch's
# candidates are kept per pool and the stages before pass them on), so only the rows new to
# the deeper pool are blended again; a sweep's cells and its safe depth's runs at one weight do
# the same. A row out is a function of its row in and the two parameters alone, and an entry
# holds its row in, so its id names that object while it lives. It goes with the question's
# runs; past BLENDED_ROWS_MAX rows it starts again.
BLENDED_ROWS_MAX = 20_000


def _blended(rows: list[Scored], w: float, default: float,
             memo: dict[str, Any] | None) -> list[Scored]:
    """Each row re-scored by the blend (its importance and multiplier added to its inputs),
    in the order given; rows the question's runs blended before under (w, default) are the
    same objects again (none without a memo)."""
    if memo is None:
        return _blend(rows, w, default)
    kept = memo.setdefault("blend", {})
    if memo.get("blend_rows", 0) > BLENDED_ROWS_MAX:
        kept.clear()
        memo["blend_rows"] = 0
    table = kept.setdefault((float(w), float(default)), {})
    pairs = list(map(table.get, map(id, rows), repeat(_UNSEEN)))
    # a row blended before is the very row its entry holds (an id alone may be reused)
    seen = list(map(operator.is_, map(_FIRST, pairs), rows))
    if all(seen):
        return list(map(_SECOND, pairs))
    new = list(compress(range(len(rows)), map(operator.not_, seen)))
    ins = rows if len(new) == len(rows) else list(map(rows.__getitem__, new))
    made = _blend(ins, w, default)
    table.update(zip(map(id, ins), zip(ins, made, strict=True), strict=True))
    memo["blend_rows"] = memo.get("blend_rows", 0) + len(ins)
    if len(new) == len(rows):
        return made
    out = list(map(_SECOND, pairs))
    for i, s in zip(new, made, strict=True):
        out[i] = s
    return out


def _blend(rows: list[Scored], w: float, default: float) -> list[Scored]:
    """The blend of each row, made now (a column at a time)."""
    held = list(map(_ROW, rows))
    base = np.array(list(map(_SCORE, rows)), np.float64)
    imp = np.array(list(map(_IMPORTANCE, held)), np.float64)
    missing = np.array(list(map(_MISSING, held)), bool)
    used, mult, score = blend_scores(base, imp, missing, default, w)
    added = zip(zip(repeat("importance"), used.tolist()),
                zip(repeat("multiplier"), mult.tolist()), strict=True)
    return list(map(scored, held, score.tolist(), map(operator.add, map(_INPUTS, rows), added)))


def _score_ties(ctx: Context, rows: list[Scored], measure: str, order: str,
                values: np.ndarray | None = None) -> None:
    """Groups of equal scores in this stage's list, and whether one straddles the limit;
    `values`: the rows' scores, where known."""
    if values is None:
        values = np.array(list(map(_SCORE, rows)), np.float64)
    cut = min(ctx.limit, len(rows))
    for s, e, end in tied_runs(values, len(rows), cut):
        ids = tuple(r.id for r in rows[s:e])
        ctx.ties.append(Tie(stage=ctx.stage, ids=ids, value=float(values[s]), measure=measure,
                            cut=ctx.limit, beyond=end - e, arbitrary=False,
                            at_cut=s < cut < end, members=ids, order=order))
