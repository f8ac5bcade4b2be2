"""JSON Schemas of the input files a user writes by hand: judgments (and query sets), checks,
scope maps. Their readers (`analysis.judgments`, `evidence.checks`, `evidence.audit_checks`,
`engine.scope`) say more than a schema can (a grade given as text must parse as a number, a
preset must exist, an option must be held by one of its stages, a metric needs judgments);
a file a reader accepts always fits its schema, and the schemas are built from the readers'
own declarations where there are any (the audit checks' keys and assertions, the question
model), so they cannot drift apart."""

from __future__ import annotations

from typing import Any

DRAFT = "https://json-schema.org/draft/2020-12/schema"
_TEXT = {"type": "string"}
_TEXT_OR_NULL = {"type": ["string", "null"]}
_GRADE = {"description": "a number >= 0; text that reads as one; null or '' = 1",
          "anyOf": [{"type": "number", "minimum": 0}, {"type": "string"}, {"type": "null"}]}
_MARKS = {"description": "id -> grade, or a list of ids (grade 1)",
          "anyOf": [{"type": "object", "additionalProperties": _GRADE},
                    {"type": "array", "items": {"type": ["string", "number"]}}]}


def scope_map_schema() -> dict[str, Any]:
    """`--scope-map FILE`: scope -> the repo or path prefixes it covers."""
    return {"$schema": DRAFT, "title": "inspector scope map", "type": "object",
            "additionalProperties": {"anyOf": [_TEXT, {"type": "array", "items": _TEXT}]}}


def _query_entry() -> dict[str, Any]:
    return {"type": "object", "required": ["query"],
            "properties": {"query": _TEXT, "scope": _TEXT_OR_NULL, "name": {},
                           "vector_of": _TEXT_OR_NULL,
                           "vector": {"type": "array", "minItems": 1, "items": {"type": "number"}},
                           "judgments": _MARKS, "relevant": _MARKS}}


def judgments_schema() -> dict[str, Any]:
    """A judgments or query-set file (JSON; the CSV form has the columns query, scope, id,
    grade, name): the queries, each with its scope and graded ids."""
    entries = {"type": "array", "items": _query_entry()}
    return {"$schema": DRAFT, "title": "inspector judgments / query set",
            "anyOf": [entries, {"type": "object", "required": ["queries"],
                                "properties": {"format": {"const": "inspector-judgments"},
                                               "version": {"type": "integer"},
                                               "queries": entries}}]}


def _assertions(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "minItems": 1, "items": items}


def _audit_entry() -> dict[str, Any]:
    from inspector.core.evidence.audit_checks import _OPTIONS, ASSERTS, KINDS

    every = sorted({a for kind in KINDS for a in ASSERTS[kind]})
    props: dict[str, Any] = {k: {} for k in _OPTIONS}  # every key the reader takes
    props.update(audit={"enum": list(KINDS)}, name=_TEXT, preset=_TEXT, pipeline=_TEXT,
                 scope=_TEXT, set={"type": "object"},
                 limit={"type": "integer", "minimum": 1, "maximum": 1_000_000})
    props["assert"] = {"anyOf": [{"enum": every}, _assertions({"enum": every})]}
    return {"type": "object", "required": ["audit", "assert"], "properties": props,
            "additionalProperties": False,
            "anyOf": [{"required": ["preset"]}, {"required": ["pipeline"]}]}


def _question_entry() -> dict[str, Any]:
    from inspector.core.engine.flow.question import question_schema

    q = question_schema()
    q["required"] = [k for k in q.get("required", []) if k != "store"]  # the file's store
    return {"type": "object", "required": ["question", "assert"],
            "properties": {"name": _TEXT, "question": q,
                           "relevant": _MARKS,
                 "assert": _assertions({"type": ["string", "object"]})}}


def _short_entry() -> dict[str, Any]:
    props = {k: _TEXT for k in ("name", "text", "vector_of", "embedder", "preset", "scope")}
    props.update(limit={"type": "integer", "minimum": 1},
                 params={"description": "the options of `inspector query` by name (overfetch, "
                         "blend, filter, ...), each set on the stage that holds it",
                         "type": "object"},
                 set={"description": "STAGE.PARAM -> value", "type": "object"},
                 relevant=_MARKS, **{"assert": _assertions({"type": ["string", "object"]})})
    return {"type": "object", "required": ["assert"], "properties": props,
            "anyOf": [{"required": ["text"]}, {"required": ["vector_of"]}],
            "not": {"anyOf": [{"required": ["question"]}, {"required": ["audit"]}]}}


def checks_schema() -> dict[str, Any]:
    """`inspector check FILE`: checks of a question (its short form: a query, a preset, its
    options; or the whole `question`) and over whole stores (`audit`)."""
    entry = {"anyOf": [_short_entry(), _question_entry(), _audit_entry()]}
    return {"$schema": DRAFT, "title": "inspector checks", "type": "object",
            "required": ["checks"],
            "properties": {"format": {"const": "inspector-checks"},
                           "version": {"type": "integer"}, "store": _TEXT, "table": _TEXT,
                           "judgments": _TEXT, "defaults": {"type": "object"},
                           "checks": {"type": "array", "items": entry}}}


SCHEMAS = {"judgments": judgments_schema, "checks": checks_schema,
           "scope-map": scope_map_schema}
