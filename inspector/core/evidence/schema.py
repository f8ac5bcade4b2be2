"""The shape a receipt bundle must have before anything is built from it.

A bundle is a file anyone can edit. `check_bundle` checks every part that is read back (the
question, the pool, the parameters, the store header, the stored map and judgments) for its
JSON type and, for per-row arrays, its length, and raises one sentence naming the first field
that is wrong:
`pool.ids: expected a {"dtype", "data"} array, found an object with keys a`. Nothing that
passes can make `derive` or the window fail on a wrong type.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from inspector.core.engine.params import DISTANCES, FILTERS, MODES
from inspector.core.errors import InspectorError

_DTYPES = {"object": "a text or number", "int64": "an integer", "int32": "an integer",
           "float64": "a number or null", "float32": "a number or null", "bool": "true or false"}
# per-row arrays of a pool, with the dtypes each may hold
_ROW_ARRAYS = {"ids": ("object", "int64", "int32"), "id_order": ("int64", "int32"),
               "importance": ("float64", "float32"), "in_scope": ("bool",),
               "pushdown_match": ("bool",), "vec_rank": ("int64", "int32"),
               "vec_dist": ("float64", "float32"), "fts_rank": ("int64", "int32"),
               "fts_score": ("float64", "float32"), "importance_missing": ("bool",)}
_POOL_KEYS = ("ids", "roles", "query", "scope", "columns", "mode", "distance")
_LEG_KEYS = ("rows", "values", "depth", "exhausted")
_MAP_KEYS = ("ids", "x", "y", "in_scope", "raw_rank", "final", "cut_depth", "explained")
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
_TEXTS = ("mode", "distance", "placement", "pushdown_sql", "pushdown_note", "fts_ties")
_CHOICES = {"mode": MODES, "distance": DISTANCES, "placement": FILTERS}


class Damaged(Exception):
    """Where a bundle is wrong and what was expected there."""


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    if isinstance(v, str):
        return f"the text {v[:40]!r}"
    if isinstance(v, list):
        return f"a list of {len(v)}"
    if isinstance(v, dict):
        keys = ", ".join(repr(str(k)[:20]) for k in list(v)[:4])
        return f"an object with keys {keys}" if v else "an empty object"
    return type(v).__name__


def _need(ok: bool, where: str, expected: str, found: Any) -> None:
    if not ok:
        raise Damaged(f"{where}: expected {expected}, found {_kind(found)}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, bool)) or _is_num(v)


def _text(v: Any, where: str, optional: bool = False) -> None:
    _need(isinstance(v, str) or (optional and v is None), where,
          "a text" + (" or null" if optional else ""), v)


def _obj(v: Any, where: str, optional: bool = False) -> bool:
    _need(isinstance(v, dict) or (optional and v is None), where,
          "an object" + (" or null" if optional else ""), v)
    return v is not None


def _list_of(v: Any, where: str, ok: Callable[[Any], bool], what: str,
             n: int | None = None) -> None:
    _need(isinstance(v, list), where, f"a list of {what}", v)
    if n is not None:
        _need(len(v) == n, where, f"{n} values (one per row)", v)
    for i, x in enumerate(v):
        _need(ok(x), f"{where}[{i}]", what, x)


def _array(v: Any, where: str, dtypes: tuple[str, ...], n: int | None) -> int:
    _need(isinstance(v, dict) and set(v) == {"dtype", "data"}, where,
          'a {"dtype", "data"} array', v)
    _need(v["dtype"] in dtypes, f"{where}.dtype", " or ".join(dtypes), v["dtype"])
    ok = {"object": _is_scalar, "int64": _is_int, "int32": _is_int, "bool":
          lambda x: isinstance(x, bool), "float64": lambda x: x is None or _is_num(x),
          "float32": lambda x: x is None or _is_num(x)}[v["dtype"]]
    _list_of(v["data"], f"{where}.data", ok, _DTYPES[v["dtype"]], n)
    return len(v["data"])


def _leg(v: Any, where: str, n: int) -> None:
    if not _obj(v, where, optional=True):
        return
    for key in _LEG_KEYS:
        _need(key in v, where, f"a leg with '{key}'", v)
    _list_of(v["rows"], f"{where}.rows", lambda r: _is_int(r) and 0 <= r < n,
             f"a row number from 0 to {n - 1}")
    _list_of(v["values"], f"{where}.values", lambda x: x is None or _is_num(x),
             "a number or null", len(v["rows"]))
    _need(_is_int(v["depth"]) and v["depth"] >= 0, f"{where}.depth", "a whole number",
          v["depth"])
    _need(isinstance(v["exhausted"], bool), f"{where}.exhausted", "true or false",
          v["exhausted"])
    nxt = v.get("next_value")
    _need(nxt is None or _is_num(nxt), f"{where}.next_value", "a number or null", nxt)


def _ranks(pool: dict[str, Any], leg: str, rank: str, n: int) -> None:
    """Each row's rank in a leg agrees with the leg's row order (-1: not in it)."""
    if rank not in pool:
        return
    want = [-1] * n
    for i, r in enumerate((pool.get(leg) or {}).get("rows", [])):
        want[r] = i
    if pool[rank]["data"] != want:
        raise Damaged(f"pool.{rank}: expected each row's rank in pool.{leg}, found ranks "
                      "that disagree with it")


def check_pool(pool: Any) -> None:
    _obj(pool, "pool")
    for key in _POOL_KEYS:
        _need(key in pool, "pool", f"a pool with '{key}'", pool)
    n = _array(pool["ids"], "pool.ids", _ROW_ARRAYS["ids"], None)
    for key, dtypes in _ROW_ARRAYS.items():
        if key != "ids" and key in pool and not (key == "importance_missing"
                                                 and pool[key] is None):
            _array(pool[key], f"pool.{key}", dtypes, n)
    if "id_order" in pool:
        _need(sorted(pool["id_order"]["data"]) == list(range(n)), "pool.id_order.data",
              f"the numbers 0 to {n - 1} in some order", pool["id_order"]["data"])
    for key in _TEXTS:
        if key in pool:
            _text(pool[key], f"pool.{key}")
    for key, choices in _CHOICES.items():
        if key in pool:
            _need(pool[key] in choices, f"pool.{key}", " or ".join(choices), pool[key])
    _obj(pool.get("store", {}), "pool.store")
    _obj(pool["roles"], "pool.roles")
    for k, v in pool["roles"].items():
        _text(v, f"pool.roles.{k}", optional=True)
    _obj(pool["query"], "pool.query")
    _text(pool["query"].get("text"), "pool.query.text", optional=True)
    _text(pool["query"].get("source", "text"), "pool.query.source")
    if pool["query"].get("vector") is not None:
        _list_of(pool["query"]["vector"], "pool.query.vector", _is_num, "a finite number")
    _obj(pool["scope"], "pool.scope")
    _text(pool["scope"].get("scope"), "pool.scope.scope", optional=True)
    _text(pool["scope"].get("strategy"), "pool.scope.strategy")
    _text(pool["scope"].get("column"), "pool.scope.column", optional=True)
    _obj(pool["scope"].get("scope_map", {}), "pool.scope.scope_map")
    for k, v in pool["scope"].get("scope_map", {}).items():
        _list_of(v, f"pool.scope.scope_map.{k}", lambda x: isinstance(x, str), "a text")
    _obj(pool["columns"], "pool.columns")
    for k, v in pool["columns"].items():
        _list_of(v, f"pool.columns.{k}", _is_scalar, "a text, number or null", n)
    for key in ("scope_rule", "scope_value"):
        if key in pool:
            _list_of(pool[key], f"pool.{key}", lambda x: isinstance(x, str), "a text", n)
    for key in ("warnings", "knobs"):
        if key in pool:
            _list_of(pool[key], f"pool.{key}",
                     (lambda x: isinstance(x, str)) if key == "warnings" else _is_scalar,
                     "a text" if key == "warnings" else "a number or null")
    _obj(pool.get("index"), "pool.index", optional=True)
    for leg, rank in (("vec_leg", "vec_rank"), ("fts_leg", "fts_rank")):
        _leg(pool.get(leg), f"pool.{leg}", n)
        _ranks(pool, leg, rank, n)


def _check_map(m: Any) -> None:
    if not _obj(m, "map", optional=True):
        return
    for key in _MAP_KEYS:
        _need(key in m, "map", f"a map with '{key}'", m)
    n = len(m["ids"]) if isinstance(m["ids"], list) else 0
    _list_of(m["ids"], "map.ids", _is_scalar, "an id")
    for key in ("x", "y"):
        _list_of(m[key], f"map.{key}", _is_num, "a finite number", n)
    _list_of(m["in_scope"], "map.in_scope", lambda x: isinstance(x, bool), "true or false", n)
    _list_of(m["final"], "map.final", lambda x: isinstance(x, bool), "true or false", n)
    _list_of(m["raw_rank"], "map.raw_rank", _is_int, "a whole number", n)
    _need(_is_int(m["cut_depth"]), "map.cut_depth", "a whole number", m["cut_depth"])
    _list_of(m["explained"], "map.explained", _is_num, "a finite number", 2)
    q = m.get("query")
    if q is not None:
        _list_of(q, "map.query", _is_num, "a finite number", 2)
    r = m.get("cut_radius")
    _need(r is None or _is_num(r), "map.cut_radius", "a number or null", r)


def _check_question(asked: Any) -> None:
    """The question model or null (a bundle written before receipts carried it has none)."""
    from pydantic import ValidationError

    from inspector.core.engine.flow.question import Question

    if asked is None:
        return
    _obj(asked, "question")
    try:
        Question.model_validate(asked)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in ("question", *first["loc"]))
        raise Damaged(f"{where}: {first['msg']}") from None


def check_bundle(data: dict[str, Any], path: Any) -> None:
    """One sentence naming the first wrong field, when the bundle is not one this inspector
    wrote (or one edited into a shape it cannot read)."""
    try:
        _check_question(data.get("question"))
        _obj(data.get("store"), "store")
        for key in ("uri", "table"):
            _text(data["store"].get(key), f"store.{key}", optional=True)
        _text(data.get("created"), "created", optional=True)
        _obj(data.get("params"), "params")
        scope_map = data["params"].get("scope_map", {})
        _obj(scope_map, "params.scope_map")
        for k, v in scope_map.items():
            _list_of(v, f"params.scope_map.{k}", lambda x: isinstance(x, str), "a text")
        _obj(data.get("trace"), "trace", optional=True)
        if data.get("judgments") is not None:
            _obj(data["judgments"], "judgments")
            for k, v in data["judgments"].items():
                _need(_is_num(v), f"judgments.{k}", "a finite number", v)
        _check_map(data.get("map"))
        check_pool(data.get("pool"))
    except Damaged as exc:
        where = _LINE_BREAKS.sub(" ", str(exc))  # field names come from the file
        raise InspectorError(f"Bundle {path} is damaged: {where}.") from None


# ------------------------------------------------------------------ the same rules as a schema

_NUM: dict[str, Any] = {"type": "number"}
_TEXT: dict[str, Any] = {"type": "string"}
_SCALAR: dict[str, Any] = {"type": ["string", "number", "boolean", "null"]}
_ITEMS: dict[str, dict[str, Any]] = {
    "object": _SCALAR, "int64": {"type": "integer"}, "int32": {"type": "integer"},
    "float64": {"type": ["number", "null"]}, "float32": {"type": ["number", "null"]},
    "bool": {"type": "boolean"}}


def _maybe(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _list(items: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **more}


def _obj_of(required: tuple[str, ...] = (), **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": props}


def _array_schema(dtypes: tuple[str, ...]) -> dict[str, Any]:
    return {"anyOf": [{"type": "object", "additionalProperties": False,
                       "required": ["dtype", "data"],
                       "properties": {"dtype": {"const": d}, "data": _list(_ITEMS[d])}}
                      for d in dtypes]}


def bundle_schema() -> dict[str, Any]:
    """The JSON Schema of what `check_bundle` reads back, built from the same declarations.
    The check says more than a schema can: every per-row array as long as `pool.ids`, leg
    rows within the pool, ranks that agree with the legs, `id_order` a permutation."""
    leg = _obj_of(_LEG_KEYS, rows=_list({"type": "integer", "minimum": 0}),
                  values=_list(_maybe(_NUM)), depth={"type": "integer", "minimum": 0},
                  exhausted={"type": "boolean"}, next_value=_maybe(_NUM))
    scope_map = {"type": "object", "additionalProperties": _list(_TEXT)}
    props: dict[str, Any] = {k: _array_schema(d) for k, d in _ROW_ARRAYS.items()}
    props["importance_missing"] = _maybe(_array_schema(("bool",)))
    props.update({k: _TEXT for k in _TEXTS})
    props.update({k: {"enum": list(c)} for k, c in _CHOICES.items()})
    pool = _obj_of(
        _POOL_KEYS, **props,
        store={"type": "object"}, index=_maybe({"type": "object"}),
        roles={"type": "object", "additionalProperties": _maybe(_TEXT)},
        query=_obj_of(text=_maybe(_TEXT), source=_TEXT, vector=_maybe(_list(_NUM))),
        scope=_obj_of(("strategy",), scope=_maybe(_TEXT), strategy=_TEXT,
                      column=_maybe(_TEXT), scope_map=scope_map),
        columns={"type": "object", "additionalProperties": _list(_SCALAR)},
        scope_rule=_list(_TEXT), warnings=_list(_TEXT), knobs=_list(_SCALAR),
        vec_leg=_maybe(leg), fts_leg=_maybe(leg))
    pair = _list(_NUM, minItems=2, maxItems=2)
    bool_list = _list({"type": "boolean"})
    the_map = _obj_of(_MAP_KEYS, ids=_list(_SCALAR), x=_list(_NUM), y=_list(_NUM),
                      in_scope=bool_list, final=bool_list, raw_rank=_list({"type": "integer"}),
                      cut_depth={"type": "integer"}, explained=pair, query=_maybe(pair),
                      cut_radius=_maybe(_NUM))
    from inspector.core.engine.flow.question import question_schema

    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "inspector receipt bundle (the parts read back)",
            **_obj_of(("store", "params", "pool"),
                      question=_maybe(question_schema()),
                      store=_obj_of(uri=_maybe(_TEXT), table=_maybe(_TEXT)),
                      created=_maybe(_TEXT), trace=_maybe({"type": "object"}),
                      params=_obj_of(scope_map=scope_map),
                      judgments=_maybe({"type": "object", "additionalProperties": _NUM}),
                      map=_maybe(the_map), pool=pool)}
