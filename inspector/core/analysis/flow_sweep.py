"""Sweeps over pipelines of stages: a grid over any live parameters (`STAGE.PARAM`), each cell
answered through one LiveFlow per query (the legs fetched once), with rows returned, expected
rows found and, with judgments, recall / nDCG at k, and the cell's change against the
pipeline as configured."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.core.analysis.metrics import metric
from inspector.core.analysis.sweep import parse_axis
from inspector.core.engine.flow.live import LiveFlow
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.engine.flow.registry import kind_of
from inspector.core.errors import InspectorError

MAX_CELLS = 2_000


@dataclass(frozen=True)
class Axis:
    key: str  # STAGE.PARAM
    values: tuple[Any, ...]


def parse_grid(spec: Any, items: list[str]) -> list[Axis]:
    """`STAGE.PARAM=SPEC` each ('a,b,c' or 'start:stop:step'; true,false for flags), checked
    against the pipeline's declared parameters."""
    if not items:
        raise InspectorError("A pipeline sweep needs --grid STAGE.PARAM=SPEC (one to three).")
    if len(items) > 3:
        raise InspectorError("A pipeline sweep takes at most three --grid axes.")
    decls = {f"{st.name}.{d.name}": d for r in spec.routes for st in r.stages
             for d in kind_of(st.kind).params}
    axes = []
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or key not in decls:
            raise InspectorError(f"--grid {item!r}: name a parameter as STAGE.PARAM=SPEC; "
                                 f"pipeline {spec.name} has e.g. "
                                 f"{', '.join(list(decls)[:6])}.")
        d = decls[key]
        if d.type == "bool":
            vals: tuple[Any, ...] = tuple(v.strip().lower() == "true" for v in values.split(","))
        elif d.type in ("int", "float"):
            nums = parse_axis(values, key)
            vals = tuple(int(v) for v in nums) if d.type == "int" else nums
            for v in vals:
                d.check(v, key.split(".")[0])
        else:
            raise InspectorError(f"--grid {key}: only numbers and flags can be swept.")
        axes.append(Axis(key, vals))
    cells = 1
    for ax in axes:
        cells *= len(ax.values)
    if cells > MAX_CELLS:
        raise InspectorError(f"The grid has {cells:,} cells; at most {MAX_CELLS:,}.")
    return axes


@dataclass(frozen=True)
class FlowCase:
    name: str
    question: Question
    grades: dict[str, float] | None


def sweep(store: Any, cases: list[FlowCase], axes: list[Axis], now_ms: float, k: int | None,
          progress: Callable[[int, int, str], None] | None = None) -> dict[str, Any]:
    spec, _, _ = resolve(cases[0].question)
    sessions = [LiveFlow(store, c.question, now_ms) for c in cases]
    base = [s.answer().final.ids for s in sessions]
    combos = list(itertools.product(*(ax.values for ax in axes)))
    rows = []
    for n, combo in enumerate(combos, 1):
        sets = dict(zip((ax.key for ax in axes), combo, strict=True))
        per = []
        for case, s, before in zip(cases, sessions, base, strict=True):
            s.sets = dict(sets)
            t = s.answer()
            ids = t.final.ids
            kk = k or t.limit
            found = [e for e in case.question.expect if e in ids]
            per.append({
                "query": case.name, "returned": len(ids), "ids": ids,
                "expected_found": len(found), "expected": len(case.question.expect),
                "recall": metric("recall", ids, kk, case.grades) if case.grades else None,
                "ndcg": metric("ndcg", ids, kk, case.grades) if case.grades else None,
                "gained": [i for i in ids if i not in before],
                "lost": [i for i in before if i not in ids]})
        rows.append({"cell": sets, "queries": per, **_means(per)})
        if progress:
            progress(n, len(combos), "cells")
    baseline = {"returned": sum(len(b) for b in base) / len(base)}
    return {"kind": "pipeline-sweep", "pipeline": spec.name, "axes": [
        {"key": ax.key, "values": list(ax.values)} for ax in axes], "k": k,
        "queries": [c.name for c in cases], "baseline": baseline, "cells": rows,
        "best": _best(rows)}


def _means(per: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str) -> float | None:
        vals = [p[key] for p in per if p[key] is not None]
        return sum(vals) / len(vals) if vals else None

    return {"returned": mean("returned"), "expected_found": sum(p["expected_found"] for p in per),
            "recall": mean("recall"), "ndcg": mean("ndcg"),
            "changed": sum(1 for p in per if p["gained"] or p["lost"])}


def _best(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cell with the best recall (else most expected rows found), fewest changes first."""
    if not rows:
        return None
    def key(r: dict[str, Any]) -> tuple[float, ...]:
        return (-(r["recall"] if r["recall"] is not None else -1), -r["expected_found"],
                r["changed"])
    return min(rows, key=key)["cell"]


def format_text(result: dict[str, Any]) -> str:
    keys = [ax["key"] for ax in result["axes"]]
    lines = [f"pipeline {result['pipeline']} · {len(result['cells'])} cells · "
             f"{len(result['queries'])} quer{'y' if len(result['queries']) == 1 else 'ies'}",
             "  ".join(f"{k:>24}" for k in keys) + "  returned  expected  recall    ndcg  changed"]
    for r in result["cells"]:
        vals = "  ".join(f"{r['cell'][k]!s:>24}" for k in keys)
        rec = "-" if r["recall"] is None else f"{r['recall']:.3f}"
        nd = "-" if r["ndcg"] is None else f"{r['ndcg']:.3f}"
        lines.append(f"{vals}  {r['returned']:>8.2f}  {r['expected_found']:>8}  {rec:>6}  "
                     f"{nd:>6}  {r['changed']:>7}")
    if result["best"] is not None:
        lines.append("best: " + ", ".join(f"{k}={v}" for k, v in result["best"].items()))
    return "\n".join(lines)
