"""Readable text for a trace: stage tables, counters, diagnosis, expectations."""

from __future__ import annotations

import math
from typing import Any

from inspector.core.engine.flow.shipped import ALIASES, shipped_names
from inspector.core.engine.flow.spec import load_shipped
from inspector.core.engine.index_rule import index_json
from inspector.core.engine.presets import FORMER_FIXED, PRESETS
from inspector.core.engine.ties import RULE_TEXT, TieGroup, marks
from inspector.core.engine.trace import Trace
from inspector.core.stores.store import TableInfo


def _f(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}"


def _cut(s: Any, width: int) -> str:
    s = "" if s is None else " ".join(str(s).split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _stage_rows(trace: Trace, name: str, max_rows: int, groups: tuple[TieGroup, ...]
                ) -> list[str]:
    """One line per row; after the rank, '=' marks a row tied with others, '!' one whose tie
    straddles a cut (the order among them decides what is returned)."""
    stage = trace.stage(name)
    text_col = trace.pool.roles.get("text")
    hybrid = trace.params.mode == "hybrid"
    tied = marks(groups, name)
    first = "fused" if hybrid else "dist"  # hybrid has no distance: that column is RRF
    head = (f"{'#':>3}  {'id':<26} {first:>7} {'base':>7} {'imp':>5} {'mult':>6} "
            f"{'score':>7} {'scope':<5} text")
    lines = [head]
    for r, i in enumerate(stage.rows[:max_rows], 1):
        c = trace.candidate(int(i), r)
        dist = c["distance"] if not hybrid else c["fused_score"]
        scope = "in" if c["in_scope"] else "OUT"
        g = tied.get(int(i))
        mark = " " if g is None else "!" if g.at_cut else "="
        lines.append(f"{r:>3}{mark} {_cut(c['id'], 26):<26} {_f(dist):>7} {_f(c['base_score']):>7} "
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
    groups = trace.ties()
    for name in ("raw", "scoped", "blended", "final"):
        out.append("")
        out.append(f"== {titles[name]} ({len(trace.stage(name))})")
        out.extend(_stage_rows(trace, name, max_rows, groups))
    out.append("")
    out.append("counters " + "  ".join(f"{k}={v}" for k, v in trace.counters.items()))
    out.append(f"diagnosis [{trace.diagnosis.code}] {trace.diagnosis.message}")
    for fix in trace.diagnosis.fixes:
        options = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in fix.changes)
        out.append(f"  fix: {fix.label} ({options})")
    out.extend(_index_lines(trace))
    for w in trace.warnings:
        out.append(f"warning {w}")
    out.extend(_tie_lines(groups, p.tie_rule))
    for e in trace.expect:
        depth = "-" if e.min_depth is None else f"{e.min_depth} (over-fetch {e.min_overfetch:g})"
        out.append(f"expect {e.id}: exhaustive rank {e.exhaustive_rank or '-'}, dropped at "
                   f"{e.dropped_at or 'nowhere (returned)'}, min depth {depth}: {e.reason}")
    return "\n".join(out)


def _tie_lines(groups: tuple[TieGroup, ...], rule: str) -> list[str]:
    """A count of the tie groups, and one line per group that straddles a cut."""
    if not groups:
        return []
    cut = [g for g in groups if g.at_cut]
    out = [f"ties   {len(groups)} group{'s' * (len(groups) != 1)} of equal scores "
           f"({len(cut)} at a cut); rule {rule}: "
           f"{RULE_TEXT[rule]}"]
    for g in cut:
        ids = ", ".join(str(x) for x in g.ids[:4]) + (", ..." if len(g.ids) > 4 else "")
        who = ("the real system may return any of them" if g.arbitrary
               else f"the system orders them by {g.order}")
        past = f" and {g.beyond} row(s) past it" if g.beyond else ""
        out.append(f"tie    {g.stage}: {g.measure} {g.score:.6g} is shared across the {g.cut} "
                   f"cut by {ids}{past}; {who}")
    return out


def _index_lines(trace: Trace) -> list[str]:
    """The vector index in use and, with the facet, what the exact search says."""
    info = index_json(trace.pool.index, trace.params, trace.depths.vec_k)
    if info is None:
        return []
    if not info["used"]:
        return [f"index {info['type']} not used: {info['not_used_because']}"]
    knobs = "  ".join(f"{k}={info[k]}" for k in ("min_nprobes", "max_nprobes", "refine_factor",
                                                 "ef") if info[k] is not None)
    out = [f"index {info['type']} on {info['column']} ({info['metric']}): {knobs}"]
    f = trace.index_facet
    if f is not None:
        recall = "-" if f.recall is None else f"{f.recall:.0%}"
        out.append(f"exact search at depth {f.depth}: lostToIndex={len(f.lost)}  ANN recall@"
                   f"{trace.params.limit}={recall}  the exact pipeline returns "
                   + (", ".join(str(x) for x in f.exact_final) or "nothing"))
    return out


def format_presets() -> str:
    """Every preset: the fixed pipeline's, then the pipelines of stages; for each the system
    and version it was read from, its depths and ties, and what it does not reproduce."""
    lines = []
    staged = [n for n in shipped_names() if n not in PRESETS]
    for name in [*PRESETS, *staged]:
        if name == staged[0]:
            lines.append("\npipelines of stages (`inspector pipeline show NAME` lists every "
                         "stage):")
        spec, pad = load_shipped(name), " " * 18
        lines.append(f"{name:<18} {spec.title}\n{pad} read from: {spec.system} {spec.version}")
        if name in PRESETS:
            p = PRESETS[name]
            lines.append(f"{pad} depth: {p.depth_rule}\n{pad} ties: {p.ties}\n{pad} index "
                         f"knobs: {p.index_knobs}")
        else:
            lines.append(f"{pad} ties: {spec.ties}")
        if spec.not_reproduced:
            lines.append(f"{pad} not reproduced: {'; '.join(spec.not_reproduced)}")
    lines.append("\nformer names, still accepted: " + ", ".join(
        f"{old} (now {new})" for old, new in ALIASES.items()) + "; the fixed preset once "
        "called " + ", ".join(f"{old} is {new}" for old, new in FORMER_FIXED.items()))
    return "\n".join(lines)


_READ_MODES = {
    "sqlite-immutable": "SQLite opened immutable (no lock, no side file; no write-ahead log)",
    "sqlite-snapshot": "SQLite read from a private snapshot of the file and its write-ahead log",
}


def format_tables(uri: str, infos: list[TableInfo]) -> str:
    """`inspector tables` as text; `uri` must already be redacted."""
    out = [f"store {uri}"]
    for t in infos:
        out.append(f"\ntable {t.name}: {t.rows} rows, version {t.version}, "
                   f"dim {t.dim or '-'}, full-text index {'yes' if t.fts_indexed else 'no'}")
        roles = {r: c for r, c in t.roles.as_dict().items() if c}
        out.append("  roles   " + ", ".join(f"{r}={c}" for r, c in roles.items()))
        out.append("  columns " + ", ".join(f"{c}: {ty}" for c, ty in t.columns.items()))
        out.extend(f"  index   {i.describe()}" for i in t.vector_indexes)
        if t.read_mode in _READ_MODES:
            out.append(f"  read    {_READ_MODES[t.read_mode]}")
        out.extend(f"  note    {n}" for n in t.notes)
        if t.system:
            out.append(f"  system  {t.system_title}: preset {t.preset or '(none reproduces it)'}")
            out.extend(f"          {n}" for n in t.system_notes)
    return "\n".join(out)


def tables_json(uri: str, infos: list[TableInfo]) -> list[dict[str, object]]:
    """`inspector tables --json`: one object per table; `uri` must already be redacted."""
    out: list[dict[str, object]] = []
    for t in infos:
        one: dict[str, object] = {
            "store": uri, "name": t.name, "rows": t.rows, "version": t.version, "dim": t.dim,
            "fts_indexed": t.fts_indexed, "columns": t.columns, "roles": t.roles.as_dict(),
            "read_mode": t.read_mode, "notes": list(t.notes),
            "vector_indexes": [i.to_json() for i in t.vector_indexes]}
        if t.system:  # present when the table is recognised (shapes.shape_of)
            one["system"] = {"name": t.system, "title": t.system_title, "preset": t.preset,
                             "notes": list(t.system_notes)}
        out.append(one)
    return out
