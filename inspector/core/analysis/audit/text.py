"""The audits' text output (the CLI without --json)."""

from __future__ import annotations

from typing import Any

from inspector.core.analysis.audit.runs import starved_first


def _value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4f}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def _fix_line(fix: dict[str, Any]) -> str:
    """The smallest change that returns a memory (`--expect ID`'s search), or why none does."""
    best = fix.get("fix")
    if best is None:
        return f"no fix: {fix.get('no_fix', 'none found')}"
    what = "what-if" if best["kind"] == "what_if" else "own parameter"
    more = len(fix.get("alternatives") or [])
    return (f"fix ({what}): {' '.join(best['argv'])} returns it at rank {best['rank']}"
            + (f" ({more} other change{'s' if more != 1 else ''} too: --json)" if more else ""))


def format_recall(res: dict[str, Any], rows: int = 20) -> str:
    lines = [f"recallability of {res['probes']} memories under {res['pipeline']} (limit "
             f"{res['limit']}, scope {res['scope']})" +
             (" — cancelled, partial" if res["cancelled"] else "")]
    lines += [f"  {c:<16} {n}" for c, n in res["counts"].items() if n]
    never = res["never_recallable"]
    if never:
        lines.append(f"\nnever recalled by their own vector and text ({len(never)}):")
        for r in never[:rows]:
            d = ", ".join(f"{k} {_value(v)}" for k, v in r["detail"].items() if k != "fix")
            lines.append(f"  {r['id']:<32} {r['class']:<16} at {r['stage']} ({r['code']})"
                         + (f": {d}" if d else ""))
            fix = r["detail"].get("fix")
            if fix:
                lines.append("      " + _fix_line(fix))
        if len(never) > rows:
            lines.append(f"  … {len(never) - rows} more (--json lists every one)")
    lines.append(f"method: {res['method']}")
    return "\n".join(lines)


def format_scopes(res: dict[str, Any]) -> str:
    lines = [f"scope isolation under {res['pipeline']} ({res['per_scope']} probes a scope)",
             f"  {'scope':<28} {'memories':>8} {'probes':>6} {'short':>6} {'fixed':>6}  leaks in"]
    for s in res["scopes"]:
        leaks = ", ".join(f"{k}: {v}" for k, v in s["leaked_in"].items()) or "none"
        lines.append(f"  {s['scope']:<28} {s['memories']:>8} {s['probes']:>6} {s['short']:>6} "
                     f"{s['ended_by_pushdown']:>6}  {leaks}")
    starved = [(s["scope"], e) for s in starved_first(res["scopes"]) for e in s["examples"]]
    if starved:
        lines.append("\nshort of the limit (the most starved scopes first):")
        for scope, e in starved[:10]:
            push = "" if e["with_pushdown"] is None else f"; pushdown returns {e['with_pushdown']}"
            offer = f"; offered: {'; '.join(e['fixes'])}" if e.get("fixes") else ""
            crowd = list((e.get("crowded_by") or {}).items())[:3]
            if crowd:
                offer = "; the pool held " + ", ".join(
                    f"{n} row{'s' if n != 1 else ''} of {k}" for k, n in crowd) + offer
            lines.append(f"  {scope}: {e['id']} returned {e['returned']} of {e['limit']}"
                         f"{push}{offer}")
    lines.append(f"rows of another scope returned: {res['leak_total']}")
    if not res["pushdown_available"]:
        lines.append("(every leg already takes the scope as a prefilter, or none can)")
    lines.append(f"method: {res['method']}")
    return "\n".join(lines)


def format_change(res: dict[str, Any]) -> str:
    sets = ", ".join(f"{k}={v}" for k, v in res["set"].items())
    return (f"{res['pipeline']} with {sets} over {res['probes']} probes: {res['improved']} "
            f"improved, {res['hurt']} hurt; rows gained {res['rows_gained']}, lost "
            f"{res['rows_lost']}\nimproved: {[x['id'] for x in res['improved_ids']]}\n"
            f"hurt: {[x['id'] for x in res['hurt_ids']]}\nmethod: {res['method']}")
