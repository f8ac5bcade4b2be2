"""Readable text for sweeps and comparisons (what `inspector sweep` prints)."""

from __future__ import annotations

from typing import Any

import numpy as np

from inspector.core.analysis.compare import Comparison
from inspector.core.analysis.safe import change_words, safe_words
from inspector.core.analysis.sweep import SweepResult, axis_values


def _f(x: Any, digits: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}f}"


def _v(x: Any) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    return f"{x:g}" if isinstance(x, (int, float)) else str(x)


def _sets(sets: dict[str, Any], first: str | None = None) -> str:
    return ", ".join(f"{k} {_v(v)}" for k, v in sets.items())


def _matrix(values: np.ndarray, rows: Any, cols: Any, corner: str) -> list[str]:
    width = max(6, *(len(_v(c)) + 1 for c in cols))
    out = [f"  {corner:>24} " + "".join(f"{_v(c):>{width}}" for c in cols)]
    for i, r in enumerate(rows):
        out.append(f"  {_v(r):>24} " + "".join(f"{_f(v):>{width}}" for v in values[i]))
    return out


def _grid_lines(r: SweepResult) -> list[str]:
    axes = r.axes
    values = axis_values(r)
    if len(axes) == 1:
        return _matrix(values[None, :], ["mean"], axes[0].values, axes[0].key)
    corner = f"{axes[0].key} \\ {axes[1].key}"
    if len(axes) == 2:
        return _matrix(values, axes[0].values, axes[1].values, corner)
    out = []
    for m, v in enumerate(axes[2].values):
        out.append(f"  {axes[2].key} = {_v(v)}")
        out += _matrix(values[:, :, m], axes[0].values, axes[1].values, corner)
    return out


def _safe_lines(safe: dict[str, Any]) -> list[str]:
    out = ["", "safe depth (scoped recall@k = 1; each value run; the rest as asked)"]
    out.append(f"  {safe['reached']} of {safe['with_truth']} queries with a truth are served "
               f"by some value ({safe['served']} as asked)")
    if safe["share_full_at"]:
        out.append("  share fully served: " + "  ".join(
            f"{_v(s['value'])} {_f(100 * s['share'], 0)}%" for s in safe["share_full_at"]))
    for s in safe["scopes"]:
        if s["sets"] is None:
            val = (f"never ({s['unreachable']} of its queries are served by no value of "
                   f"{s['key']})")
        else:
            val = change_words(s["sets"], s["key"])
        deeper = f"; deepest what-if {s['depth']}" if s["depth"] else ""
        out.append(f"  scope {s['scope']}: {s['queries']} quer{'y' if s['queries'] == 1 else 'ies'}"
                   f", safe {val}{deeper}")
    return out


def format_sweep(r: SweepResult, per_query: int = 50) -> str:
    """The grid of mean objectives, the best cell, per-query bests and the safe depths."""
    d = r.to_json()
    shape = " x ".join(str(len(a.values)) for a in r.axes)
    n = len(r.queries)
    lines = [f"pipeline {r.pipeline} · {shape} = {len(d['cells'])} cells · {n} "
             f"quer{'y' if n == 1 else 'ies'} · {d['runs']} runs · {r.seconds:.2f} s"
             + ("  [CANCELLED: partial]" if r.cancelled else ""),
             "axes   " + " x ".join(f"{a.key} ({a.effect or 'other'}, as asked "
                                    f"{_v(a.current)})" for a in r.axes), "",
             "mean objective (nDCG@k where judged, else scoped recall@k)"]
    lines += _grid_lines(r)
    b = d["best"]
    lines += ["", "best cell  " + ("none (no defined values)" if not b["pick"] else
                                   f"{_sets(b['pick'])} -> {_f(b['value'], 3)} "
                                   f"({b['cells']} cells reach it)")]
    if "index_recall" in r.aggregate:
        at = int(np.nanargmin(np.where(np.isnan(r.aggregate["index_recall"]), np.inf,
                                       r.aggregate["index_recall"])))
        lines.append(f"index      recall against the exact search: lowest "
                     f"{_f(float(r.aggregate['index_recall'][at]), 3)} at "
                     f"{_sets(d['cells'][at]['at'])}")
    lines += ["", "per query: objective, best, safe depth"]
    cells = r.cells
    for q, qd in list(zip(r.queries, d["queries"], strict=True))[:per_query]:
        vals = q.values[q.objective]
        best = "-" if np.all(np.isnan(vals)) else \
            f"{_f(float(np.nanmax(vals)))} at {_sets(cells[int(np.nanargmax(vals))])}"
        name = q.case.name if len(q.case.name) <= 40 else q.case.name[:39] + "…"
        lines.append(f"  {name:<40} {q.objective:<13} best {best}; safe depth: "
                     f"{safe_words(qd['safe'])}")
    if n > per_query:
        lines.append(f"  ... {n - per_query} more (use --json)")
    lines.extend(_safe_lines(d["safe"]))
    notes = dict.fromkeys(x for q in r.queries for x in q.notes)
    lines += [f"note   {x}" for x in notes]
    return "\n".join(lines)


def format_comparison(c: Comparison) -> str:
    a, b = c.labels
    lines = [f"{'#':>3} {a[:14]:>14} {b[:14]:>14} {'shift':>6}  side  id"]
    for r in c.rows:
        lines.append(f"{'':>3} {r.rank_a or '-':>14} {r.rank_b or '-':>14} "
                     f"{'' if r.shift is None else f'{r.shift:+d}':>6}  {r.side:<5} {r.id}")
    lines.append(f"jaccard {c.jaccard:.3f}  rbo(p={c.rbo_p:g}, extrapolated) {c.rbo:.3f}  "
                 f"kendall tau-a (shared) {_f(c.kendall_tau, 3)}  shared {c.shared}")
    for n, lab in enumerate(c.labels):
        lines.append(f"{lab}: scoped recall {_f(c.recall[n])}, truth rows not returned "
                     f"{'-' if c.starved[n] is None else c.starved[n]}")
    return "\n".join(lines)
