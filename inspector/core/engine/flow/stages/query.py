"""Query-side stages: they change what the legs search for, not the candidates."""

from __future__ import annotations

import re
from typing import Any

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Outcome, Scored


@stage("query_expansion", "query",
       P("enabled", "bool", True, "queryExpansion: append synonyms to the full-text query"),
       P("sources", "list", ("manual", "cli"), "callers whose queries are expanded (the "
         "pipeline setting `source` names the caller)"),
       P("max_terms", "int", 5, "most synonyms appended", 0, 100),
       P("synonyms", "table", {}, "groups: {name: {match_cn: [...], match_en: [...], add: "
         "[...]}}, tried in order"))
def expand(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Append synonyms to the full-text query (the vector query is untouched)."""
    text = ctx.text or ""
    ctx.bm25_text = text
    if not p["enabled"] or ctx.settings.get("source") not in p["sources"]:
        return Outcome(rows, note=f"not expanded (caller {ctx.settings.get('source')!r})")
    if len(text.strip()) < 2:
        return Outcome(rows, note="not expanded (query too short)")
    lower = text.lower()
    added: list[str] = []
    for group in p["synonyms"].values():
        cn = any(t.lower() in lower for t in group.get("match_cn", ()))
        en = any(re.search(r"\b" + re.escape(t) + r"\b", text, re.I | re.ASCII)
                 for t in group.get("match_en", ()))
        if not (cn or en):
            continue
        for term in group.get("add", ()):
            if term.lower() not in lower and term not in added:
                added.append(term)
            if len(added) >= p["max_terms"]:
                break
        if len(added) >= p["max_terms"]:
            break
    if added:
        ctx.bm25_text = f"{text} {' '.join(added)}"
    return Outcome(rows, note=f"full-text query: {ctx.bm25_text!r}")
