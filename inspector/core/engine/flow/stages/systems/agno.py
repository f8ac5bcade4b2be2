"""Agno's knowledge search on its LanceDB vector store (agno 3.1.10, `agno.vectordb.lancedb.
LanceDb.search`), after LanceDB's own search (`native.lancedb_search`): the dict `filters`
as a Python post-filter on the payload's meta_data AFTER the limit cut (so a filtered search
often returns fewer than the limit), then a de-duplication by the md5 of the content."""

from __future__ import annotations

import hashlib
from typing import Any

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Scored


@stage("meta_filter", "filter",
       P("filters", "table", {}, "search(filters={...}): a row is kept when its meta_data has "
         "every key with an equal value (Python ==); rows without meta_data are dropped"))
def meta_filter(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep the rows whose metadata holds every filter key with an equal value (in Python,
    over the rows the search returned: nothing replaces a dropped row)."""
    want = p["filters"]
    if not want:
        return Outcome(rows, note="no filters")
    keep: list[Scored] = []
    dropped: list[Drop] = []
    for s in rows:
        meta = s.row.metadata
        miss = next((k for k, v in want.items() if k not in meta or meta[k] != v), None)
        if miss is None and meta:
            keep.append(s)
        else:
            dropped.append(Drop(s.id, "metadata_filter",
                                (("key", miss), ("value", meta.get(miss) if miss else None))))
    return Outcome(keep, tuple(dropped), note=f"meta_data must match {want}")


@stage("content_dedupe", "filter")
def content_dedupe(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep the first row of each content (the md5 of its text): Agno's de-duplication of rows
    that hybrid search may return twice, which also folds stored copies of one text."""
    seen: dict[str, str] = {}
    keep: list[Scored] = []
    dropped: list[Drop] = []
    for s in rows:
        digest = hashlib.md5(s.row.text.encode()).hexdigest()  # noqa: S324 - Agno's own key
        if digest in seen:
            dropped.append(Drop(s.id, "duplicate", (("same_as", seen[digest]),)))
        else:
            seen[digest] = s.id
            keep.append(s)
    return Outcome(keep, tuple(dropped))
