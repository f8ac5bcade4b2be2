"""Expected rows over any pipeline: where the row fell and why, and the smallest change of one
parameter of any stage that brings it back, with what that change does to the rest of the
results. Changes are searched on a grid around each value and re-run through the pool cache,
so only parameters that shape a fetch cost a new search."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.registry import ParamDecl, kind_of
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.spec import PipelineSpec, apply_set
from inspector.core.errors import InspectorError

STEPS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 4.0)


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
                d = next((x for x in st.dropped if x.id == rid), None)
                if d is not None and leg_drop is None:
                    leg_drop = Fall(st.name, d.code, dict(d.detail))
            continue
        if st.role == "query" or not seen:
            continue
        if rid in [s.id for s in st.rows_in] and rid not in st.ids:
            d = next((x for x in st.dropped if x.id == rid), None)
            return Fall(st.name, d.code if d else "dropped", dict(d.detail) if d else {})
    if leg_drop is not None and not seen:
        return leg_drop
    first = next((s.name for s in t.stages if s.role == "fetch"), None)
    return Fall(first, "not_fetched", {"why": "not among the rows any leg asked LanceDB for "
                                              "(ranked past the leg's depth, out of scope, "
                                              "or not matched)"})


def _values(decl: ParamDecl, cur: Any) -> list[tuple[float, Any]]:
    """(relative size of the change, value) to try, smallest first."""
    if decl.type == "bool":
        return [(1.0, not cur)]
    if decl.type not in ("float", "int"):
        return []
    out: dict[Any, float] = {}
    base = abs(cur) if cur else 1.0
    for f in STEPS:
        for v in (cur + f * base, cur - f * base):
            if decl.type == "int":
                v = int(round(v))
            if (decl.lo is not None and v < decl.lo) or (decl.hi is not None and v > decl.hi):
                continue
            if v != cur and v not in out:
                out[v] = abs(v - cur) / base
    return sorted(((r, v) for v, r in out.items()), key=lambda x: x[0])


def explain(spec: PipelineSpec, t: FlowTrace, rid: str,
            rerun: Callable[[PipelineSpec, int | None], FlowTrace]) -> dict[str, Any]:
    fall = where_dropped(t, rid)
    out: dict[str, Any] = {"id": rid, "dropped_at": fall.stage, "reason": fall.code,
                           "detail": fall.detail, "fix": None, "alternatives": []}
    if fall.code == "returned":
        out["rank"] = fall.detail["rank"]
        return out
    route = next(r for r in spec.routes if r.name == t.route)
    base_ids = t.final.ids
    found: list[dict[str, Any]] = []
    tried = 0
    fetches = {s.name for s in t.stages if s.role == "fetch"}
    for st in route.stages:
        kind = kind_of(st.kind)
        if fall.stage in fetches and kind.role != "fetch":
            continue  # a row no leg fetched: later stages only drop and re-order
        params = kind.resolve(st.params, st.name)
        for decl in kind.params:
            for ratio, value in _values(decl, params[decl.name]):
                tried += 1
                try:
                    got = rerun(apply_set(spec, {f"{st.name}.{decl.name}": value}), None)
                except InspectorError:
                    continue
                if got.route != t.route or rid not in got.final.ids:
                    continue
                found.append(_change(st.name, decl, params[decl.name], value, ratio, got,
                                     rid, base_ids))
                break
    for n in range(t.limit + 1, spec.limit.max + 1):
        got = rerun(spec, n)
        if rid in got.final.ids:
            found.append({"stage": None, "param": "limit", "from": t.limit, "to": n,
                          "change": (n - t.limit) / t.limit, "live": True,
                          "rank": got.final.ids.index(rid) + 1,
                          "gained": [i for i in got.final.ids if i not in base_ids],
                          "lost": [i for i in base_ids if i not in got.final.ids]})
            break
    found.sort(key=lambda c: (c["change"], not c["live"]))
    out["fix"] = found[0] if found else None
    out["alternatives"] = found[1:6]
    out["tried"] = tried
    if not found:
        out["no_fix"] = ("no single parameter change on the grid (each value scaled by "
                         f"{', '.join(f'±{int(s * 100)}%' for s in STEPS)}, flags toggled, "
                         "the limit raised to its maximum) returns this row")
    return out


def _change(stage: str, decl: ParamDecl, cur: Any, value: Any, ratio: float, got: FlowTrace,
            rid: str, base: list[str]) -> dict[str, Any]:
    ids = got.final.ids
    return {"stage": stage, "param": decl.name, "from": cur, "to": value, "change": ratio,
            "live": decl.live, "rank": ids.index(rid) + 1,
            "gained": [i for i in ids if i not in base],
            "lost": [i for i in base if i not in ids]}
