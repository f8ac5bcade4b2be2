"""The window's question: the core's Question as an evented model (psygnal), validated on every
assignment, with one change event per field (`q.events.text`, `q.events.set`, ...), as ndv's
models and napari's Dims are. Widgets write it on a user's move and subscribe to its events;
the view-model reacts to them. No widget keeps a copy of a field."""

from __future__ import annotations

import time
from typing import Any

from psygnal import EventedModel
from pydantic import ConfigDict, ValidationError

from inspector.core.engine.flow.question import Question
from inspector.core.errors import InspectorError

DEFAULT_PRESET = "lancedb"  # LanceDB's own search, as `inspector query` runs with none named


class WindowQuestion(Question, EventedModel):
    """What the window asks now. Always names a pipeline and a clock."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True)

    @classmethod
    def fresh(cls) -> WindowQuestion:
        return cls(store="", preset=DEFAULT_PRESET, now=time.time() * 1000)

    def plain(self) -> Question:
        """The core's Question with the same fields (what is saved, sent and answered)."""
        return Question.model_validate(self.model_dump(by_alias=True))

    def put(self, **changes: Any) -> list[str]:
        """Several fields at once: the whole new question is validated first (one sentence
        naming the field when it is not valid, and nothing changes), then each field that
        differs is set and its event emitted once every field holds its new value (a pair such
        as preset -> pipeline_file passes through no invalid state). Returns the changed
        fields."""
        merged = {**self.model_dump(by_alias=False), **changes}
        merged["schema"] = merged.pop("schema_", 1)
        try:
            checked = Question.model_validate(merged)
        except ValidationError as exc:
            raise InspectorError(sentence(exc)) from None
        changed = [k for k in changes if getattr(checked, k) != getattr(self, k)]
        for k in changed:
            self.__dict__[k] = getattr(checked, k)
        for k in changed:
            getattr(self.events, k).emit(getattr(self, k))
        return changed

    def replace_with(self, q: Question) -> list[str]:
        """Every field of `q` (a saved or given question) put at once."""
        fields = q.model_dump(by_alias=False)
        fields.pop("schema_", None)
        return self.put(**fields)


def sentence(exc: ValidationError) -> str:
    """A validation error as one sentence naming the field."""
    first = exc.errors()[0]
    where = ".".join(str(x) for x in first.get("loc", ()) if x != "__root__")
    msg = str(first.get("msg", "")).removeprefix("Value error, ")
    return f"The question's {where} is not valid: {msg}." if where else \
        f"The question is not valid: {msg}."


# ---- a store's own question ----

SUGGESTION_OPTIONS = ("mode", "min_score", "blend", "overfetch", "filter", "cap", "fts_k",
                      "vec_k", "rrf_k", "scope_strategy", "scope_column", "nprobes",
                      "refine_factor", "ef")


def suggestion_question(s: dict[str, Any]) -> dict[str, Any]:
    """A store's suggested query (a demo story) as the question's fields: its preset, text,
    scope, limit and expected rows, and its classic options (`blend`, `overfetch`, ...) as
    the --set assignments of the stages that hold them, as `inspector query` reads them."""
    from inspector.core.engine.flow.spec import held_options, load_shipped

    preset = str(s.get("preset") or DEFAULT_PRESET)
    spec = load_shipped(preset)
    options = {k: s[k] for k in SUGGESTION_OPTIONS if k in s}
    held = held_options(spec, options)
    missing = [k for k in options if k not in held]
    if missing:
        raise InspectorError(f"The suggested query {s.get('name', '')!r} sets "
                             f"{', '.join(missing)}, which pipeline {preset} does not take.")
    scope = s.get("scope")
    return {"preset": preset, "pipeline_file": None, "system_config": None,
            "set": {k: v for one in held.values() for k, v in one.items()},
            "text": s.get("text") or None, "vector": None, "vector_of": None,
            "scopes": [str(scope)] if scope else None, "limit": s.get("limit"),
            "expect": [str(x) for x in s.get("expect", [])], "widen": {}, "exact": False,
            "columns": {}}


def opened_question(q: Question, store: Any, shape: Any) -> tuple[dict[str, Any], list[str]]:
    """What the question becomes on another store: the store's suggested preset (its shape's,
    else LanceDB's own search), no scopes or expected rows of the other store; the text and
    the column roles it has stay. What cannot apply (a vector of another dimension, column
    roles naming columns it lacks, a row of the other table) is dropped with a line."""
    from inspector.core.engine.flow.shipped import shipped_names

    lines: list[str] = []
    preset = shape.preset if shape is not None and shape.preset in shipped_names() \
        else DEFAULT_PRESET
    changes: dict[str, Any] = {
        "preset": preset, "pipeline_file": None, "system_config": None, "set": {},
        "scopes": None, "expect": [], "widen": {}, "exact": False, "limit": None,
        "vector_of": None, "columns": {}, "embedder": None}
    if q.vector_of is not None:
        lines.append(f"The example row {q.vector_of} is a row of the other table: this store "
                     f"starts from a text query.")
    if q.vector is not None and len(q.vector) != store.dim:
        changes["vector"] = None
        lines.append(f"The query vector ({len(q.vector)} dimensions) does not fit this store's "
                     f"{store.dim}-dimensional vectors: dropped.")
    names = set(getattr(store, "schema", None).names) if getattr(store, "schema", None) \
        is not None else set()
    gone = [f"{role}={col}" for role, col in q.columns.items()
            if col.split(".")[0] not in names]
    changes["columns"] = {r: c for r, c in q.columns.items() if c.split(".")[0] in names}
    if gone:
        lines.append(f"Column roles {', '.join(gone)} name columns this table does not have: "
                     f"dropped; its own roles apply.")
    return changes, lines
