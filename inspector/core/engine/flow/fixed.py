"""A fixed-pipeline file compiled to what the fixed engine takes: for a limit and whether a
scope is given, the Params fields (presets.Preset.build)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.spec import PipelineSpec
from inspector.core.errors import InspectorError

STAGES = ("fixed_fetch", "fixed_scope", "fixed_blend", "fixed_cut")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}
_FUNCS = {"min": min, "max": max}


def evaluate(expr: str, limit: int) -> float:
    """A depth expression over `limit`: numbers, + - * /, min(), max(); nothing else."""
    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name) and node.id == "limit":
            return limit
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _FUNCS and not node.keywords:
            return _FUNCS[node.func.id](*(ev(a) for a in node.args))
        raise InspectorError(f"The depth expression {expr!r} may use numbers, limit, "
                             f"+ - * / and min/max only.")

    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise InspectorError(f"The depth expression {expr!r} is not an expression.") from None
    return float(ev(tree))


def is_fixed(spec: PipelineSpec) -> bool:
    return spec.engine == "fixed"


def compile_fixed(spec: PipelineSpec) -> Callable[[int, bool], dict[str, Any]]:
    """build(limit, scoped) -> the Params fields the file sets."""
    if len(spec.routes) != 1:
        raise InspectorError(f"Fixed pipeline {spec.name} must have exactly one route.")
    by_kind: dict[str, dict[str, Any]] = {}
    for st in spec.routes[0].stages:
        if st.kind not in STAGES or st.kind in by_kind:
            raise InspectorError(f"Fixed pipeline {spec.name}: its stages are "
                                 f"{', '.join(STAGES)}, each once, in that order.")
        by_kind[st.kind] = kind_of(st.kind).resolve(st.params, st.name)
    if tuple(by_kind) != STAGES:
        raise InspectorError(f"Fixed pipeline {spec.name}: its stages are "
                             f"{', '.join(STAGES)}, each once, in that order.")
    f, s, b, c = (by_kind[k] for k in STAGES)
    tie_rule = spec.settings.get("tie_rule", "lancedb")

    def build(limit: int, scoped: bool) -> dict[str, Any]:
        over = evaluate(f["scoped_overfetch"], limit) if scoped and f["scoped_overfetch"] \
            else f["overfetch"]
        strategy = s["strategy_unscoped"] if not scoped and s["strategy_unscoped"] \
            else s["strategy"]
        return dict(mode=f["mode"], distance=f["distance"], overfetch=over, cap=f["cap"],
                    fts_k=f["fts_k"], vec_k=f["vec_k"], rrf_k=f["rrf_k"], blend=b["weight"],
                    default_importance=b["default_importance"], min_score=c["min_score"],
                    scope_strategy=strategy, scope_column=s["column"] or None,
                    filter=s["filter"], tie_rule=tie_rule)

    return build
