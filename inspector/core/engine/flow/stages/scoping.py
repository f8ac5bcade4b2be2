"""The classic pipeline's scope stages: the scope rule (which scope the legs and the
post-filter apply, and whether the fetch pushes it down) and the scope post-filter, with the
memos that decide each row's verdict once (per row, per pool). The fetch between them is
`classic.py`.
"""

from __future__ import annotations

import operator
import weakref
from itertools import compress, repeat
from typing import Any

import numpy as np

from inspector.core.engine import pools
from inspector.core.engine import scope as scopes
from inspector.core.engine.flow.columns import Columns, same_rows
from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import columns, stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Row, Scored, drop
from inspector.core.engine.flow.stages.classic import _read, _Verdicts
from inspector.core.engine.pool import Pool
from inspector.core.errors import InspectorError

# a column of a list of rows at once (map, not a Python step per row)
_ID = operator.attrgetter("id")


# ------------------------------------------------------------------------------ the scope rule

def _scope_of(ctx: Context) -> str | None:
    return _one_scope(ctx.scopes)


def _one_scope(asked: tuple[str, ...] | None) -> str | None:
    if asked is None:
        return None
    if len(asked) != 1:
        raise InspectorError("This pipeline takes one scope (or none): give --scope once"
                             + ("; an empty list is not a scope it knows." if not asked
                                else "."))
    return asked[0]


@stage("scope_rule", "query",
       P("strategy", "str", "repo_prefix", "how rows are matched to the scope",
         live=False, choices=scopes.STRATEGIES),
       P("strategy_unscoped", "str", "", "the rule when no scope (or global) is given; empty: "
         "strategy", live=False),
       P("column", "str", "", "the column a column rule compares (empty: the scope or agent "
         "column found)", live=False),
       P("map", "table", {}, "for strategy map: {scope: [repo or path prefix, ...]}",
         live=False),
       P("pushdown", "bool", False, "the scope also goes into each leg as a LanceDB prefilter "
         "(an exact repo or column allowlist) before its top-k cut; the post-filter stays as "
         "defence in depth", live=False, effect="prefilter"), rowwise=True)
def scope_rule(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """The scope the legs and the post-filter apply, and whether it is pushed down."""
    scope = _scope_of(ctx)
    scoped = scope is not None and not scopes.is_global(scope)
    spec = rule_spec(ctx.scopes, p)
    strategy = spec.strategy
    ctx.request = {**ctx.request, "scope_spec": spec, "scoped": scoped,
                   "pushdown": bool(p["pushdown"])}
    if not spec.active:
        note = "unscoped: every row matches"
    else:
        note = f"{strategy} on {scope!r}" + (", pushed down" if p["pushdown"] else
                                             ", post-filter only")
    return Outcome(rows, note=note)


columns("scope_rule")(same_rows(scope_rule))


def rule_spec(asked: tuple[str, ...] | None, p: dict[str, Any]) -> scopes.ScopeSpec:
    """The rule a scope rule stage with parameters `p` sets for the scopes asked (what its
    scope filter applies): the one place it is made, so an explanation can apply it to a row
    the run never fetched (`insight.expect`). InspectorError as the stage raises it."""
    scope = _one_scope(asked)
    scoped = scope is not None and not scopes.is_global(scope)
    strategy = p["strategy_unscoped"] if not scoped and p["strategy_unscoped"] \
        else p["strategy"]
    if strategy not in scopes.STRATEGIES:
        raise InspectorError(f"scope_rule.strategy_unscoped must be one of "
                             f"{', '.join(scopes.STRATEGIES)}, not {strategy!r}.")
    smap = scopes.parse_scope_map(p["map"], "scope_rule.map") if p["map"] else {}
    return scopes.make_scope(scope, strategy, smap, p["column"] or None)


# ------------------------------------------------------------------------------ the scope filter

# (spec, roles) -> id(row) -> (a weak reference to the row, its Drop or None): a Row is never
# changed and a pool's rows are read once (_read_rows), so a live re-rank decides each row's
# scope once; the reference still naming the row proves the id was not reused
_VERDICTS: dict[Any, dict[int, tuple[weakref.ref[Row], Drop | None]]] = {}
_VERDICTS_MAX = 50_000  # rows remembered across every (spec, roles); past it, start again


def _scope_verdicts(spec: scopes.ScopeSpec, roles: Any, rows: list[Row]) -> list[Drop | None]:
    """Per row, None in scope, else its Drop with the rule's words and the value it had."""
    try:
        memo = _VERDICTS.setdefault((spec, roles), {}) if spec.active else None
    except TypeError:  # an unhashable setting: decide every row now
        memo = None
    known = memo.get if memo is not None else (lambda _k: None)
    out: list[Drop | None] = []
    todo: list[int] = []
    for i, row in enumerate(rows):
        hit = known(id(row))
        if hit is not None and hit[0]() is row:
            out.append(hit[1])
        else:
            out.append(None)
            todo.append(i)
    if todo:
        cols = scopes.scope_columns(roles, spec) if spec.active else []
        values = {c: [rows[i].columns.get(c) for i in todo] for c in cols}  # what it reads
        ok, why, had = scopes.evaluate(spec, roles, values, len(todo))
        if memo is not None and \
                sum(map(len, list(_VERDICTS.values()))) + len(todo) > _VERDICTS_MAX:
            _VERDICTS.clear()
            memo = _VERDICTS.setdefault((spec, roles), {})
        for i, good, rule, value in zip(todo, ok, why, had, strict=True):
            # rows.drop: a deep pool's scope filter drops thousands of rows a query
            gone = None if good else drop(rows[i].id, "out_of_scope",
                                          (("rule", rule), ("scope", value)))
            out[i] = gone
            if memo is not None:
                memo[id(rows[i])] = (weakref.ref(rows[i]), gone)
    return out


def _pool_verdicts(pool: Pool, spec: scopes.ScopeSpec, roles: Any) -> _Verdicts:
    """The post-filter's verdict on every row of the pool (in scope, the rule's words, the
    value it had; each out-of-scope row's Drop once made), decided once a rule over the
    pool's own columns: the very values its rows were read with (`_read_rows`). The pool's
    own verdict where the rule is the one it was fetched with. TypeError: an unhashable
    setting."""
    memo = _read(pool)[3]
    got = memo.get((spec, roles))
    if got is None:
        as_dict = getattr(roles, "as_dict", None)
        if spec == pool.scope and as_dict is not None and as_dict() == pool.roles \
                and len(pool.scope_rule) == len(pool.scope_value) == pool.size:
            ok, why, had = pool.in_scope, pool.scope_rule, pool.scope_value
        else:
            cols = scopes.scope_columns(roles, spec) if spec.active else []
            ok, why, had = scopes.evaluate(spec, roles, {c: pool.columns[c] for c in cols
                                                         if c in pool.columns}, pool.size)
        if len(memo) >= _POOL_RULES_MAX:
            memo.clear()
        got = memo[(spec, roles)] = (np.asarray(ok, bool), why, had, {})
    return got


_POOL_RULES_MAX = 4  # scope rules remembered a pool (a pool is fetched for one scope)


# (rule, roles, the fetch outcome handed in, or the ids of the candidates in) -> (what the key
# names, its number of rows, the filter's outcome): a truth or a grid cell that changes only a
# later stage (a weight, a threshold) passes the fetch's very candidates again (the runner's
# fetch cache hands the same outcome; `_candidates` keeps them per shape), and the filter's
# answer is theirs. The entry holds what its key names, so while it lives the ids name the
# same objects. Two deep pools' worth of rows at most (a truth's list and the cells' between
# its runs), so a sweep's memory stays bounded by its pool whatever the number of queries
# (test_sweep_memory).
_FILTERED = pools.Lru(16, 2 * pools.CACHE_ROWS, weigh=lambda got: got[1])


@stage("scope_filter", "filter", store_roles=True, rowwise=True)
def scope_filter(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep the rows the scope rule matches (post-filter: lower-cased repo and path, exact
    columns); counters as the docs engine reports them."""
    spec = ctx.request.get("scope_spec") or scopes.ScopeSpec()
    given = ctx.handed if ctx.handed is not None and len(ctx.handed.rows) == len(rows) \
        else None
    named: Any = given if given is not None else tuple(rows)
    key: Any = (spec, ctx.store.roles, id(given) if given is not None else tuple(map(id, rows)))
    try:
        hit = _FILTERED.get(key)
    except TypeError:  # an unhashable setting: filter now, remember nothing
        hit = key = None
    if hit is not None:
        return _copy(hit[2])
    out = _scope_filter(spec, ctx.store.roles, rows, None if given is None else given.source)
    if key is not None:
        _FILTERED.put(key, (named, len(rows), out))
    return _copy(out)


@columns("scope_filter")
def scope_filter_columns(ctx: Context, cols: Columns, p: dict[str, Any]) -> Columns | None:
    """The post-filter over columns: the pool's verdicts under the rule (`_pool_verdicts`,
    which the rows' filter reads too)."""
    if cols.pool is None:
        return None
    spec = ctx.request.get("scope_spec") or scopes.ScopeSpec()
    try:
        ok = _pool_verdicts(cols.pool, spec, ctx.store.roles)[0]
    except TypeError:  # an unhashable setting: the rows decide
        return None
    return cols.keep(ok[cols.at], _filter_note(spec))


def _copy(out: Outcome) -> Outcome:
    """A remembered outcome as a caller may keep it: the runner and later stages own the
    lists they are given."""
    return Outcome(list(out.rows), out.dropped, out.note, out.deferred, dict(out.facts))


def _scope_filter(spec: scopes.ScopeSpec, roles: Any, rows: list[Scored],
                  source: Any = None) -> Outcome:
    """`source`: the fetch's (pool, each row's position in it), whose verdicts answer."""
    pool = source[0]() if source is not None and rows else None
    try:
        verdicts = _pool_verdicts(pool, spec, roles) if pool is not None else None
    except TypeError:  # an unhashable setting: each row decided now
        verdicts = None
    if verdicts is not None:
        keep, dropped = _by_pool(verdicts, source[1], rows)
    else:
        decided = _scope_verdicts(spec, roles, [s.row for s in rows])
        keep = [s for s, gone in zip(rows, decided, strict=True) if gone is None]
        dropped = [gone for gone in decided if gone is not None]
    facts = {"rawCandidates": len(rows), "scopedCandidates": len(keep),
             "filteredByScope": len(rows) - len(keep)}
    return Outcome(keep, tuple(dropped), note=_filter_note(spec), facts=facts)


def _filter_note(spec: scopes.ScopeSpec) -> str:
    return "unscoped: nothing filtered" if not spec.active else \
        f"{spec.strategy} on {spec.scope!r}"


def _by_pool(verdicts: _Verdicts, at: np.ndarray, rows: list[Scored]
             ) -> tuple[list[Scored], list[Drop]]:
    """The rows kept and the Drops, in order, of candidates made from pool rows `at`."""
    ok, why, had, drops = verdicts
    inside = ok[at]
    keep = list(map(rows.__getitem__, np.flatnonzero(inside).tolist()))
    out = np.flatnonzero(~inside)
    where = at[out].tolist()
    dropped: list[Drop | None] = list(map(drops.get, where))
    new = list(compress(range(len(where)), map(operator.is_, dropped, repeat(None))))
    if new:  # rows.drop: a deep pool's scope filter drops thousands of rows, made by map
        i_new = list(map(where.__getitem__, new))
        shared: dict[Any, Any] = {}  # one detail tuple per (rule, value): a few a pool
        details = [shared.get(k) or shared.setdefault(k, (("rule", k[0]), ("scope", k[1])))
                   for k in zip(map(why.__getitem__, i_new), map(had.__getitem__, i_new),
                                strict=True)]
        made = list(map(drop, map(_ID, map(rows.__getitem__, out[new].tolist())),
                        repeat("out_of_scope"), details))
        drops.update(zip(i_new, made, strict=True))
        if len(new) == len(dropped):
            return keep, made
        for n, gone in zip(new, made, strict=True):
            dropped[n] = gone
    return keep, dropped  # type: ignore[return-value]
