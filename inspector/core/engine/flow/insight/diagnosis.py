"""The diagnosis of any pipeline's run, read from what its stages declare: which stage left
fewer rows than the limit and why (a filter after a cut, a threshold, a window, the index),
where the first row that would pass sits in the ranking before the cut, and the smallest
changes that return a full page. The system's own parameters are tried first, then what-if
changes to the pipeline, named as such; every fix was run before it is offered and says what
it returns, with the command-line arguments that apply it (`Fix.to_json()["argv"]`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.insight.search import (
    Budget,
    Found,
    extreme,
    first_reaching,
    smallest,
)
from inspector.core.engine.flow.registry import ParamDecl, kind_of
from inspector.core.engine.flow.runner import FlowTrace, StageRun
from inspector.core.engine.flow.runs import Change, Runs
from inspector.core.engine.pools import PROBE_DEPTH

MAX_RUNS = 160  # pipeline runs one diagnosis may make (memoised runs are free)
MAX_FIXES = 6
FIX_EFFECTS = ("depth", "prefilter", "threshold", "gate", "index")

# every outcome code: its title (the banner's, the receipt's), in one place
TITLES = {
    "ok": "Looks fine",
    "empty_table": "The table is empty",
    "scope_denies_all": "An empty scope list denies everything",
    "query_or_index": "No candidates: a query or index problem",
    "filter_after_cut": "Starved: a filter runs after a cut",
    "threshold": "Starved: rows fall below a threshold",
    "window": "Starved: a window cut them",
    "few_matches": "Fewer rows match than the limit",
    "dropped": "Starved: a stage dropped rows",
    "lost_to_index": "Lost to the index",
}


@dataclass(frozen=True)
class Fix:
    """A change that was run: what it is, whether it is the system's own parameter or a what-if
    change to the pipeline, and what it returned."""

    label: str
    kind: str  # own | what_if
    change: Change
    returns: int
    ids: tuple[str, ...]
    full: bool  # a full page (the limit's worth of rows)

    @property
    def argv(self) -> list[str]:
        """The extra command-line arguments that apply this fix to the same query."""
        return self.change.argv()

    def to_json(self) -> dict[str, Any]:
        c = self.change
        return {"label": self.label, "kind": self.kind, "argv": self.argv,
                "changes": {k: list(v) if isinstance(v, tuple) else v for k, v in c.sets},
                "widen": dict(c.widen), "exact": c.exact,
                "returns": {"count": self.returns, "ids": list(self.ids),
                            "full_page": self.full}}


@dataclass(frozen=True)
class Diagnosis:
    code: str
    message: str
    stage: str | None = None
    kind: str | None = None
    first_at: int | None = None  # the depth at which the first row that passes comes in
    page_at: int | None = None  # the depth at which a full page does
    fixes: tuple[Fix, ...] = ()
    tried: int = 0  # pipeline runs the fix search made

    @property
    def title(self) -> str:
        return TITLES[self.code]

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "title": self.title, "message": self.message,
                "stage": self.stage, "kind": self.kind, "first_at": self.first_at,
                "page_at": self.page_at, "fixes": [f.to_json() for f in self.fixes],
                "tried": self.tried}


# ---------------------------------------------------------------------------- where it starved

def main_line(t: FlowTrace) -> list[StageRun]:
    """The stages whose output is the candidate list the next stage reads: every stage but
    query stages and the legs a fusion combines."""
    out = []
    stages = [s for s in t.stages if s.role != "query"]
    for i, st in enumerate(stages):
        nxt = stages[i + 1] if i + 1 < len(stages) else None
        if st.role == "fetch" and nxt is not None and nxt.role in ("fetch", "fusion"):
            continue  # a leg: the fusion's list is the line
        out.append(st)
    return out


def starving(t: FlowTrace) -> StageRun | None:
    """The first stage of the main line that leaves fewer rows than the limit."""
    return next((st for st in main_line(t) if len(st.rows) < t.limit), None)


def upstream(t: FlowTrace, stage: str) -> list[StageRun]:
    """The stages up to and including `stage`, in run order."""
    names = [s.name for s in t.stages]
    return list(t.stages[: names.index(stage) + 1])


def widenable(t: FlowTrace, stage: str) -> list[str]:
    """The stages up to `stage` a what-if can deepen: fetches and the cuts before it (and
    `stage` itself when it is a fetch, whose filter runs after its own cut)."""
    out = []
    for st in upstream(t, stage):
        if not kind_of(st.kind).widens:
            continue
        if st.name == stage and st.role != "fetch":
            continue
        out.append(st.name)
    return out


def _filters(st: StageRun) -> bool:
    """A fetch that filters after its own cut: it dropped rows it read, or its filter is a
    LanceDB post-filter."""
    return bool(st.dropped) or st.params.get("prefilter") is False


# ---------------------------------------------------------------------------- the diagnosis

def diagnose(t: FlowTrace, runs: Runs | None = None, index_lost: bool = False,
             max_runs: int = MAX_RUNS) -> Diagnosis:
    """The run read stage by stage; with `runs`, the probe and the fixes too (each run)."""
    if t.scopes == ():
        return Diagnosis("scope_denies_all", "The scope list is empty, which denies "
                         "everything: the system returns nothing and makes no search.")
    if t.store.get("rows") == 0:
        return Diagnosis("empty_table", "The table is empty: there is nothing to retrieve.")
    if index_lost:
        return _index(t, runs, max_runs)
    n = len(t.final.rows)
    s = starving(t)
    if s is None:
        return Diagnosis("ok", f"{_n(n)} through the {t.route} route.")
    if runs is None:
        return _cause(t, s, None)
    return _with_fixes(t, s, runs, Budget(runs, max_runs))


def _n(n: int) -> str:
    return f"{n} result" if n == 1 else f"{n} results"


def _cause(t: FlowTrace, s: StageRun, probe: FlowTrace | None) -> Diagnosis:
    """The code and the sentence, from the stage, what it declares and (when run) the probe:
    the same stages with every fetch and cut before the starving one searched deep."""
    lost = len(s.rows_in) - len(s.rows) if s.role != "fetch" else len(s.dropped)
    where = f"stage {s.name} ({s.kind})"
    head = f"{_n(len(t.final.rows))} of limit {t.limit}: {where}"
    decls = kind_of(s.kind).params
    if s.role == "cut" and any(d.effect == "threshold" for d in decls) and any(
            d.code == "below_min_score" for d in s.dropped):
        return Diagnosis("threshold", f"{head} dropped {lost} row(s) scoring below its "
                         f"threshold.", s.name, s.kind)
    if s.kind == "window":
        return Diagnosis("window", f"{head} kept only the first {len(s.rows)} rows.",
                         s.name, s.kind)
    cut_before = bool(widenable(t, s.name))
    filtered = t.scopes is not None or bool(t.spec.settings.get("where"))
    if s.role == "fetch" and not s.rows and not _filters(s) and not filtered and \
            (probe is None or not probe.final.rows):
        return Diagnosis("query_or_index", f"No row came back from {where}: check the query, "
                         "the full-text index, or the filter.", s.name, s.kind)
    if probe is not None and len(probe.final.rows) <= len(t.final.rows):
        return Diagnosis("few_matches", f"{head} keeps fewer rows than the limit, and no "
                         f"deeper search finds more (searched {PROBE_DEPTH:,} deep or the whole "
                         f"table): fewer rows match.", s.name, s.kind)
    if cut_before and (s.role == "filter" or s.role == "fetch" and _filters(s)
                       or probe is not None):
        after = "its own top-k cut" if s.role == "fetch" else "the cut before it"
        return Diagnosis("filter_after_cut", f"{head} filters after {after}, so rows it would "
                         f"pass were cut before it saw them.", s.name, s.kind)
    return Diagnosis("dropped", f"{head} dropped {lost} row(s).", s.name, s.kind)


def _with_fixes(t: FlowTrace, s: StageRun, runs: Runs, budget: Budget) -> Diagnosis:
    wide = widenable(t, s.name)
    rows = int(t.store.get("rows") or PROBE_DEPTH)
    deepest = min(rows, PROBE_DEPTH)
    probe = runs.try_run(Change(widen=tuple((w, deepest) for w in wide))) if wide else None
    base = _cause(t, s, probe)
    n = len(t.final.rows)
    page: Callable[[FlowTrace], bool] = lambda x: len(x.final.rows) >= t.limit  # noqa: E731
    more: Callable[[FlowTrace], bool] = lambda x: len(x.final.rows) > n  # noqa: E731
    sig = _signature(t, s.name)
    first_at = page_at = None
    fixes: list[Fix] = []
    if probe is not None and len(probe.final.rows) > n:
        ladder = _depths(t.limit, deepest)
        make = lambda d: Change(widen=tuple((w, d) for w in wide))  # noqa: E731
        got = first_reaching(ladder, make, runs, more, lambda x: None, budget)
        first_at = ladder[got[0]] if got else None
        got = first_reaching(ladder, make, runs, page, lambda x: None, budget)
        if got is not None:
            page_at = ladder[got[0]]
    own = _own_fixes(t, s, runs, page, more, sig, budget)
    fixes += own
    fixes += _what_ifs(t, s, runs, wide, page_at, deepest, probe, budget)
    where = ""
    if first_at is not None:
        which = "first" if not n else "next"
        where = (f" The {which} row that passes comes in at depth {first_at} of the ranking "
                 f"before the cut" + (f"; a full page at depth {page_at}." if page_at else
                                      "; no depth up to "
                                      f"{deepest:,} gives a full page."))
    if base.code == "few_matches" and any(f.returns > n for f in fixes):
        where += " A setting of a filter does: see the fixes."
    return Diagnosis(base.code, base.message + where, s.name, s.kind, first_at, page_at,
                     tuple(_ranked(fixes))[:MAX_FIXES], runs.count)


def _depths(limit: int, deepest: int) -> list[int]:
    return list(range(limit, max(limit, deepest) + 1))


def _signature(t: FlowTrace, stage: str) -> Callable[[FlowTrace], Any]:
    """What a change must move to matter: what the stages up to the starving one did (their
    row counts and their own account of it, which names the depth a fetch asked for), and the
    final list."""
    names = [s.name for s in upstream(t, stage)]

    def sig(x: FlowTrace) -> Any:
        did = tuple((len(st.rows), st.note) for st in x.stages if st.name in names)
        return did, tuple(x.final.ids)

    return sig


def own_param(t: FlowTrace, key: str) -> bool:
    """True when STAGE.PARAM is a parameter the system itself exposes (PipelineSpec.own)."""
    return t.spec.own(key)[0]


def candidates(t: FlowTrace, stage: str, effects: tuple[str, ...] = FIX_EFFECTS
               ) -> list[tuple[str, ParamDecl, Any, str]]:
    """(STAGE.PARAM, declaration, current value, stage) of the parameters that can keep more
    rows, on the stages up to `stage`."""
    out = []
    indexed = t.store.get("index") is not None
    for st in upstream(t, stage):
        for decl in kind_of(st.kind).params:
            if decl.effect == "index" and not indexed:
                continue  # a flat table: no index knob changes anything
            if decl.effect in effects and decl.name in st.params:
                out.append((f"{st.name}.{decl.name}", decl, st.params[decl.name], st.name))
    return out


def _fix(t: FlowTrace, found: Found, label: str, what_if: bool = False) -> Fix:
    ids = tuple(found.trace.final.ids)
    keys = [k for k, _ in found.change.sets]
    own = not what_if and not found.change.what_if and all(own_param(t, k) for k in keys)
    return Fix(("" if own else "What-if: ") + label, "own" if own else "what_if",
               found.change, len(ids), ids[: t.limit], len(ids) >= t.limit)


def _label(t: FlowTrace, change: Change, found: FlowTrace) -> str:
    parts = []
    for key, value in change.sets:
        cur = _current(t, key)
        how = t.spec.own(key)[1]
        parts.append(f"{key} {_show(cur)} → {_show(value)}" + (f" ({how})" if how else ""))
    return f"{', '.join(parts)}: {_returns(t, found)}"


def _returns(t: FlowTrace, found: FlowTrace) -> str:
    got = len(found.final.rows)
    return f"returns {got} of {t.limit}" if got <= t.limit else \
        f"returns {got} (more than the limit of {t.limit})"


def _current(t: FlowTrace, key: str) -> Any:
    stage, _, param = key.partition(".")
    for st in t.stages:
        if st.name == stage:
            return st.params.get(param)
    return t.spec.settings.get(key)


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _own_fixes(t: FlowTrace, s: StageRun, runs: Runs, page: Callable[[FlowTrace], bool],
               more: Callable[[FlowTrace], bool], sig: Callable[[FlowTrace], Any],
               budget: Budget) -> list[Fix]:
    """Each parameter alone, then (where none alone gives a full page) two depth parameters
    of one stage together: the smallest change that gives a full page, else more rows."""
    cands = candidates(t, s.name)
    out: list[Fix] = []
    partial: list[Found] = []
    deep_enough = False  # a depth parameter alone gives a full page
    for key, decl, cur, stage in cands:
        data = _threshold_values(t, stage, decl, cur)
        found = smallest(runs, key, decl, cur, page, sig, budget, data=data)
        if found is None:
            got = smallest(runs, key, decl, cur, more, sig, budget, data=data)
            if got is not None:
                partial.append(got)
            continue
        deep_enough = deep_enough or decl.effect == "depth"
        out.append(_fix(t, found, _label(t, found.change, found.trace)))
    pair = [] if deep_enough else _pairs(t, cands, runs, page, sig, budget)
    out += pair
    paired = {k for f in pair for k, _ in f.change.sets}
    out += [_fix(t, f, _label(t, f.change, f.trace)) for f in partial
            if not {k for k, _ in f.change.sets} <= paired]
    return out


def _threshold_values(t: FlowTrace, stage: str, decl: ParamDecl, cur: Any) -> list[float]:
    """For a threshold: the values that let one more of the stage's input rows through, in
    order (each row's score, floored to the parameter's step)."""
    if decl.effect != "threshold" or not isinstance(cur, (int, float)):
        return []
    st = next(x for x in t.stages if x.name == stage)
    step = decl.step
    vals = set()
    for row in st.rows_in:
        v = row.score
        if v == v and v < cur:  # not NaN
            vals.add(_floor(v, step) if step else float(v))
    if decl.lo is not None:
        vals = {v for v in vals if v >= decl.lo}
    return sorted(vals, reverse=True)


def group(t: FlowTrace, cands: list[tuple[str, ParamDecl, Any, str]], runs: Runs,
          goal: Callable[[FlowTrace], bool], sig: Callable[[FlowTrace], Any],
          budget: Budget) -> Found | None:
    """Depth parameters of one stage together, two, then three (an over-fetch and its cap; an
    over-fetch flag, its factor and its cap): the others set to their most helpful values, this
    one's smallest change found, then each other one put back where it was if that still
    reaches the goal, else brought down to its smallest value that does. The first group that
    reaches the goal, smallest first; the result was run."""
    import itertools

    depth = sorted((c for c in cands if c[1].effect == "depth"),
                   key=lambda c: c[1].type != "bool")  # a flag that turns a depth on first
    for size in (2, 3):
        for a_key, a, a_cur, a_stage in depth:
            peers = [c for c in depth if c[0] != a_key and c[3] == a_stage]
            for others in itertools.combinations(peers, size - 1):
                found = _one_group(t, (a_key, a, a_cur), others, runs, goal, sig, budget)
                if found is not None:
                    return found
                if budget.left <= 0:
                    return None
    return None


def _one_group(t: FlowTrace, first_param: tuple[str, ParamDecl, Any],
               others: tuple[tuple[str, ParamDecl, Any, str], ...], runs: Runs,
               goal: Callable[[FlowTrace], bool], sig: Callable[[FlowTrace], Any],
               budget: Budget) -> Found | None:
    a_key, a, a_cur = first_param
    tops = {k: extreme(d, cur) for k, d, cur, _ in others}
    if any(v is None for v in tops.values()):
        return None
    first = smallest(runs, a_key, a, a_cur, goal, sig, budget, Change().with_sets(**tops))
    if first is None:
        return None
    chosen = {a_key: dict(first.change.sets)[a_key], **tops}
    found = first
    for k, d, cur, _ in [*others, (a_key, a, a_cur, "")]:
        rest = {x: v for x, v in chosen.items() if x != k}
        back = Change().with_sets(**rest)
        again = runs.try_run(back) if budget.spend() else None
        if again is not None and goal(again):
            chosen, found = rest, Found(back, again, found.size)
            continue
        got = smallest(runs, k, d, cur, goal, sig, budget, back)
        if got is not None:
            chosen, found = dict(got.change.sets), got
    size = sum(1.0 if isinstance(v, bool) else
               abs(float(v) - float(_current(t, k) or 0)) / max(abs(float(_current(t, k) or 0)),
                                                               1.0)
               for k, v in chosen.items())
    return Found(found.change, found.trace, size)


def _floor(v: float, step: float) -> float:
    """v floored to a multiple of step (at most v, so the row still passes), rounded to the
    step's decimals: 0.4 stays 0.4, not 0.39 from float noise."""
    import math

    decimals = max(0, -math.floor(math.log10(step)) + 1)
    out = round(math.floor(v / step + 1e-9) * step, decimals)
    return out if out <= v else round(out - step, decimals)


def _pairs(t: FlowTrace, cands: list[tuple[str, ParamDecl, Any, str]], runs: Runs,
           page: Callable[[FlowTrace], bool], sig: Callable[[FlowTrace], Any],
           budget: Budget) -> list[Fix]:
    found = group(t, cands, runs, page, sig, budget)
    return [] if found is None else [_fix(t, found, _label(t, found.change, found.trace))]


def _what_ifs(t: FlowTrace, s: StageRun, runs: Runs, wide: list[str], page_at: int | None,
              deepest: int, probe: FlowTrace | None, budget: Budget) -> list[Fix]:
    out = []
    names = ", ".join(wide)
    depth = page_at
    if depth is None and probe is not None and len(probe.final.rows) > len(t.final.rows):
        depth = deepest  # no full page at any depth: the deepest search, for what it gives
    if depth is not None and (s.role == "fetch" or page_at is not None):
        change = Change(widen=tuple((w, depth) for w in wide))
        got = runs.try_run(change)
        if got is not None:
            verb = "keeps" if len(wide) == 1 else "keep"
            out.append(_fix(t, Found(change, got, float(depth)),
                            f"search deeper: {names} {verb} {depth:,} rows: "
                            f"{_returns(t, got)}", what_if=True))
    if probe is not None and s.role != "fetch" and len(probe.final.rows) > len(t.final.rows):
        change = Change(widen=tuple((w, deepest) for w in wide))
        whole = "the whole ranking" if deepest >= int(t.store.get("rows") or 0) else \
            f"the first {deepest:,} rows of the ranking"
        out.append(_fix(t, Found(change, probe, float(deepest)),
                        f"filter inside the search: {s.name} filters {whole}: "
                        f"{_returns(t, probe)}", what_if=True))
    return out


def _ranked(fixes: list[Fix]) -> list[Fix]:
    """The system's own parameters first, full pages first; each group in the order found
    (each parameter's smallest change)."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for f in sorted(fixes, key=lambda f: (f.kind != "own", not f.full)):
        key = tuple(f.change.argv())
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _index(t: FlowTrace, runs: Runs | None, max_runs: int) -> Diagnosis:
    """The index lost rows the exact search returns: the index knobs that get them back."""
    msg = ("The vector index lost rows that an exact search returns with the same stages "
           "(see the index facet).")
    if runs is None:
        return Diagnosis("lost_to_index", msg)
    exact = runs.try_run(Change(exact=True))
    if exact is None:
        return Diagnosis("lost_to_index", msg)
    want = tuple(exact.final.ids)
    budget = Budget(runs, max_runs)
    goal: Callable[[FlowTrace], bool] = lambda x: tuple(x.final.ids) == want  # noqa: E731
    fixes = []
    last = t.stages[-1].name
    for key, decl, cur, _stage in candidates(t, last, ("index",)):
        found = smallest(runs, key, decl, cur, goal, lambda x: tuple(x.final.ids), budget)
        if found is not None:
            fixes.append(_fix(t, found, _label(t, found.change, found.trace) +
                              " (the exact search's rows)"))
    fixes.append(_fix(t, Found(Change(exact=True), exact, 1.0),
                      f"search exactly (bypass the index): {_returns(t, exact)}",
                      what_if=True))
    return Diagnosis("lost_to_index", msg, fixes=tuple(_ranked(fixes))[:MAX_FIXES],
                     tried=runs.count)
