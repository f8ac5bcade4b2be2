"""The classic pipeline's shape: scope_rule -> lancedb_pool -> scope_filter -> importance_blend
-> min_score -> limit. Files written for the former fixed engine (`engine = "fixed"`, stages
fixed_fetch, fixed_scope, fixed_blend, fixed_cut) are read as that shape (`translate`)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from inspector.core.errors import InspectorError

if TYPE_CHECKING:  # spec reads translate; this module never needs spec at run time
    from inspector.core.engine.flow.spec import PipelineSpec

SHAPE = ("scope_rule", "lancedb_pool", "scope_filter", "importance_blend", "min_score",
         "limit")
_LEGACY = ("fixed_fetch", "fixed_scope", "fixed_blend", "fixed_cut")
# the former stages' defaults, which their files relied on
_FETCH = {"mode": "vector", "distance": "l2", "overfetch": 1.0, "scoped_overfetch": "",
          "cap": 50, "fts_k": 0, "vec_k": 0, "rrf_k": 60}
_SCOPE = {"strategy": "repo_prefix", "strategy_unscoped": "", "column": "", "filter": "post"}


def _params(st: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in st.items() if k not in ("name", "kind", "params")}
    out.update(st.get("params") or {})
    return out


def translate(data: dict[str, Any], where: str) -> dict[str, Any]:
    """A former fixed-pipeline file as a pipeline of the classic shape (same answers)."""
    data = copy.deepcopy(data)
    routes = data.get("routes")
    if not isinstance(routes, list) or len(routes) != 1 or not isinstance(routes[0], dict):
        raise InspectorError(f"The pipeline file {where}: a fixed pipeline has exactly one "
                             f"route.")
    stages = routes[0].get("stages")
    kinds = [st.get("kind") for st in stages] if isinstance(stages, list) and all(
        isinstance(st, dict) for st in stages) else []
    if sorted(set(kinds)) != sorted(_LEGACY) or len(kinds) != len(_LEGACY):
        raise InspectorError(f"The pipeline file {where}: a fixed pipeline's stages are "
                             f"{', '.join(_LEGACY)}, each once.")
    by = {st["kind"]: _params(st) for st in stages}
    unknown = {k: sorted(set(v) - set(_FETCH if k == "fixed_fetch" else _SCOPE
                                        if k == "fixed_scope" else
                                        ("weight", "default_importance")
                                        if k == "fixed_blend" else ("min_score",)))
               for k, v in by.items()}
    bad = [f"{k}.{n}" for k, names in unknown.items() for n in names]
    if bad:
        raise InspectorError(f"The pipeline file {where}: {', '.join(bad)} is not a parameter "
                             f"of the fixed pipeline.")
    fetch = {**_FETCH, **by["fixed_fetch"]}
    scope = {**_SCOPE, **by["fixed_scope"]}
    if scope["filter"] not in ("post", "pushdown"):
        raise InspectorError(f"The pipeline file {where}: fixed_scope.filter is post or "
                             f"pushdown, not {scope['filter']!r}.")
    blend = {"weight": 0.0, "default_importance": 0.7, **by["fixed_blend"]}
    cut = {"min_score": 0.0, **by["fixed_cut"]}
    routes[0]["stages"] = [
        {"name": "scope_rule", "kind": "scope_rule", "params": {
            "strategy": scope["strategy"], "strategy_unscoped": scope["strategy_unscoped"],
            "column": scope["column"], "pushdown": scope["filter"] == "pushdown"}},
        {"name": "fetch", "kind": "lancedb_pool", "params": fetch},
        {"name": "scope", "kind": "scope_filter", "params": {}},
        {"name": "blend", "kind": "importance_blend", "params": blend},
        {"name": "min_score", "kind": "min_score", "params": {"min": cut["min_score"]}},
        {"name": "final", "kind": "limit", "params": {}}]
    routes[0]["name"] = routes[0].get("name") if routes[0].get("name") not in (None, "fixed") \
        else fetch["mode"]
    data["engine"] = "stages"
    return data


def classic_stages(spec: PipelineSpec) -> dict[str, Any] | None:
    """The classic shape's stages by kind, or None when the pipeline has another shape."""
    if len(spec.routes) != 1:
        return None
    stages = spec.routes[0].stages
    if tuple(st.kind for st in stages) != SHAPE:
        return None
    return {st.kind: st for st in stages}
