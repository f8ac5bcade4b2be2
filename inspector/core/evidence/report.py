"""Readable text for the store and pipeline listings: `inspector tables` and `inspector
presets` (a query's answer is told by `flow.answer.format_text`)."""

from __future__ import annotations

from inspector.core.engine.flow.shipped import ALIASES, shipped_names
from inspector.core.engine.flow.spec import load_shipped
from inspector.core.stores.store import TableInfo

# a preset name that once named the former fixed engine's reading of a system, and the
# pipeline file holding that reading now
FORMER_FIXED = {"openclaw": "openclaw-search-defaults"}


def format_presets() -> str:
    """Every shipped pipeline: the system and version it was read from, its depths, ties and
    index knobs, and what it does not reproduce."""
    lines = []
    pad = " " * 18
    for name in shipped_names():
        spec = load_shipped(name)
        lines.append(f"{name:<18} {spec.title}\n{pad} read from: {spec.system} {spec.version}")
        for label, value in (("depth", spec.depth_rule), ("ties", spec.ties),
                             ("index knobs", spec.index_knobs)):
            if value:
                lines.append(f"{pad} {label}: {value}")
        if spec.not_reproduced:
            lines.append(f"{pad} not reproduced: {'; '.join(spec.not_reproduced)}")
    lines.append("\nformer names, still accepted: " + ", ".join(
        f"{old} (now {new})" for old, new in ALIASES.items()) + "; the fixed preset once "
        "called " + ", ".join(f"{old} is {new}" for old, new in FORMER_FIXED.items())
        + "\n`inspector pipeline show NAME` lists every stage and parameter")
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
