"""The safe depth: per query, the smallest change that makes scoped recall@k 1 (every row of
the truth's top k returned), for any pipeline, found as the diagnosis finds a fix (every
value tried was run, through the question's fetch cache):

- the depth parameter (the sweep's depth axis, else the pipeline's first depth parameter)
  alone, searched from its current value over its declared range (galloping, then bisecting);
  where it stops mattering (a cap binds) with the other depth parameters of its stage
  (`diagnosis.group`: an over-fetch and its cap), so the change reads as the system's own
  fix ("fetch.overfetch 5.6 with fetch.cap 56");
- a query already served: the smallest value of that parameter that still serves it;
- the what-if depth: how many rows the stages before the last must keep (`--widen`, "search
  deeper") for recall 1, the rows being where the truth puts them.

Per scope, the largest value its queries need (none when one query is never served), and the
share of queries fully served at each value of the sweep's depth axis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.analysis.grid import declared
from inspector.core.analysis.metrics import scoped_recall
from inspector.core.analysis.truth import Forgetful, deep_stages, probe_depth
from inspector.core.engine.flow.insight.diagnosis import candidates, group
from inspector.core.engine.flow.insight.search import Budget, Ladder, first_reaching, smallest
from inspector.core.engine.flow.registry import ParamDecl
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import Change, Runs

MAX_RUNS = 80  # pipeline runs each of a safe depth's searches may make (memoised ones free)


@dataclass(frozen=True)
class SafeDepth:
    """One query's safe depth. `value` is None when no value of `key` (with its stage's other
    depth parameters) serves the query; `depth` None when no what-if depth does, or the query
    is served as asked."""

    truth: int  # rows of the truth's top k (0: nothing to recall)
    served: bool  # the question as asked has scoped recall 1
    key: str | None  # the depth parameter searched
    current: Any = None  # its value as asked
    value: Any = None  # its smallest value that serves the query
    sets: dict[str, Any] = field(default_factory=dict)  # every parameter that change sets
    argv: tuple[str, ...] = ()  # the command-line arguments that apply it
    depth: int | None = None  # what-if: rows the deepened stages keep for recall 1
    stages: tuple[str, ...] = ()  # the deepened stages
    best_recall: float | None = None  # the best scoped recall seen
    reason: str = ""
    curve: tuple[tuple[Any, float | None], ...] = ()  # (depth axis value, recall)

    def to_json(self) -> dict[str, Any]:
        return {"truth": self.truth, "served": self.served, "key": self.key,
                "current": self.current, "value": self.value, "sets": dict(self.sets),
                "argv": list(self.argv), "depth": self.depth, "stages": list(self.stages),
                "best_recall": self.best_recall, "reason": self.reason,
                "curve": [{"value": v, "recall": r} for v, r in self.curve]}


def depth_key(spec: Any, axes: Sequence[Any] = ()) -> str | None:
    """The depth parameter a safe depth is told in: the sweep's depth axis, else the
    pipeline's first declared numeric depth parameter (a live one first)."""
    for ax in axes:
        if ax.effect == "depth" and not isinstance(ax.current, bool):
            return str(ax.key)
    found = [(k, d) for k, (d, _) in declared(spec).items()
             if d.effect == "depth" and d.type in ("int", "float")]
    found.sort(key=lambda x: not x[1].live)
    return found[0][0] if found else None


def _decl(t: FlowTrace, key: str) -> tuple[ParamDecl, Any, str] | None:
    """The depth parameter's declaration, value and stage in this run (None: no stage of
    the route taken holds it)."""
    return next(((decl, cur, st) for k, decl, cur, st in
                 candidates(t, t.stages[-1].name, ("depth",)) if k == key), None)


def safe_depth(runs: Runs, base: FlowTrace, truth: Sequence[str] | None, k: int,
               key: str | None, curve: Sequence[tuple[Any, float | None]] = (),
               max_runs: int = MAX_RUNS) -> SafeDepth:
    """The safe depth of one question (its base run `base`, its truth's ids); its searches'
    runs are not remembered (they may run deep)."""
    runs = Forgetful(runs)  # type: ignore[assignment]
    want = list(truth or [])[:k]
    curve = tuple(curve)
    if not want:
        return SafeDepth(0, False, key, reason="the truth is empty, so there is nothing to "
                         "recall", curve=curve)

    def recall(x: FlowTrace) -> float:
        return scoped_recall(x.final.ids, want, k) or 0.0

    goal: Callable[[FlowTrace], bool] = lambda x: recall(x) >= 1.0  # noqa: E731
    sig: Callable[[FlowTrace], Any] = lambda x: (x.marks(), tuple(x.final.ids))  # noqa: E731
    seen = [recall(base)]
    served = goal(base)
    found = _decl(base, key) if key else None
    out: dict[str, Any] = {"truth": len(want), "served": served, "key": key, "curve": curve}
    if found is not None:
        decl, cur, stage = found
        out["current"] = cur
        budget = Budget(runs, max_runs)
        hit = _smallest_serving(runs, key, decl, cur, goal, budget) if served else \
            _deeper(base, runs, key, decl, cur, stage, goal, sig, budget)
        if hit is None and served:  # no smaller value tried serves it: the value as asked
            hit = Change().with_sets(**{key: cur}), base
        if hit is not None:
            change, trace = hit
            seen.append(recall(trace))
            sets = dict(change.sets)
            out.update(value=sets.get(key, cur), sets=sets, argv=tuple(change.argv()))
    if not served:
        depth, best = _what_if_depth(base, runs, goal, recall, Budget(runs, max_runs))
        out.update(depth=depth, stages=tuple(s for s in deep_stages(runs.spec)
                                             if s in {x.name for x in base.stages}))
        seen.append(best)
    out["best_recall"] = max(seen)
    out["reason"] = _reason(out, served, found is not None)
    return SafeDepth(**out)


def _reason(out: dict[str, Any], served: bool, searched: bool) -> str:
    if served:
        return "served as asked"
    if not searched:
        return "the pipeline declares no depth parameter" + (
            "" if out.get("key") is None else f" {out['key']} on the stages up to the last")
    if out.get("value") is None and out.get("depth") is None:
        return (f"scoped recall stays below 1 at every depth tried; at best "
                f"{out.get('best_recall') or 0:.2f}")
    if out.get("value") is None:
        return f"no value of {out['key']} serves it; a deeper search does"
    return ""


def _smallest_serving(runs: Runs, key: str, decl: ParamDecl, cur: Any,
                      goal: Callable[[FlowTrace], bool], budget: Budget
                      ) -> tuple[Change, FlowTrace] | None:
    """A query served as asked: the smallest value of `key` (down from its current one) that
    still serves it, the next smaller one being run and found short."""
    if decl.type not in ("int", "float") or decl.helps() != "raise":
        return None
    down = Ladder(decl, cur, True)
    make = lambda v: Change().with_sets(**{key: v})  # noqa: E731
    got = first_reaching(down, make, runs, lambda x: not goal(x), lambda x: None, budget)
    if got is None:  # every value down to the lowest still serves it (or the budget ran out)
        last = len(down) - 1
        if last < 0 or not budget.spend():
            return None
        t = runs.try_run(make(down[last]))
        return (make(down[last]), t) if t is not None and goal(t) else None
    if got[0] == 0:
        return None  # the next smaller value is short: the value as asked
    value = down[got[0] - 1]
    t = runs.try_run(make(value))
    return (make(value), t) if t is not None else None


def _deeper(base: FlowTrace, runs: Runs, key: str, decl: ParamDecl, cur: Any, stage: str,
            goal: Callable[[FlowTrace], bool], sig: Callable[[FlowTrace], Any],
            budget: Budget) -> tuple[Change, FlowTrace] | None:
    """The smallest value of `key` alone that serves the query, else `key` with the other
    depth parameters of its stage (the diagnosis's group search)."""
    one = smallest(runs, key, decl, cur, goal, sig, budget)
    if one is not None:
        return one.change, one.trace
    cands = [c for c in candidates(base, base.stages[-1].name, ("depth",)) if c[3] == stage]
    cands.sort(key=lambda c: c[0] != key)  # the swept parameter first
    got = group(base, cands, runs, goal, sig, budget)
    return None if got is None else (got.change, got.trace)


def _what_if_depth(base: FlowTrace, runs: Runs, goal: Callable[[FlowTrace], bool],
                   recall: Callable[[FlowTrace], float], budget: Budget
                   ) -> tuple[int | None, float]:
    """The smallest what-if depth of the deepened stages that serves the query, and the best
    recall seen on the way."""
    names = {s.name for s in base.stages}
    wide = [s for s in deep_stages(runs.spec) if s in names]
    if not wide:
        return None, 0.0
    ladder = list(range(base.limit, max(base.limit, probe_depth(base.store.get("rows"))) + 1))
    make = lambda d: Change(widen=tuple((w, d) for w in wide))  # noqa: E731
    best = [0.0]

    def reached(x: FlowTrace) -> bool:
        best[0] = max(best[0], recall(x))
        return goal(x)

    got = first_reaching(ladder, make, runs, reached, lambda x: None, budget)
    return (None if got is None else ladder[got[0]]), best[0]


def _stats(xs: list[float]) -> dict[str, float] | None:
    if not xs:
        return None
    a = np.asarray(xs, float)
    return {"min": float(a.min()), "median": float(np.median(a)),
            "p90": float(np.quantile(a, 0.9)), "max": float(a.max())}


def summarize_safe(items: Sequence[tuple[str | None, SafeDepth]]) -> dict[str, Any]:
    """Over a query set: how many queries are served as asked and how many some change
    serves; the share fully served at each value of the depth axis; per scope, the value
    of the depth parameter that serves every query of that scope (None when one is never
    served) with what else that change sets, and the deepest what-if depth needed."""
    has_truth = [(s, d) for s, d in items if d.truth > 0]
    values = [float(d.value) for _, d in has_truth if isinstance(d.value, (int, float))
              and not isinstance(d.value, bool)]
    share = []
    points = [v for v, _ in has_truth[0][1].curve] if has_truth else []
    for n, v in enumerate(points):
        full = sum(1 for _, d in has_truth if len(d.curve) > n and d.curve[n][1] == 1.0)
        share.append({"value": v, "share": full / len(has_truth)})
    scopes: dict[str, list[SafeDepth]] = {}
    for s, d in has_truth:
        scopes.setdefault(s or "(none)", []).append(d)
    per_scope = []
    for s, ds in sorted(scopes.items()):
        ok = [d for d in ds if d.value is not None]
        sets: dict[str, Any] = {}
        for d in ok:
            for k, v in d.sets.items():
                sets[k] = max(sets[k], v) if k in sets and _num(v) and _num(sets[k]) else v
        key = ds[0].key
        depths = [d.depth for d in ds if d.depth is not None]
        per_scope.append({
            "scope": s, "queries": len(ds), "served": sum(d.served for d in ds),
            "unreachable": len(ds) - len(ok), "key": key,
            "safe_value": sets.get(key) if key and len(ok) == len(ds) else None,
            "sets": sets if len(ok) == len(ds) else None,
            "depth": max(depths) if depths else None,
            "values": _stats([float(d.value) for d in ok if _num(d.value)])})
    return {"queries": len(items), "with_truth": len(has_truth),
            "served": sum(d.served for _, d in has_truth),
            "reached": sum(d.value is not None for _, d in has_truth),
            "values": _stats(values), "share_full_at": share, "scopes": per_scope}


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _v(x: Any) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    return f"{x:g}" if isinstance(x, (int, float)) else str(x)


def change_words(sets: dict[str, Any], first: str | None = None) -> str:
    """A change in words, its depth parameter first: "fetch.overfetch 5.6 and fetch.cap 56"."""
    keys = sorted(sets, key=lambda k: k != first)
    if not keys:
        return "as asked"
    return " and ".join(f"{k} {_v(sets[k])}" for k in keys)


def safe_words(s: dict[str, Any]) -> str:
    """One query's safe depth (SafeDepth.to_json()) in one sentence, as the sweep's text, the
    receipt and the window tell it."""
    if not s["truth"]:
        return "no safe depth: the truth is empty, so there is nothing to recall"
    own = change_words(s["sets"], s["key"])
    if s["served"]:
        return f"served as asked; the smallest value that still serves it: {own}"
    parts = []
    if s["value"] is not None:
        parts.append(own)
    if s["depth"] is not None:
        verb = "keeps" if len(s["stages"]) == 1 else "keep"
        parts.append(f"what-if: {', '.join(s['stages'])} {verb} {s['depth']} rows")
    if not parts:
        return f"never served ({s['reason']})"
    return "scoped recall 1 with " + "; or ".join(parts)
