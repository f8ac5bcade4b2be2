"""The JSON Schema of an answer: what `inspector query --json` prints, what an export writes
as answer.json, what the notebook API's `Result.to_json()` returns. Two shapes, told apart by
`schema`: 1 is the fixed pipeline's trace (raw, scoped, blended, final), 2 a pipeline of stages
(one entry per stage, the last one the final list in the real system's order).

Built from the engine's own declarations where there are any (the fixed pipeline's parameters
and stage names, the drop codes), so a new knob or stage cannot go undocumented; every object
the engine writes lists all its keys, and an answer with a key the schema does not know fails
(tests/core/evidence/test_answer_schema.py runs real answers through it)."""

from __future__ import annotations

import dataclasses
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


def _store() -> dict[str, Any]:
    return _obj({"uri": _STR, "table": _STR_OR_NULL, "version": _INT_OR_NULL, "rows": _INT},
                description="the store and table answered, at the version read")


def _json_type(annotation: Any) -> Any:
    """A Params field's annotation (a string under postponed evaluation) as a JSON type."""
    text = str(annotation)
    kinds = [{"int": "integer", "float": "number", "str": "string", "bool": "boolean",
              "None": "null"}.get(part.strip(), "object") for part in text.split("|")]
    if text.startswith("tuple"):
        return {"description": "scope -> its prefixes", "type": "object"}
    return {"type": kinds[0] if len(kinds) == 1 else kinds}


def _fixed_params() -> dict[str, Any]:
    from inspector.core.engine.params import Depths, Params

    props = {f.name: _json_type(f.type) for f in dataclasses.fields(Params)}
    props.update(
        depths=_obj({f.name: _INT for f in dataclasses.fields(Depths)},
                    description="the pool and each leg's depth, as asked of LanceDB"),
        pushdown_sql={"description": "the scope as pushed into the search, null if post",
                      **_STR_OR_NULL},
        pushdown_note=_STR_OR_NULL,
        index={"description": "null on a flat table, else the index and its knobs in force",
               "anyOf": [{"type": "null"}, _ANY_OBJ]})
    return _obj(props, description="every effective parameter of the fixed pipeline")


def _fixed_candidate() -> dict[str, Any]:
    props = {"id": _ID, "rank": _RANK, "raw_rank": _RANK, "vec_rank": _RANK,
             "fts_rank": _RANK, "distance": _NUM_OR_NULL, "vector_score": _NUM_OR_NULL,
             "fts_score": _NUM_OR_NULL, "fused_score": _NUM_OR_NULL,
             "base_score": _NUM_OR_NULL, "importance": {},
             "importance_used": _NUM_OR_NULL, "multiplier": _NUM_OR_NULL,
             "score": _NUM_OR_NULL, "in_scope": _BOOL, "scope_rule": _STR_OR_NULL,
             "pushdown_match": _BOOL, "rank_before": _RANK, "rank_after": _RANK,
             "final_rank": _RANK, "exact_rank": _RANK,
             "columns": {"description": "the row's stored columns (the vector left out)",
                         **_ANY_OBJ}}
    return _obj(props)


def _fixed_answer() -> dict[str, Any]:
    from inspector.core.engine.flow.question import question_schema
    from inspector.core.engine.trace import STAGES

    stage = _obj({"name": {"enum": list(STAGES)}, "count": _INT,
                  "candidates": {"type": "array", "items": _fixed_candidate()}})
    fix = _obj({"label": _STR, "changes": _ANY_OBJ})
    expect = _obj({"id": _ID, "exhaustive_rank": _RANK,
                   "dropped_at": {"description": "raw | scoped | final | index, null when "
                                  "returned", **_STR_OR_NULL},
                   "reason": _STR, "min_depth": _INT_OR_NULL,
                   "min_overfetch": _NUM_OR_NULL, "index_fix": _STR_OR_NULL}, ("index_fix",))
    tie = _obj({"stage": {"enum": ["vec", "fts", "raw", "blended"]}, "ids": _IDS,
                "score": _NUM_OR_NULL, "at_cut": _BOOL,
                "cut": {"description": "the cut the tie straddles, null if none",
                        "enum": ["vec_k", "fts_k", "depth", "limit", None]},
                "measure": {"enum": ["distance", "bm25", "fused", "score"]}, "order": _STR,
                "arbitrary": _BOOL, "beyond": _INT})
    facet = _obj({"index_type": _STR, "depth": _INT, "lostToIndex": _INT,
                  "ann_recall": _NUM_OR_NULL, "lost": _IDS, "exact_final": _IDS,
                  "lost_final": _IDS},
                 description="the exact search beside the index's, when it ran")
    props = {
        "schema": {"const": 1}, "store": _store(),
        "roles": {"description": "role -> the column that plays it",
                  "type": "object", "additionalProperties": _STR_OR_NULL},
        "query": _obj({"text": _STR_OR_NULL, "source": _STR_OR_NULL, "vector": _VECTOR}),
        "params": _fixed_params(),
        "stages": {"type": "array", "items": stage, "minItems": len(STAGES),
                   "maxItems": len(STAGES)},
        "counters": {"type": "object", "additionalProperties": _INT,
                     "required": ["rawCandidates", "scopedCandidates", "returned"]},
        "diagnosis": _obj({"code": _STR, "message": _STR,
                           "fixes": {"type": "array", "items": fix}}),
        "warnings": _TEXTS, "expect": {"type": "array", "items": expect},
        "ties": {"type": "array", "items": tie},
        "index_facet": {"anyOf": [{"type": "null"}, facet]},
        "question": question_schema()}
    return _obj(props, ("question",), description="schema 1: the fixed pipeline")


def _flow_candidate() -> dict[str, Any]:
    return _obj({"id": _ID, "rank": _INT, "score": _NUM_OR_NULL,
                 "score_before": _NUM_OR_NULL, "rank_before": _RANK,
                 "inputs": {"description": "the stage's inputs to this row's score",
                            **_ANY_OBJ},
                 "scope": _STR_OR_NULL, "importance": {}, "timestamp": _NUM_OR_NULL,
                 "text_length": _INT})


def _flow_answer() -> dict[str, Any]:
    from inspector.core.engine.flow.question import question_schema
    from inspector.core.engine.flow.rows import DROP_LABELS

    dropped = {"type": "object", "required": ["id", "code"],
               "properties": {"id": _ID, "code": {"enum": sorted(DROP_LABELS)}},
               "description": "a row the stage dropped, its reason code and the code's facts"}
    stage = _obj({"name": _STR, "kind": _STR, "role": _STR, "count": _INT,
                  "count_in": _INT_OR_NULL, "note": _STR_OR_NULL,
                  "candidates": {"type": "array", "items": _flow_candidate()},
                  "dropped": {"type": "array", "items": dropped},
                  "deferred": _IDS, "facts": _ANY_OBJ})
    pipeline = _obj({"name": _STR, "title": _STR, "system": _STR_OR_NULL,
                     "version": _STR_OR_NULL, "path": _STR_OR_NULL, "route": _STR_OR_NULL,
                     "ties": _STR_OR_NULL})
    params = _obj({"pipeline": _STR, "route": _STR_OR_NULL, "limit": _INT,
                   "limit_asked": _INT_OR_NULL, "now": _NUM, "now_iso": _STR,
                   "scopes": {"description": "null = unscoped, [] denies everything",
                              "anyOf": [{"type": "null"}, _TEXTS]},
                   "settings": _ANY_OBJ,
                   "stages": {"description": "stage -> its effective parameters",
                              "type": "object", "additionalProperties": _ANY_OBJ}})
    fix = _obj({"stage": {"description": "null for the limit", **_STR_OR_NULL},
                "param": _STR, "from": {}, "to": {},
                "change": {"description": "the relative size of the change", **_NUM},
                "live": {"description": "answered from the cached pool", **_BOOL},
                "rank": _INT, "gained": _IDS, "lost": _IDS},
               description="the smallest change of one parameter that returns the row, and "
                           "what it does to the rest of the list")
    expect = _obj({"id": _ID, "dropped_at": _STR_OR_NULL,
                   "reason": {"description": "a drop code, or returned / never_fetched",
                              **_STR},
                   "detail": _ANY_OBJ, "rank": _INT,
                   "fix": {"anyOf": [{"type": "null"}, fix]},
                   "alternatives": {"type": "array", "items": fix}, "tried": _INT,
                   "no_fix": _STR}, ("rank", "tried", "no_fix"))
    tie = {"type": "object", "required": ["stage", "ids", "score", "measure", "at_cut"],
           "properties": {"stage": _STR, "ids": _IDS, "score": _NUM_OR_NULL,
                          "measure": _STR, "at_cut": _BOOL, "cut": _INT_OR_NULL,
                          "beyond": _INT, "arbitrary": _BOOL, "near": _BOOL,
                          "members": _IDS, "order": _STR}}
    props = {
        "schema": {"const": 2}, "store": _store(), "pipeline": pipeline,
        "query": _obj({"text": _STR_OR_NULL, "bm25_text": _STR_OR_NULL,
                       "source": _STR_OR_NULL, "vector": _VECTOR}),
        "params": params,
        "stages": {"type": "array", "items": stage, "minItems": 1,
                   "description": "every stage in order; the last is the final list"},
        "counters": {"type": "object", "additionalProperties": _INT,
                     "required": ["returned"]},
        "diagnosis": _obj({"code": {"enum": ["ok", "scope_denies_all", "query_or_index",
                                             "all_dropped"]},
                           "stage": _STR_OR_NULL, "fixes": {"type": "array"},
                           "message": _STR}),
        "warnings": _TEXTS, "exact": _BOOL, "inexact": _TEXTS,
        "expect": {"type": "array", "items": expect},
        "ties": {"type": "array", "items": tie},
        "index_facet": {"type": "null"},
        "question": question_schema()}
    return _obj(props, ("question",), description="schema 2: a pipeline of stages")


def answer_schema() -> dict[str, Any]:
    """`inspector query --json`, answer.json of an export, the API's Result.to_json()."""
    return {"$schema": DRAFT, "title": "inspector query answer",
            "oneOf": [_fixed_answer(), _flow_answer()]}
