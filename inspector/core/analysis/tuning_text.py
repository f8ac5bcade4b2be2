"""Readable text for sweeps and comparisons (what `inspector sweep` prints)."""

from __future__ import annotations

from typing import Any

import numpy as np

from inspector.core.analysis.compare import Comparison
from inspector.core.analysis.sweep import SweepResult


def _f(x: Any, digits: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}f}"


def _matrix(values: np.ndarray, rows: tuple[float, ...], cols: tuple[float, ...]) -> list[str]:
    out = ["  F \\ w " + "".join(f"{c:>6g}" for c in cols)]
    for i, r in enumerate(rows):
        out.append(f"{r:>7g} " + "".join(f"{_f(v):>6}" for v in values[i]))
    return out


def _pick(best: dict[str, Any]) -> str:
    p = best.get("pick")
    if not p:
        return "none (no defined values)"
    return (f"over-fetch {p['overfetch']:g}, blend {p['blend']:g}, min score "
            f"{p['min_score']:g} -> {_f(best['value'], 3)} ({best['cells']} cells tie: over-fetch "
            f"{best['overfetch'][0]:g}..{best['overfetch'][1]:g}, blend "
            f"{best['blend'][0]:g}..{best['blend'][1]:g})")


def _safe_lines(safe: dict[str, Any]) -> list[str]:
    out = ["", "minimum safe over-fetch (scoped recall = 1, no cap, base blend and min score)"]
    st = safe["overfetch"]
    out.append(f"  reached by {safe['reached']} of {safe['with_truth']} queries with an in-scope "
               f"truth" + (f"; min {st['min']:g}, median {st['median']:g}, p90 {st['p90']:g}, "
                           f"max {st['max']:g}" if st else ""))
    out.append("  share fully served: " + "  ".join(
        f"F={s['overfetch']:g} {_f(100 * s['share'] if s['share'] is not None else None, 0)}%"
        for s in safe["share_full_at"]))
    for s in safe["scopes"]:
        val = "never (some query does not reach full recall)" if s["safe_overfetch"] is None \
            else f"{s['safe_overfetch']:g}"
        out.append(f"  scope {s['scope']}: {s['queries']} queries, safe over-fetch {val}")
    return out


def format_sweep(r: SweepResult, per_query: int = 50) -> str:
    """The grid of mean objectives, the best cell, per-query bests and safe over-fetch."""
    d = r.to_json()
    g = r.grid
    b = r.base
    lines = [f"base   mode={b.mode} distance={b.distance} limit={b.limit} cap={b.cap} "
             f"filter={b.filter} scope={b.scope!r} strategy={b.scope_strategy}",
             f"grid   over-fetch {len(g.overfetch)} x blend {len(g.blend)} x min score "
             f"{len(g.min_score or ())} = {int(np.prod(g.shape))} cells, {len(r.queries)} "
             f"queries, {r.seconds:.2f} s ({r.fetch_seconds:.2f} s retrieving)"
             + ("  [CANCELLED: partial]" if r.cancelled else "")]
    own = d["own_query"]
    if own["cells"]:
        lines.append(f"index  {own['cells']} of {own['of']} cells were answered by their own "
                     f"query, as `inspector query` runs it (over-fetch "
                     f"{', '.join(f'{f:g}' for f in own['overfetch'])}): the approximate index "
                     "answers each depth differently; the truth is the exact search")
    assert g.min_score is not None
    for m, ms in enumerate(g.min_score):
        lines.append("")
        lines.append("mean objective (nDCG@k where judged, else scoped recall@k); "
                     f"min score {ms:g}")
        lines.extend(_matrix(r.aggregate["objective"][:, :, m], g.overfetch, g.blend))
    lines.append("")
    lines.append("best cell  " + _pick(d["best"]))
    lines.append("")
    lines.append("per query: objective, best, safe over-fetch")
    for q in d["queries"][:per_query]:
        s = q["safe"]
        safe = f"{s['overfetch']:g} (depth {s['depth']})" if s["overfetch"] else \
            ("- (no in-scope truth)" if not s["truth"] else
             f"never (best recall {_f(s['best_recall'])})")
        name = q["name"] if len(q["name"]) <= 44 else q["name"][:43] + "…"
        lines.append(f"  {name:<44} {q['objective']:<13} best {_f(q['best']['value'])} "
                     f"at F={_pick_short(q['best'])}  safe {safe}")
    if len(d["queries"]) > per_query:
        lines.append(f"  ... {len(d['queries']) - per_query} more (use --json)")
    lines.extend(_safe_lines(d["safe"]))
    return "\n".join(lines)


def _pick_short(best: dict[str, Any]) -> str:
    p = best.get("pick")
    return "-" if not p else f"{p['overfetch']:g} w={p['blend']:g}"


def format_comparison(c: Comparison) -> str:
    a, b = c.labels
    lines = [f"{'#':>3} {a[:14]:>14} {b[:14]:>14} {'shift':>6}  side  scope  id"]
    for r in c.rows:
        lines.append(f"{'':>3} {_f(r.rank_a, 0) if r.rank_a else '-':>14} "
                     f"{_f(r.rank_b, 0) if r.rank_b else '-':>14} "
                     f"{'' if r.shift is None else f'{r.shift:+d}':>6}  {r.side:<5} "
                     f"{'in' if r.in_scope else 'OUT':<6} {r.id}")
    lines.append(f"jaccard {c.jaccard:.3f}  rbo(p={c.rbo_p:g}, extrapolated) {c.rbo:.3f}  "
                 f"kendall tau-a (shared) {_f(c.kendall_tau, 3)}  shared {c.shared}")
    for n, lab in enumerate(c.labels):
        lines.append(f"{lab}: scoped recall {_f(c.recall[n])}, starved in scope "
                     f"{'-' if c.starved[n] is None else c.starved[n]}")
    return "\n".join(lines)
