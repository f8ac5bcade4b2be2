"""One probe, whatever the engine: the memory's own vector (and text) asked under the
pipeline, answered in the audit's vocabulary. `FlowProber` runs a pipeline of stages
(`engine.flow`), `fixed.FixedProber` the fixed pipeline (`engine.pipeline`); the audits
(`runs`) see only `Answer`s, so both engines share one audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from inspector.core.analysis.audit.memories import Memories, read_memories


@dataclass(frozen=True)
class Answer:
    """What one probe returned, and where its own memory fell (stage None: returned)."""

    ids: tuple[str, ...]  # returned, in the system's order
    limit: int
    stage: str | None
    code: str  # returned, or the engine's drop code
    detail: dict[str, Any]
    fixes: tuple[str, ...] = field(default=())  # what the engine's diagnosis offers
    crowded: dict[str, int] = field(default_factory=dict)  # rows the scope filter removed,
    # by their scope (fixed pipeline: the raw pool's out-of-scope rows)
    own_only: bool = False  # only the memory's own fate is known (the outrank shortcut of a
    # recall audit): `ids` is empty


class Prober(Protocol):
    """Runs probes for one pipeline on one store (`prepare` first, then `ask` per memory).
    `prepare(..., own_only=True)`: the audit reads only each memory's own fate (a recall
    audit), so a prober may answer a found memory without the rest of its list."""

    name: str
    engine: str

    def read(self, sample: int | None, seed: int) -> Memories: ...

    def prepare(self, mem: Memories, positions: Sequence[int],
                scopes: Sequence[tuple[str, ...] | None], own_only: bool = False) -> None: ...

    def ask(self, mem: Memories, i: int, scopes: tuple[str, ...] | None) -> Answer: ...

    def pushed(self) -> Prober | None: ...

    def changed(self, sets: dict[str, Any]) -> Prober: ...

    def method(self) -> dict[str, Any]: ...


def _read_from(spec: Any) -> dict[str, str]:
    """Where a pipeline of stages reads each memory's id, text, vector and scope: the columns
    (or a struct field, or a JSON-text key) its LanceDB fetch stage is told; by name otherwise."""
    from inspector.core.engine.flow.registry import kind_of

    for route in spec.routes:
        for st in route.stages:
            if st.kind == "lancedb_vector_where":
                p = kind_of(st.kind).resolve(st.params, st.name)
                return {"id": p["id_column"], "text": p["text_column"],
                        "vector": p["vector_column"], "scope": p["scope_path"] or "scope"}
    return {"id": "id", "text": "text", "vector": "vector", "scope": "scope"}


class FlowProber:
    """A pipeline of stages, one ordinary run per probe (`engine.flow.runner.run`)."""

    engine = "flow"

    def __init__(self, store: Any, spec: Any, limit: int | None, now_ms: float) -> None:
        self.store, self.spec, self.limit, self.now_ms = store, spec, limit, now_ms
        self.name = spec.name
        self.runs = 0

    def read(self, sample: int | None, seed: int) -> Memories:
        c = _read_from(self.spec)
        return read_memories(self.store, c["id"], c["text"], c["vector"],
                             lambda r: r.get(c["scope"]), (c["scope"],), sample, seed)

    def prepare(self, mem: Memories, positions: Sequence[int],
                scopes: Sequence[tuple[str, ...] | None], own_only: bool = False) -> None:
        return None

    def ask(self, mem: Memories, i: int, scopes: tuple[str, ...] | None) -> Answer:
        from inspector.core.engine.flow.expect import where_dropped
        from inspector.core.engine.flow.runner import run

        rid = mem.ids[i]
        vec = mem.vector(i)
        t = run(self.store, self.spec, text=mem.texts[i], vector=None if vec is None else
                vec.astype("float64"), scopes=scopes, limit=self.limit, now_ms=self.now_ms,
                query_source=f"example:{rid}")
        self.runs += 1
        fall = where_dropped(t, rid)
        return Answer(tuple(t.final.ids), t.limit, fall.stage, fall.code, dict(fall.detail))

    def pushed(self) -> FlowProber | None:
        """Every fetch stage that can take the scope as a prefilter doing so (None when
        every one already does, or none can)."""
        from inspector.core.engine.flow.registry import kind_of

        sets = {}
        for route in self.spec.routes:
            for st in route.stages:
                kind = kind_of(st.kind)
                if kind.role == "fetch" and "prefilter" in kind.by_name \
                        and not kind.resolve(st.params, st.name)["prefilter"]:
                    sets[f"{st.name}.prefilter"] = True
        return self.changed(sets) if sets else None

    def changed(self, sets: dict[str, Any]) -> FlowProber:
        from inspector.core.engine.flow.spec import apply_set

        return FlowProber(self.store, apply_set(self.spec, sets), self.limit, self.now_ms)

    def method(self) -> dict[str, Any]:
        return {"engine": "flow", "batched": False, "pipeline_runs": self.runs,
                "why": "a pipeline of stages runs each probe through its own stages "
                       "(one LanceDB search per leg and probe)"}
