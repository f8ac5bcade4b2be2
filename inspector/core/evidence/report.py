"""Readable text for a trace: stage tables, counters, diagnosis, expectations."""

from __future__ import annotations

import math
from typing import Any

from inspector.core.engine.presets import PRESETS
from inspector.core.engine.trace import Trace
from inspector.core.stores.store import TableInfo


def _f(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}"


def _cut(s: Any, width: int) -> str:
    s = "" if s is None else " ".join(str(s).split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _stage_rows(trace: Trace, name: str, max_rows: int) -> list[str]:
    stage = trace.stage(name)
    text_col = trace.pool.roles.get("text")
    hybrid = trace.params.mode == "hybrid"
    first = "fused" if hybrid else "dist"  # hybrid has no distance: that column is RRF
    head = (f"{'#':>3} {'id':<26} {first:>7} {'base':>7} {'imp':>5} {'mult':>6} "
            f"{'score':>7} {'scope':<5} text")
    lines = [head]
    for r, i in enumerate(stage.rows[:max_rows], 1):
        c = trace.candidate(int(i), r)
        dist = c["distance"] if not hybrid else c["fused_score"]
        scope = "in" if c["in_scope"] else "OUT"
        lines.append(f"{r:>3} {_cut(c['id'], 26):<26} {_f(dist):>7} {_f(c['base_score']):>7} "
                     f"{_f(c['importance_used'], 2):>5} {_f(c['multiplier'], 3):>6} "
                     f"{_f(c['score']):>7} {scope:<5} "
                     f"{_cut(c['columns'].get(text_col) if text_col else '', 60)}")
    if len(stage) > max_rows:
        lines.append(f"    ... {len(stage) - max_rows} more")
    return lines


def format_trace(trace: Trace, max_rows: int = 15) -> str:
    p, d, pool = trace.params, trace.depths, trace.pool
    store = pool.store
    out = [f"store  {store['uri']}  table {store['table']}  version {store['version']}  "
           f"rows {store['rows']}",
           f"query  {pool.query.source}: {pool.query.text or '(vector)'}",
           f"params mode={p.mode} distance={p.distance} limit={p.limit} "
           f"overfetch={p.overfetch:g} cap={p.cap} depth={d.pool} vec_k={d.vec_k} "
           f"fts_k={d.fts_k} blend={p.blend:g} min_score={p.min_score:g} "
           f"scope={p.scope!r} strategy={p.scope_strategy} filter={p.filter}"]
    if p.filter == "pushdown":
        out.append(f"pushdown {pool.pushdown_sql or '(none)'}  [{pool.pushdown_note}]")
    titles = {"raw": "raw candidates", "scoped": "scoped candidates",
              "blended": "importance-blended", "final": "final results"}
    for name in ("raw", "scoped", "blended", "final"):
        out.append("")
        out.append(f"== {titles[name]} ({len(trace.stage(name))})")
        out.extend(_stage_rows(trace, name, max_rows))
    out.append("")
    out.append("counters " + "  ".join(f"{k}={v}" for k, v in trace.counters.items()))
    out.append(f"diagnosis [{trace.diagnosis.code}] {trace.diagnosis.message}")
    for w in trace.warnings:
        out.append(f"warning {w}")
    for e in trace.expect:
        depth = "-" if e.min_depth is None else f"{e.min_depth} (over-fetch {e.min_overfetch:g})"
        out.append(f"expect {e.id}: exhaustive rank {e.exhaustive_rank or '-'}, dropped at "
                   f"{e.dropped_at or 'nowhere (returned)'}, min depth {depth}: {e.reason}")
    return "\n".join(out)


def format_presets() -> str:
    lines = []
    for p in PRESETS.values():
        lines.append(f"{p.name:<18} {p.title}\n{'':<18} depth: {p.depth_rule}")
    return "\n".join(lines)


def format_tables(uri: str, infos: list[TableInfo]) -> str:
    out = [f"store {uri}"]
    for t in infos:
        out.append(f"\ntable {t.name}: {t.rows} rows, version {t.version}, "
                   f"dim {t.dim or '-'}, full-text index {'yes' if t.fts_indexed else 'no'}")
        roles = {r: c for r, c in t.roles.as_dict().items() if c}
        out.append("  roles   " + ", ".join(f"{r}={c}" for r, c in roles.items()))
        out.append("  columns " + ", ".join(f"{c}: {ty}" for c, ty in t.columns.items()))
    return "\n".join(out)
