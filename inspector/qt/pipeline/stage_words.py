"""What the fixed pipeline's stage tables say: stage titles, columns, the widest text of each
narrow column, header tips, the scope cell's mark and value, and each row's fate."""

from __future__ import annotations

TITLES = {"raw": "Raw candidates", "scoped": "Scoped candidates",
          "blended": "Importance-blended", "final": "Final results"}
COLUMNS = {
    "raw": ("#", "text", "base", "scope"),
    "scoped": ("#", "text", "base", "imp"),
    "blended": ("#", "Δ", "text", "×imp", "score"),
    "final": ("#", "text", "score"),
}
# the widest text each narrow column shows: widths are measured from these with the table's
# font (QFontMetrics), so they fit at any font size
SAMPLES = {"#": ("12=", "12!"), "Δ": ("▲99", "▼99"), "id": ("0000000…",),
           "base": ("0.0000",), "imp": ("0.00",), "×imp": ("0.000",), "score": ("0.0000",)}
BASE_NAME = {"vector": "vector", "fts": "bm25", "hybrid": "fused"}




def verdict(in_scope: bool, had: str) -> str:
    """The scope cell, a mark plus a value: "✓ in", or the value the row had instead of the
    scope, as the engine reports it (`Pool.scope_value`: "✗ platform-docs" where the scope
    is vault-agent); the scope itself is in the stage note and the whole rule in the tooltip.
    A receipt older than that field says only "✗ out"."""
    if in_scope:
        return "✓ in"
    return f"✗ {had}" if had else "✗ out"


FATE_TEXT = {
    "returned": "Returned at rank {rank}.",
    "below_min_score": "Cut: blended score below min score {min}.",
    "past_limit": "Cut: ranked past the limit of {limit}.",
    "out_of_scope": "Out of scope: removed by the scope filter.",
    "not_fetched": "Not among the raw candidates.",
}
HEADER_TIPS = {
    "#": "Position in this stage. The dot says where the row ends up: green returned, red "
         "below min score, blue past the limit, grey out of scope.",
    "text": "The row's text (★ marks a row you expect to be returned); hover for its id.",
    "base": "Score before importance: 1/(1+distance) for vector search, reciprocal-rank fusion "
            "for hybrid.",
    "scope": "Whether the scope filter keeps the row: ✓ in, or ✗ and the value the row had "
             "instead (its repo or path); hover a cell for the whole rule. ⚠ marks rows where "
             "the pushed-down predicate disagrees with the post-filter.",
    "imp": "Importance used (missing values take the default importance).",
    "×imp": "Importance multiplier (1 - w) + w * importance.",
    "score": "Blended score = base score x importance multiplier.",
    "Δ": "Rank change from blending: ▲ moved up, ▼ moved down.",
}
