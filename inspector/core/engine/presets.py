"""Named parameter sets that reproduce the real memory systems, depths included: the fixed
pipeline's presets, each read from its pipeline file (resources/pipelines/NAME.toml, engine =
"fixed"). Each is a function of the caller's limit and scope, because the real systems derive
their candidate depths from both (REFERENCE.md section 1). Pipeline presets of other shapes
(memory-lancedb-pro) run in `engine.flow`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.fixed import compile_fixed, is_fixed
from inspector.core.engine.flow.spec import PipelineSpec, load_shipped
from inspector.core.engine.params import Params
from inspector.core.engine.scope import is_global
from inspector.core.errors import InspectorError

# the order the window's combo and `inspector presets` list them in
FIXED = ("memory-plugin", "importance-blend", "docs-before-fix", "docs-overfetch",
         "docs-pushdown", "other-plugin", "openclaw-search-defaults", "engine-memory")
# fixed presets whose name now means a pipeline of stages: name -> the fixed preset's new name
FORMER_FIXED = {"openclaw": "openclaw-search-defaults"}


def former_note(name: object) -> str:
    """For a name that was a fixed preset: where that preset went (else empty)."""
    if not isinstance(name, str) or name not in FORMER_FIXED:
        return ""
    return (f" {name} is now a pipeline of stages (the system as its code runs today); the "
            f"fixed preset it named is {FORMER_FIXED[name]}.")


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    depth_rule: str
    build: Callable[[int, bool], dict[str, Any]]
    ties: str = ""  # how the system orders equal scores (Params.tie_rule applies it)
    # what the real system passes to a vector index: none of them pass knobs
    index_knobs: str = "none: LanceDB's default search (nprobes 20, no refine, ef 1.5 * k)"

    def params(self, limit: int = 10, scope: str | None = None, **overrides: Any) -> Params:
        """The preset's parameters for this limit and scope; explicit overrides win."""
        scoped = scope is not None and not is_global(scope)
        values = {"limit": limit, "scope": scope, **self.build(limit, scoped)}
        values.update(overrides)
        return Params(**values)


def from_spec(spec: PipelineSpec) -> Preset:
    """A fixed-pipeline file as a Preset (refused when the file is a pipeline of stages)."""
    if not is_fixed(spec):
        raise InspectorError(f"Pipeline {spec.name} is a pipeline of stages, not the fixed "
                             f"pipeline: it runs in `inspector query`.")
    return Preset(spec.name, spec.title, spec.depth_rule, compile_fixed(spec), spec.ties,
                  spec.index_knobs)


PRESETS: dict[str, Preset] = {name: from_spec(load_shipped(name)) for name in FIXED}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise InspectorError(f"Unknown preset '{name}'; choose one of "
                             f"{', '.join(PRESETS)}.{former_note(name)}") from None
