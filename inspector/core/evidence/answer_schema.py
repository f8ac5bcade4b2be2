"""The JSON Schema of the one answer (schema 3): what `inspector query --json` prints for every
preset and pipeline file, what an export writes as answer.json, what each side of a receipt
holds, what the notebook API's `Result.to_json()` returns. Every stage in order (the last one
the final list in the real system's order), each with its candidates, the rows it dropped and
why; the counters, the diagnosis with the fixes that were run, the what-if, the expected rows,
the ties and the index facet in the same places for every pipeline.

Built from the engine's own declarations where there are any (the diagnosis codes, the drop
codes, the question model), so a new code cannot go undocumented; every object the engine
writes lists all its keys, and an answer with a key the schema does not know fails
(tests/core/evidence/test_answer_schema.py runs real answers through it)."""

from __future__ import annotations

from typing import Any

from inspector.core.evidence.file_schemas import DRAFT

_STR = {"type": "string"}
_INT = {"type": "integer"}
_NUM = {"type": "number"}
_BOOL = {"type": "boolean"}
_ID = {"description": "the row's id as stored (text or a number)", "type": ["string", "integer"]}
_STR_OR_NULL = {"type": ["string", "null"]}
_INT_OR_NULL = {"type": ["integer", "null"]}
_NUM_OR_NULL = {"description": "null where the value is not finite or does not apply",
                "type": ["number", "null"]}
_RANK = {"description": "1-based; null where the row is not in that list", **_INT_OR_NULL}
_IDS = {"type": "array", "items": _ID}
_TEXTS = {"type": "array", "items": _STR}
_ANY_OBJ = {"type": "object"}
_VECTOR = {"description": "the query vector, null for a text-only query",
           "anyOf": [{"type": "array", "items": _NUM}, {"type": "null"}]}


def _obj(props: dict[str, Any], optional: tuple[str, ...] = (), *,
         description: str = "") -> dict[str, Any]:
    """An object with exactly these keys: every one required but `optional`, none other."""
    out: dict[str, Any] = {"type": "object", "properties": props,
                           "required": [k for k in props if k not in optional],
                           "additionalProperties": False}
    return {"description": description, **out} if description else out


def _maybe(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [{"type": "null"}, schema]}


def _store() -> dict[str, Any]:
    return _obj({"uri": _STR, "table": _STR_OR_NULL, "version": _INT_OR_NULL, "rows": _INT,
                 "index": {"description": "the table's vector index type, null when flat",
                           **_STR_OR_NULL}},
                description="the store and table answered, at the version read")


def _candidate() -> dict[str, Any]:
    return _obj({"id": _ID, "rank": {"type": "integer", "minimum": 1}, "score": _NUM_OR_NULL,
                 "score_before": _NUM_OR_NULL, "rank_before": _RANK,
                 "inputs": {"description": "the inputs to this row's score, by name (a fetch: "
                            "vec_rank, distance, vector, fts_rank, bm25, fused; a blend: "
                            "importance, multiplier; ...)", "type": "object",
                            "additionalProperties": _NUM_OR_NULL},
                 "scope": _STR_OR_NULL, "importance": _NUM_OR_NULL,
                 "timestamp": _NUM_OR_NULL, "text_length": _INT})


def _stage() -> dict[str, Any]:
    from inspector.core.engine.flow.registry import ROLES
    from inspector.core.engine.flow.rows import DROP_LABELS

    dropped = {"type": "object", "required": ["id", "code"],
               "properties": {"id": _ID, "code": {"enum": sorted(DROP_LABELS)}},
               "description": "a row the stage dropped, its reason code and the code's facts"}
    return _obj({"name": _STR, "kind": _STR, "role": {"enum": list(ROLES)}, "count": _INT,
                 "count_in": {"description": "rows it read; null for a fetch",
                              **_INT_OR_NULL},
                 "note": _STR_OR_NULL,
                 "candidates": {"type": "array", "items": _candidate()},
                 "dropped": {"type": "array", "items": dropped},
                 "deferred": _IDS,
                 "facts": {"description": "what else the stage computed: a fetch's depth, "
                           "vec_k, fts_k, pushdown_sql, index; the scope filter's "
                           "rawCandidates, scopedCandidates, filteredByScope; ...",
                           **_ANY_OBJ}})


def _fix() -> dict[str, Any]:
    return _obj({"label": _STR, "kind": {"enum": ["own", "what_if"]},
                 "argv": {"description": "the extra command-line arguments that apply the "
                          "fix to the same query", **_TEXTS},
                 "changes": {"description": "STAGE.PARAM (or a setting) -> value",
                             **_ANY_OBJ},
                 "widen": {"description": "what-if: stage -> the rows it keeps",
                           "type": "object", "additionalProperties": _INT},
                 "exact": _BOOL,
                 "returns": _obj({"count": _INT, "ids": _IDS, "full_page": _BOOL})},
                description="a change that was run, and what it returned")


def _diagnosis() -> dict[str, Any]:
    from inspector.core.engine.flow.insight.diagnosis import TITLES

    return _obj({"code": {"enum": list(TITLES)}, "title": _STR, "message": _STR,
                 "stage": {"description": "the stage that starved", **_STR_OR_NULL},
                 "kind": _STR_OR_NULL,
                 "first_at": {"description": "the depth at which the first row that passes "
                              "comes in", **_INT_OR_NULL},
                 "page_at": {"description": "the depth of a full page", **_INT_OR_NULL},
                 "fixes": {"type": "array", "items": _fix()},
                 "tried": {"description": "pipeline runs the fix search made", **_INT}})


def _expect() -> dict[str, Any]:
    change = _obj({"stage": {"description": "null for the limit", **_STR_OR_NULL},
                   "param": _STR_OR_NULL, "from": {}, "to": {},
                   "kind": {"enum": ["own", "what_if"]}, "argv": _TEXTS,
                   "widen": {"type": "object", "additionalProperties": _INT},
                   "change": {"description": "the relative size of the change", **_NUM},
                   "rank": _INT, "gained": _IDS, "lost": _IDS},
                  description="the smallest change that returns the row, and what it does to "
                              "the rest of the list")
    return _obj({"id": _ID, "dropped_at": _STR_OR_NULL,
                 "reason": {"description": "a drop code, or returned / not_fetched", **_STR},
                 "detail": _ANY_OBJ, "rank": _INT,
                 "fix": _maybe(change), "alternatives": {"type": "array", "items": change},
                 "tried": _INT, "no_fix": _STR,
                 "proved": {"description": "what the search proved from the run instead of "
                            "running it (no deeper search returns a row its row-wise stages "
                            "dropped)", **_TEXTS}},
                ("rank", "tried", "no_fix", "proved"))


def _tie() -> dict[str, Any]:
    return _obj({"stage": _STR, "ids": _IDS, "score": _NUM_OR_NULL,
                 "measure": {"enum": ["distance", "bm25", "fused", "score"]},
                 "at_cut": _BOOL, "cut": _INT_OR_NULL, "beyond": _INT, "arbitrary": _BOOL,
                 "near": _BOOL, "members": _IDS, "order": _STR})


def _facet() -> dict[str, Any]:
    leg = _obj({"stage": _STR, "depth": _INT, "lost": _IDS, "ann_recall": _NUM_OR_NULL})
    return _obj({"index_type": _STR, "metric": _STR_OR_NULL,
                 "legs": {"type": "array", "items": leg}, "lostToIndex": _INT,
                 "exact_final": _IDS, "lost_final": _IDS, "knobs": _ANY_OBJ},
                description="the same stages run with the index bypassed: the rows each "
                            "vector leg lost, and the final rows the exact run returns that "
                            "this one does not")


def answer_schema() -> dict[str, Any]:
    """`inspector query --json`, answer.json of an export, a receipt's sides, the API's
    Result.to_json()."""
    from inspector.core.engine.flow.question import question_schema

    pipeline = _obj({"name": _STR, "title": _STR, "system": _STR_OR_NULL,
                     "version": _STR_OR_NULL, "path": _STR_OR_NULL, "route": _STR_OR_NULL,
                     "ties": _STR_OR_NULL})
    params = _obj({"pipeline": _STR, "route": _STR_OR_NULL, "limit": _INT,
                   "limit_asked": _INT_OR_NULL, "now": _NUM, "now_iso": _STR,
                   "scopes": {"description": "null = unscoped, [] denies everything",
                              **_maybe(_TEXTS)},
                   "settings": _ANY_OBJ,
                   "stages": {"description": "stage -> its effective parameters",
                              "type": "object", "additionalProperties": _ANY_OBJ}})
    props = {
        "schema": {"const": 3}, "store": _store(), "pipeline": pipeline,
        "query": _obj({"text": _STR_OR_NULL, "bm25_text": _STR_OR_NULL,
                       "source": _STR_OR_NULL, "vector": _VECTOR}),
        "params": params,
        "stages": {"type": "array", "items": _stage(), "minItems": 1,
                   "description": "every stage in order; the last is the final list"},
        "counters": {"description": "each stage's row count (query stages left out), "
                     "returned, and lostToIndex when the index facet ran",
                     "type": "object", "additionalProperties": _INT,
                     "required": ["returned"]},
        "diagnosis": _diagnosis(),
        "what_if": {"description": "null: the system's own behaviour; else the what-if "
                    "changes this answer ran under", **_maybe(_obj(
                        {"widen": {"type": "object", "additionalProperties": _INT},
                         "exact": _BOOL}))},
        "warnings": _TEXTS, "exact": _BOOL, "inexact": _TEXTS,
        "expect": {"type": "array", "items": _expect()},
        "ties": {"type": "array", "items": _tie()},
        "index_facet": _maybe(_facet()),
        "runs": {"description": "pipeline runs the answer took (fixes and expected rows "
                 "included)", **_INT},
        "question": question_schema()}
    return {"$schema": DRAFT, "title": "inspector query answer",
            **_obj(props, ("question",), description="schema 3: the one answer of every "
                                                     "pipeline")}
