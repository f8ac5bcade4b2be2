"""OpenClaw memory-lancedb's filters after its search: recalled texts that are blank (or, in
the plugin, envelope sludge) are dropped, and auto-recall injects at most a fixed number."""

from __future__ import annotations

from typing import Any

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, CutDrops, Drop, Outcome, Scored


@stage("recallable_text", "filter")
def recallable(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """cleanMemorySearchResults: a blank text is dropped (the plugin's looksLikeEnvelopeSludge
    check on channel-envelope text is not reproduced)."""
    keep, dropped = [], []
    for s in rows:
        if s.row.text.strip():
            keep.append(s)
        else:
            dropped.append(Drop(s.id, "blank_text"))
    return Outcome(keep, tuple(dropped))


@stage("cap", "cut", P("n", "int", 3, "keep the first n rows, whatever the limit", 0, 1_000_000,
                       effect="depth"), widens=True)
def cap(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep the first n rows (a constant of the system, not the caller's limit)."""
    n = ctx.wide(p["n"])
    return Outcome(rows[:n], CutDrops(rows, n, "past_limit", "limit"))
