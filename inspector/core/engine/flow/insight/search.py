"""The smallest change of a declared parameter that reaches a goal (a full page, more rows, an
expected row), found by running the pipeline: values tried in order of growing change,
galloping (1, 2, 4, ... steps) until one reaches the goal, then bisected down to the smallest
that does. A value whose run changes nothing the goal depends on, twice in a row, ends the
search: the parameter has stopped mattering (a cap binds, a leg ran out of rows). An index
knob and a threshold are searched to their bound (or the run budget): which rows an
approximate search returns can stay the same over a doubling and change after it, and a
threshold passes no new row until it comes to the next score."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.registry import ParamDecl
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import NO_CHANGE, Change, Runs

Goal = Callable[[FlowTrace], bool]
Signature = Callable[[FlowTrace], Any]


@dataclass(frozen=True)
class Found:
    change: Change
    trace: FlowTrace
    size: float  # how big the change is, relative to where it started (for sorting)


class Budget:
    """At most `most` new pipeline runs for one analysis (answers already run are free)."""

    def __init__(self, runs: Runs, most: int) -> None:
        self.runs, self.most, self.start = runs, most, runs.count

    @property
    def left(self) -> int:
        return self.most - (self.runs.count - self.start)

    def spend(self) -> bool:
        return self.left > 0


class Ladder(Sequence[Any]):
    """The values to try for a parameter, in order of growing change from `cur`."""

    def __init__(self, decl: ParamDecl, cur: Any, down: bool, data: Sequence[float] = ()):
        if cur == 0 and not down and decl.zero is not None:
            cur = decl.zero  # 0 is the library's default: below it is no raise
        self.decl, self.cur, self.down = decl, cur, down
        self.data = list(data)
        step = decl.step or (1 if decl.type == "int" else None)
        self.step = step
        end = decl.lo if down else decl.hi
        if self.data:
            self.n = len(self.data)
        elif step is None:  # a float without a step: 64 doublings of the distance
            self.n = 64
        else:
            bound = (cur - end if down else end - cur) if end is not None else 1e9
            self.n = max(0, int(math.floor(bound / step + 1e-9)))

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            raise TypeError("a ladder is read one value at a time")
        if self.data:
            return self.data[i]
        sign = -1 if self.down else 1
        if self.step is None:
            base = abs(self.cur) or 1.0
            v = self.cur + sign * base * (2 ** (i - 3))
        else:
            v = self.cur + sign * self.step * (i + 1)
            v = round(v / self.step) * self.step if self.decl.type == "float" else v
        if self.decl.type == "int":
            return int(round(v))
        v = float(round(v, 10))
        lo, hi = self.decl.lo, self.decl.hi
        return min(hi, v) if hi is not None and not self.down else \
            max(lo, v) if lo is not None and self.down else v


def first_reaching(values: Sequence[Any], make: Callable[[Any], Change], runs: Runs,
                   goal: Goal, sig: Signature, budget: Budget) -> tuple[int, FlowTrace] | None:
    """The smallest index whose run reaches the goal (monotone in the index), or None."""
    def at(i: int) -> FlowTrace | None:
        if not budget.spend():
            return None
        return runs.try_run(make(values[i]))

    i, step, bad, prev = 0, 1, -1, None
    hit: tuple[int, FlowTrace] | None = None
    n = len(values)
    while i < n:
        t = at(i)
        if t is None:
            return None
        if goal(t):
            hit = (i, t)
            break
        s = sig(t)
        if s is not None and prev is not None and s == prev:
            return None  # a doubling changed nothing: the parameter stopped mattering
        prev, bad = s, i
        if i == n - 1:
            return None
        i = min(i + step, n - 1)
        step *= 2
    if hit is None:
        return None
    lo, hi = bad + 1, hit[0]
    best = hit
    while lo < hi:
        mid = (lo + hi) // 2
        t = at(mid)
        if t is None:
            break
        if goal(t):
            hi, best = mid, (mid, t)
        else:
            lo = mid + 1
    return best


def helpful(decl: ParamDecl, cur: Any) -> Any | None:
    """A flag's value that keeps more rows, when it is not set so already."""
    want = {"true": True, "false": False}.get(decl.helps())
    return None if want is None or cur == want else want


def extreme(decl: ParamDecl, cur: Any) -> Any | None:
    """The value of the parameter that keeps the most rows (a flag's helpful value, a depth's
    bound)."""
    if decl.type == "bool":
        return helpful(decl, cur)
    if decl.helps() == "raise" and decl.hi is not None:
        return int(decl.hi) if decl.type == "int" else float(decl.hi)
    if decl.helps() == "lower" and decl.lo is not None:
        return int(decl.lo) if decl.type == "int" else float(decl.lo)
    return None


def _no_stop(_t: FlowTrace) -> None:
    return None


def smallest(runs: Runs, key: str, decl: ParamDecl, cur: Any, goal: Goal, sig: Signature,
             budget: Budget, base: Change = NO_CHANGE, data: Sequence[float] = ()) -> Found | None:
    """The smallest change of one parameter (on top of `base`) that reaches the goal."""
    if decl.type == "bool":
        want = helpful(decl, cur)
        if want is None or not budget.spend():
            return None
        t = runs.try_run(base.with_sets(**{key: want}))
        return Found(base.with_sets(**{key: want}), t, 1.0) if t is not None and goal(t) \
            else None
    if decl.type not in ("int", "float") or decl.helps() not in ("raise", "lower"):
        return None
    ladder = Ladder(decl, cur, decl.helps() == "lower", data)
    if decl.effect in ("index", "threshold"):  # two values returning the same rows prove
        # nothing here: refine_factor 4 and 8 may both miss a row that 16 returns, and a min
        # score lowered 0.01 twice passes no row until it comes to the next score below
        sig = _no_stop
    got = first_reaching(ladder, lambda v: base.with_sets(**{key: v}), runs, goal, sig, budget)
    if got is None:
        return None
    value, start = ladder[got[0]], ladder.cur
    span = max(abs(start), decl.step or 1.0) if isinstance(start, (int, float)) else 1.0
    return Found(base.with_sets(**{key: value}), got[1], abs(value - start) / span)


def scan(runs: Runs, key: str, decl: ParamDecl, cur: float, goal: Goal, budget: Budget,
         step: float) -> Found | None:
    """The nearest value on a grid of `step` within the declared range that reaches the goal
    (a weight: not monotone, so every point is tried outward from the current value)."""
    lo = decl.lo if decl.lo is not None else cur - 1.0
    hi = decl.hi if decl.hi is not None else cur + 1.0
    n = int(round((hi - lo) / step))
    points = sorted({round(lo + i * step, 10) for i in range(n + 1)} - {cur},
                    key=lambda v: (abs(v - cur), v))
    for v in points:
        if not budget.spend():
            return None
        change = Change().with_sets(**{key: v})
        t = runs.try_run(change)
        if t is not None and goal(t):
            return Found(change, t, abs(v - cur) / max(abs(cur), step))
    return None
