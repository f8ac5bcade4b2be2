"""Named parameter sets that reproduce the real memory systems, depths included.

Each preset is a function of the caller's limit and scope, because the real systems derive
their candidate depths from both (REFERENCE.md section 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.params import Params
from inspector.core.engine.scope import is_global
from inspector.core.errors import InspectorError

DOCS_LEG_K = 20  # the docs engine's fts_k = vec_k default (its CLI uses 30)
DOCS_POOL_CAP = 50


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    depth_rule: str
    build: Callable[[int, bool], dict[str, Any]]
    ties: str = ""  # how the system orders equal scores (Params.tie_rule applies it)

    def params(self, limit: int = 10, scope: str | None = None, **overrides: Any) -> Params:
        """The preset's parameters for this limit and scope; explicit overrides win."""
        scoped = scope is not None and not is_global(scope)
        values = {"limit": limit, "scope": scope, **self.build(limit, scoped)}
        values.update(overrides)
        return Params(**values)


def _memory_today(limit: int, scoped: bool) -> dict[str, Any]:
    return dict(mode="vector", distance="l2", overfetch=1.0, cap=0, blend=0.0,
                min_score=0.5, scope_strategy="column", scope_column="agentId",
                filter="pushdown", tie_rule="lancedb")


def _importance_blend(limit: int, scoped: bool) -> dict[str, Any]:
    return dict(_memory_today(limit, scoped), overfetch=3.0, cap=50, blend=0.5)


def _docs(limit: int, scoped: bool, *, overfetch: bool, pushdown: bool) -> dict[str, Any]:
    f = 1.0
    if overfetch and scoped:
        f = min(DOCS_POOL_CAP, max(limit * 5, DOCS_LEG_K, DOCS_LEG_K)) / limit
    return dict(mode="hybrid", distance="l2", overfetch=f, cap=DOCS_POOL_CAP,
                fts_k=DOCS_LEG_K, vec_k=DOCS_LEG_K, rrf_k=60, blend=0.0, min_score=0.0,
                scope_strategy="repo_prefix", filter="pushdown" if pushdown else "post",
                tie_rule="id")


def _other_plugin(limit: int, scoped: bool) -> dict[str, Any]:
    return dict(mode="vector", distance="cosine", overfetch=10.0, cap=200, blend=0.3,
                min_score=0.0, scope_strategy="column", scope_column="scope", filter="post",
                tie_rule="lancedb")


def _openclaw(limit: int, scoped: bool) -> dict[str, Any]:
    return dict(_memory_today(limit, scoped), scope_strategy="agent_scope", scope_column=None)


def _engine_memory(limit: int, scoped: bool) -> dict[str, Any]:
    """The public engine's memory recall: both legs filtered by scope in LanceDB, RRF k = 60."""
    return dict(mode="hybrid", distance="l2", overfetch=1.0, cap=DOCS_POOL_CAP,
                fts_k=DOCS_LEG_K, vec_k=DOCS_LEG_K, rrf_k=60, blend=0.0, min_score=0.0,
                scope_strategy="column" if scoped else "none", scope_column="scope",
                filter="pushdown", tie_rule="id")


_VEC_ORDER = ("LanceDB's vector order, equal distances by row id (its flat search sorts by "
              "distance, then row id)")
_LANCEDB_VEC = "lancedb: " + _VEC_ORDER
_STABLE = ("; the re-sort by blended score is assumed stable (a JavaScript sort is), so equal "
           "scores keep LanceDB's order: the plugin's code does not say")
_DOCS_TIES = ("id: RRF float64 score, ties by id ascending, as the engine's fusion does "
              "(REFERENCE.md 1A); legs of a SQLite docs file: FTS5 bm25 ties by rowid, vector "
              "ties by chunk rowid (the engine's own cosine tie order is not documented)")

PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("memory-plugin", "Memory plugin today: vector only, importance ignored",
           "limit (no over-fetch); agentId pushed down", _memory_today,
           _LANCEDB_VEC + "; no re-sort"),
    Preset("importance-blend", "Memory plugin with the importance-blend proposal (w = 0.5)",
           "min(limit*3, 50)", _importance_blend, _LANCEDB_VEC + _STABLE),
    Preset("docs-before-fix", "Docs search before the fix: hybrid, scope filtered after the cut",
           "legs fts_k = vec_k = 20, fused list cut to limit, then post-filter",
           lambda n, s: _docs(n, s, overfetch=False, pushdown=False), _DOCS_TIES),
    Preset("docs-overfetch", "Docs search with the over-fetch fix",
           "min(50, max(limit*5, fts_k, vec_k)) when scoped",
           lambda n, s: _docs(n, s, overfetch=True, pushdown=False), _DOCS_TIES),
    Preset("docs-pushdown", "Docs search with scope pushdown (post-filter kept as defence)",
           "repo allowlist as a prefilter; over-fetch as in docs-overfetch",
           lambda n, s: _docs(n, s, overfetch=True, pushdown=True), _DOCS_TIES),
    Preset("other-plugin", "The other public plugin: cosine, 0.7 + 0.3 * importance",
           "min(limit*10, 200)", _other_plugin,
           "lancedb, but unknown: the plugin's tie order is not published; the inspector "
           "applies " + _VEC_ORDER + " and a stable re-sort"),
    Preset("openclaw", "OpenClaw memory plugin: scope AGENT or AGENT/SCOPE ('' or NULL = global)",
           "limit (no over-fetch); agentId and scope pushed down", _openclaw,
           _LANCEDB_VEC + "; no re-sort"),
    Preset("engine-memory", "The public engine's memory recall: FTS + vector, RRF k = 60",
           "legs fts_k = vec_k = 20, both filtered by scope, fused list cut to limit",
           _engine_memory,
           "id: RRF ties by id ascending, assumed the same fusion as the engine's docs search "
           "(REFERENCE.md 1A; its memory recall's own tie order is not documented); legs are "
           "LanceDB's: vector ties by row id, full-text ties in an arbitrary order"),
)}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise InspectorError(f"Unknown preset '{name}'; choose one of "
                             f"{', '.join(PRESETS)}.") from None
