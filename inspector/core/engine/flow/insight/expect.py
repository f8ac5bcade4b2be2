"""Expected rows over any pipeline: where the row fell and why, and the smallest change that
brings it back, with what that change does to the rest of the results. Each parameter that
can keep more rows is searched over its range for the smallest value that returns the row
(`search.smallest`: every value tried was run, through the one fetch cache); weights are
tried on their grid, nearest first."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.insight.diagnosis import (
    MAX_RUNS,
    PROBE_DEPTH,
    _current,
    candidates,
    group,
    own_param,
    widenable,
)
from inspector.core.engine.flow.insight.search import (
    Budget,
    Found,
    first_reaching,
    helpful,
    scan,
    smallest,
)
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.rows import find_drop
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import NO_CHANGE, Change, Runs


@dataclass(frozen=True)
class Fall:
    stage: str | None  # None: returned
    code: str  # returned | not_fetched | a Drop code
    detail: dict[str, Any]


def where_dropped(t: FlowTrace, rid: str) -> Fall:
    final = t.final.ids
    if rid in final:
        return Fall(None, "returned", {"rank": final.index(rid) + 1})
    seen = False
    leg_drop: Fall | None = None
    for st in t.stages:
        if st.role == "fetch":
            if rid in st.ids:
                seen = True
            else:
                d = find_drop(st.dropped, rid)
                if d is not None and leg_drop is None:
                    leg_drop = Fall(st.name, d.code, dict(d.detail))
            continue
        if st.role == "query" or not seen:
            continue
        if rid in [s.id for s in st.rows_in] and rid not in st.ids:
            d = find_drop(st.dropped, rid)
            return Fall(st.name, d.code if d else "dropped", dict(d.detail) if d else {})
    if leg_drop is not None and not seen:
        return leg_drop
    first = next((s.name for s in t.stages if s.role == "fetch"), None)
    return Fall(first, "not_fetched", {"why": "not among the rows any leg asked the store for "
                                              "(ranked past the leg's depth, out of scope, "
                                              "or not matched)"})


@dataclass(frozen=True)
class Barrier:
    """A scope filter no change of the pipeline's parameters gets past: the stage, the rule
    its scope rule set for the scopes asked, and the columns the rule reads."""

    stage: str
    rule: Any  # scope.ScopeSpec
    columns: tuple[str, ...]
    # only the scope rule and the pool source's fetch (which drops no row) come before it: a
    # row the rule excludes falls there, fetched or not, whatever else it is
    first: bool = False


# the roles whose stages bring rows in (a fetch, a fusion of the fetches' legs); every other
# stage keeps some of the rows it is handed
_BRINGS_ROWS = ("fetch", "fusion")


def scope_barrier(stages: Sequence[tuple[str, str, str, dict[str, Any]]],
                  asked: tuple[str, ...] | None, roles: Any) -> Barrier | None:
    """The route's scope filter (`stages`: name, kind, role, resolved parameters, in order)
    when it drops every row outside the asked scope whatever the parameters: a `scope_filter`
    applying the rule of the one `scope_rule` before it, an active rule, and no stage after it
    that brings rows in. None otherwise (or when the rule would be refused: the run says
    why). The rule is the stage's own (`scoping.rule_spec`), applied to one row by the
    filter's own evaluation (`outside_scope`)."""
    from inspector.core.engine import scope as scopes
    from inspector.core.engine.flow.stages.scoping import rule_spec
    from inspector.core.errors import InspectorError

    kinds = [k for _, k, _, _ in stages]
    if "scope_filter" not in kinds:
        return None
    at = kinds.index("scope_filter")
    rules = [i for i, k in enumerate(kinds[:at]) if k == "scope_rule"]
    if len(rules) != 1 or any(r in _BRINGS_ROWS for _, _, r, _ in stages[at + 1:]):
        return None
    try:
        rule = rule_spec(asked, stages[rules[0]][3])
        if not rule.active:
            return None
        return Barrier(stages[at][0], rule, tuple(scopes.scope_columns(roles, rule)),
                       all(k in ("scope_rule", "lancedb_pool") for k in kinds[:at]))
    except InspectorError:
        return None


def trace_barrier(t: FlowTrace, roles: Any) -> Barrier | None:
    """`scope_barrier` of the stages a run went through."""
    return scope_barrier([(s.name, s.kind, s.role, s.params) for s in t.stages], t.scopes,
                         roles)


def outside_scope(barrier: Barrier, roles: Any, values: Mapping[str, Any]) -> Fall | None:
    """Where a row with these values (its columns the rule reads) falls when the barrier's
    rule excludes it: the scope filter, in the words it drops a row with; None: inside."""
    from inspector.core.engine import scope as scopes

    ok, why, had = scopes.evaluate(barrier.rule, roles,
                                   {c: [values.get(c)] for c in barrier.columns}, 1)
    if ok[0]:
        return None
    return Fall(barrier.stage, "out_of_scope", {"rule": why[0], "scope": had[0]})


OUTSIDE = ("the row is outside the asked scope ({rule}): the scope filter drops it wherever "
           "it is fetched, so no change of the pipeline's parameters returns it (asked in a "
           "scope that holds it, it can be)")


def explain(t: FlowTrace, rid: str, runs: Runs, max_runs: int = MAX_RUNS,
            values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Where the row fell and why, and the smallest change of each parameter that returns it:
    the system's own parameters first (depths, flags, thresholds, index knobs by search;
    weights on their grid; the limit), then a what-if depth. Each change was run. A row
    outside the asked scope (the scope filter dropped it, or the rule excludes it where it
    was not fetched: its columns read from the store, or `values` when the caller read them)
    gets no search: no change returns it."""
    fall = where_dropped(t, rid)
    barrier = trace_barrier(t, runs.store.roles) \
        if fall.code in ("not_fetched", "out_of_scope") else None
    if barrier is not None and fall.code == "not_fetched":
        got = values if values is not None and all(c in values for c in barrier.columns) \
            else runs.store.columns_of(rid, barrier.columns) \
            if hasattr(runs.store, "columns_of") else None
        if got is not None and all(c in got for c in barrier.columns):  # each one read
            fall = outside_scope(barrier, runs.store.roles, got) or fall
    out: dict[str, Any] = {"id": rid, "dropped_at": fall.stage, "reason": fall.code,
                           "detail": fall.detail, "fix": None, "alternatives": []}
    if fall.code == "returned":
        out["rank"] = fall.detail["rank"]
        return out
    if barrier is not None and fall.code == "out_of_scope" and fall.stage == barrier.stage:
        out["tried"] = 0
        out["no_fix"] = OUTSIDE.format(rule=fall.detail.get("rule", "its rule"))
        return out
    names = [s.name for s in t.stages]
    fetches = [s.name for s in t.stages if s.role == "fetch"]
    upto = fall.stage if fall.stage in names and fall.code != "not_fetched" else \
        (fetches[-1] if fetches else names[-1])
    goal: Callable[[FlowTrace], bool] = lambda x: rid in x.final.ids  # noqa: E731
    # what a change must move to matter: the stages' counts and notes, and which rows are
    # final (an index knob changes which rows, not how many: counts alone stopped its search
    # after two values, and a row the index lost needing refine_factor 3 got no knob)
    sig: Callable[[FlowTrace], Any] = lambda x: (tuple(x.final.ids),  # noqa: E731
                                                 tuple((len(s.rows), s.note)
                                                       for s in x.stages))
    budget = Budget(runs, max_runs)
    found: list[tuple[str, Found]] = []
    wide = widenable(t, t.stages[-1].name) + [t.stages[-1].name] \
        if kind_of(t.stages[-1].kind).widens else widenable(t, t.stages[-1].name)
    # no deeper or differently placed fetch returns it (a depth, a prefilter, the limit, a
    # what-if depth): proved from the run, none of those run
    proof = depth_free(t, fall, wide)
    if proof is not None:
        out["proved"] = [proof]
    for key, decl, cur, _stage in candidates(t, upto):
        if proof is not None and decl.effect in DEPTH_ONLY:
            continue
        got = smallest(runs, key, decl, cur, goal, sig, budget)
        if got is not None:
            found.append(("own" if own_param(t, key) else "what_if", got))
    for key, decl, cur, _stage in candidates(t, upto, ("weight",)):
        got = scan(runs, key, decl, float(cur), goal, budget, decl.step or 0.05)
        if got is not None:
            found.append(("own" if own_param(t, key) else "what_if", got))
    limit = _limit_fix(t, runs, goal, budget) if proof is None else None
    if limit is not None:
        found.append(("own", limit))
    if not found:  # one change is not enough: a flag turned on, then the rest on top of it
        found += _on_a_flag(t, upto, runs, goal, sig, budget)
    if wide and proof is None:  # what-if: every fetch and cut deeper (a longer list too)
        rows = int(t.store.get("rows") or PROBE_DEPTH)
        ladder = list(range(t.limit, max(t.limit, min(rows, PROBE_DEPTH)) + 1))
        got = first_reaching(ladder, lambda d: Change(widen=tuple((w, d) for w in wide)),
                             runs, goal, lambda x: None, budget)
        if got is not None:
            change = Change(widen=tuple((w, ladder[got[0]]) for w in wide))
            found.append(("what_if", Found(change, got[1], float(ladder[got[0]]))))
    if t.store.get("index") is not None and not runs.base_change.exact:
        # what-if: the same stages searching exactly (one run, the diagnosis's own: a row the
        # index lost that no knob of the system's brings back still has its fix)
        exact = runs.try_run(Change(exact=True))
        if exact is not None and goal(exact):
            found.append(("what_if", Found(Change(exact=True), exact, 1.0)))
    found.sort(key=lambda f: (f[0] != "own", f[1].size))
    changes = [_change(t, kind, f, rid) for kind, f in found]
    out["fix"] = changes[0] if changes else None
    out["alternatives"] = changes[1:6]
    out["tried"] = runs.count
    if not changes:
        out["no_fix"] = ("no change of one parameter (each searched over its range), of the "
                         "limit, nor a deeper" + (" or exact" if t.store.get("index") is not None
                                                  else "") + " search returns this row")
    return out


# the parameter effects that change only which rows are fetched or kept, never a row's score
DEPTH_ONLY = ("depth", "prefilter")


def depth_free(t: FlowTrace, fall: Fall, wide: Sequence[str]) -> str | None:
    """Why no deeper or differently placed fetch returns a row, when the run proves it (None:
    it does not): no change of a depth or prefilter parameter (DEPTH_ONLY) of the stages up
    to the one that dropped it, of the limit, nor a what-if depth.

    The row came to stage S and S dropped it. Every stage up to S is row-wise under its
    parameters (`StageKind.rowwise`): its fetch scores the row by itself (a vector leg:
    1 / (1 + its own distance)), and each stage after keeps or drops it, and scores it, from
    the row and its score alone, whatever the other rows and whatever depth is asked. S is
    none of the stages a what-if deepens. So in a run with any of those changed the row either
    never comes to S or comes with the same score and is dropped there again. A vector index
    (its search not exact) is not proved from: which rows a deeper approximate search
    returns, and at what distance, is its own."""
    names = [st.name for st in t.stages]
    if fall.stage is None or fall.stage not in names or fall.stage in wide \
            or fall.code == "not_fetched":
        return None
    if t.store.get("index") is not None and not t.exact:
        return None
    upto = t.stages[:names.index(fall.stage) + 1]
    if not any(st.role == "fetch" for st in upto):
        return None
    if not all(kind_of(st.kind).is_rowwise(st.params) for st in upto):
        return None
    return (f"no deeper search returns it (no depth, prefilter or limit): every stage up to "
            f"{fall.stage} decides each row by itself, so at any depth it comes to "
            f"{fall.stage} with the same score and is dropped there ({fall.code})")


def _limit_fix(t: FlowTrace, runs: Runs, goal: Callable[[FlowTrace], bool],
               budget: Budget, base: Change = NO_CHANGE) -> Found | None:
    lo, hi = t.limit + 1, t.spec.limit.max
    if lo > hi:
        return None
    ladder = list(range(lo, min(hi, lo + 10_000) + 1))
    make = lambda n: Change(base.sets, base.widen, base.exact, n)  # noqa: E731
    got = first_reaching(ladder, make, runs, goal, lambda x: None, budget)
    if got is None:
        return None
    return Found(make(ladder[got[0]]), got[1], 1.0 + (ladder[got[0]] - t.limit) / t.limit)


def _on_a_flag(t: FlowTrace, upto: str, runs: Runs, goal: Callable[[FlowTrace], bool],
               sig: Callable[[FlowTrace], Any], budget: Budget) -> list[tuple[str, Found]]:
    """Each helpful flag (a prefilter, an over-fetch switch) turned, then the limit or one
    parameter's smallest change on top of it, or the stage's depths together."""
    out: list[tuple[str, Found]] = []
    cands = candidates(t, upto)
    for key, decl, cur, _stage in cands:
        want = helpful(decl, cur) if decl.type == "bool" else None
        if want is None:
            continue
        base = Change().with_sets(**{key: want})
        got = _limit_fix(t, runs, goal, budget, base)
        for k2, d2, c2, _ in cands:
            if got is not None:
                break
            if k2 != key and d2.type != "bool":
                got = smallest(runs, k2, d2, c2, goal, sig, budget, base)
        if got is None:
            rest = [c for c in cands if c[0] != key]
            more = group(t, rest, runs, goal, sig, budget) if rest else None
            got = None if more is None else Found(base.with_sets(**dict(more.change.sets)),
                                                  more.trace, more.size + 1.0)
        if got is not None:
            keys = [k for k, _ in got.change.sets]
            out.append(("own" if all(own_param(t, k) for k in keys) else "what_if", got))
    return out


def _change(t: FlowTrace, kind: str, f: Found, rid: str) -> dict[str, Any]:
    ids = f.trace.final.ids
    base = t.final.ids
    sets = dict(f.change.sets)
    first = next(iter(sets.items()), None)
    stage, _, param = (first[0].partition(".") if first else (None, "", None))
    if f.change.limit is not None:
        stage, param = None, "limit"
    frm = t.limit if param == "limit" else _current(t, first[0]) if first else None
    to = f.change.limit if param == "limit" else first[1] if first else None
    return {"stage": stage or None, "param": param or None, "from": frm, "to": to,
            "kind": kind, "argv": f.change.argv(), "widen": dict(f.change.widen),
            "change": f.size, "rank": ids.index(rid) + 1,
            "gained": [i for i in ids if i not in base],
            "lost": [i for i in base if i not in ids]}
