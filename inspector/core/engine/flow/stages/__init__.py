"""Every stage kind, registered on import (the registry is `flow.registry.KINDS`)."""

from inspector.core.engine.flow.stages import (  # noqa: F401
    cuts,
    diversity,
    fixed,
    fusion,
    legs,
    openclaw_docs,
    query,
    scoring,
)
