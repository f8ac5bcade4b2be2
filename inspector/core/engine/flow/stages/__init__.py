"""Every stage kind, registered on import (the registry is `flow.registry.KINDS`)."""

from inspector.core.engine.flow.stages import (  # noqa: F401
    classic,
    cuts,
    diversity,
    fusion,
    importance,
    lance_where,
    legs,
    native,
    openclaw_docs,
    query,
    scoping,
    scoring,
)
from inspector.core.engine.flow.stages.systems import (  # noqa: F401
    agno,
    crewai,
    generative_agents,
    langchain,
    openclaw,
)

# The stage kinds that apply the caller's scope (--scope, --scope-list), or say that the system
# drops it, each with the parameter value that turns it off: a question asking a scope of a
# pipeline in which no stage applies one is refused (its answer would state a scope it never
# applied).
SCOPED_KINDS: dict[str, tuple[str, object] | None] = {
    "crewai_search": None, "crewai_deep_search": None, "lancedb_fts": None,
    "lancedb_vector": None, "lancedb_vector_where": ("scope_rule", "none"),
    "openclaw_docs_request": None, "openclaw_docs_cli_args": None,
    "openclaw_docs_scope": None, "scope_rule": None, "lancedb_search": ("scope_rule", "none"),
    "crewai_slice": None,
    # the system drops the caller's scope and filter (LangChain's by-vector call): the stage
    # says so in a warning naming the call, so the answer never claims a scope it applied
    "filter_dropped": None}


def applies_scope(kind: str, params: dict[str, object]) -> bool:
    """True when a stage of this kind, with these parameters, applies the caller's scope."""
    if kind not in SCOPED_KINDS:
        return False
    off = SCOPED_KINDS[kind]
    return off is None or params.get(off[0]) != off[1]
