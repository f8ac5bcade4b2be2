"""The fixed pipeline's stages (fetch -> scope -> importance blend -> min score -> limit), as
pipeline files declare them. They run in the fixed engine (engine/pipeline.py), which the
window, sweeps and receipts re-rank live; `flow.fixed` compiles such a file to its Params."""

from __future__ import annotations

from typing import Any

from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Outcome, Scored
from inspector.core.errors import InspectorError

# the same names and bounds as Params (engine/params.py), which checks them again
MODES = ("vector", "fts", "hybrid")
STRATEGIES = ("repo_prefix", "path_prefix", "map", "column", "none", "agent_scope")


def _elsewhere(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    raise InspectorError("This stage belongs to the fixed pipeline, which runs in the fixed "
                         "engine (a preset or --pipeline with engine = \"fixed\").")


stage("fixed_fetch", "fetch",
      P("mode", "str", "vector", "vector, fts or hybrid (RRF)", live=False, choices=MODES),
      P("distance", "str", "l2", "l2 (squared) or cosine", live=False,
        choices=("l2", "cosine")),
      P("overfetch", "float", 1.0, "pool depth ceil(limit * F)", 1, 1e6),
      P("scoped_overfetch", "str", "", "F when a scope is given, as an expression of limit "
        "(e.g. min(50, max(limit * 5, 20)) / limit); empty: overfetch"),
      P("cap", "int", 50, "largest pool depth (0 = none)", 0, 1_000_000),
      P("fts_k", "int", 0, "full-text leg floor (hybrid)", 0, 1_000_000),
      P("vec_k", "int", 0, "vector leg floor (hybrid)", 0, 1_000_000),
      P("rrf_k", "int", 60, "RRF constant", 0, 1_000_000))(_elsewhere)
stage("fixed_scope", "filter",
      P("strategy", "str", "repo_prefix", "the scope rule", live=False, choices=STRATEGIES),
      P("strategy_unscoped", "str", "", "the rule when no scope is given (empty: strategy)",
        live=False),
      P("column", "str", "", "the column a column rule compares (empty: none)", live=False),
      P("filter", "str", "post", "post: after the cut; pushdown: a LanceDB prefilter",
        live=False, choices=("post", "pushdown")))(_elsewhere)
stage("fixed_blend", "transform",
      P("weight", "float", 0.0, "w: score * ((1 - w) + w * importance)", 0, 1),
      P("default_importance", "float", 0.7, "used for NULL importance", -1e9, 1e9))(_elsewhere)
stage("fixed_cut", "cut",
      P("min_score", "float", 0.0, "drop blended scores below this", -1e9, 1e9))(_elsewhere)
