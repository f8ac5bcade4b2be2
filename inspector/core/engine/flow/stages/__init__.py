"""Every stage kind, registered on import (the registry is `flow.registry.KINDS`)."""

from inspector.core.engine.flow.stages import (  # noqa: F401
    agno,
    classic,
    crewai,
    cuts,
    diversity,
    fusion,
    generative_agents,
    lance_where,
    langchain,
    legs,
    native,
    openclaw,
    openclaw_docs,
    query,
    scoring,
)
