"""A hand-edited receipt is validated when it is loaded (issue 21): a field of the wrong type
(`pool.ids = {"a": 1}`) is one sentence naming the field, never an exception from deep inside
`derive`, where the window's event loop used to meet it. The bundle's JSON Schema (published
in the docs' file formats) is built from the same declarations: a real receipt passes it, and
every edit of a field's type that the loader refuses, the schema refuses too."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest

from inspector.core.engine.inputs import build_query
from inspector.core.engine.params import Params
from inspector.core.errors import InspectorError
from inspector.core.evidence import bundle
from inspector.core.evidence.receipt import build_receipt
from inspector.core.evidence.schema import bundle_schema
from inspector.core.stores.opening import open_store
from tests.storekit import write_tuning_store


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real receipt (hybrid, scoped, with a map and judgments), as JSON."""
    base = tmp_path_factory.mktemp("receipt")
    store = open_store(str(write_tuning_store(base / "s")))
    p = Params(mode="hybrid", limit=5, scope="repo0", fts_k=8, vec_k=8)
    q = build_query(store, "hybrid", text="rotate keys", vector_of="m0004")
    doc = build_receipt(store, q, p, grades={"m0004": 2.0})
    path, _ = bundle.save(doc, base / "r")
    return json.loads(path.read_text(encoding="utf-8"))


def _set(doc: dict[str, Any], where: str, value: Any) -> None:
    *parents, last = where.split(".")
    node: Any = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is _DROP_ONE:
        node[last] = node[last][:-1]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


_DROP_ONE = object()
EDITS = [
    ("pool.ids", {"a": 1}, "pool.ids"),
    ("pool.ids.data", "abc", "pool.ids.data"),
    ("pool.ids.data", _DROP_ONE, "pool.id"),
    ("pool.ids.data.0", [1, 2], "pool.ids.data[0]"),
    ("pool.importance.dtype", "complex128", "pool.importance.dtype"),
    ("pool.importance.data.0", "high", "pool.importance.data[0]"),
    ("pool.in_scope.data.0", 7, "pool.in_scope.data[0]"),
    ("pool.vec_dist.data", _DROP_ONE, "pool.vec_dist.data"),
    ("pool.id_order.data.0", 10_000, "pool.id_order"),
    ("pool.vec_leg", "x", "pool.vec_leg"),
    ("pool.vec_leg.rows.0", 999_999, "pool.vec_leg.rows[0]"),
    ("pool.vec_leg.values", _DROP_ONE, "pool.vec_leg.values"),
    ("pool.fts_leg.depth", "deep", "pool.fts_leg.depth"),
    ("pool.vec_rank.data.0", 3, "pool.vec_rank"),
    ("pool.columns", 3, "pool.columns"),
    ("pool.columns.text.0", {"x": 1}, "pool.columns.text[0]"),
    ("pool.query", [], "pool.query"),
    ("pool.query.vector", "abc", "pool.query.vector"),
    ("pool.query.vector.0", None, "pool.query.vector[0]"),
    ("pool.scope", None, "pool.scope"),
    ("pool.scope.scope_map", {"a": 5}, "pool.scope.scope_map.a"),
    ("pool.roles", {"id": 5}, "pool.roles.id"),
    ("pool.warnings", "w", "pool.warnings"),
    ("pool.mode", 3, "pool.mode"),
    ("pool.mode", "sideways", "pool.mode"),
    ("pool", None, "pool"),
    ("params", [], "params"),
    ("params.limit", "x", "limit"),
    ("params.scope_map", {"a": 5}, "params.scope_map.a"),
    ("params.bogus", 1, "bogus"),
    ("store", [], "store"),
    ("store.uri", {"u": 1}, "store.uri"),
    ("created", 5, "created"),
    ("map.x", "no", "map.x"),
    ("map.x", _DROP_ONE, "map.x"),
    ("map.query", [1], "map.query"),
    ("judgments", {"a": "b"}, "judgments.a"),
]


@pytest.mark.parametrize(("where", "value", "named"), EDITS, ids=[e[0] for e in EDITS])
def test_a_wrong_field_is_one_sentence_naming_it(good, tmp_path, where, value, named):
    doc = copy.deepcopy(good)
    _set(doc, where, value)
    refused_naming(doc, tmp_path, named)


def refused_naming(doc: dict, tmp_path, named: str) -> None:
    """The bundle `doc`, written to a file, is refused with one sentence naming that file
    and `named` (the field at fault)."""
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InspectorError) as err:
        bundle.load(path)
    text = str(err.value)
    assert "\n" not in text and str(path) in text and named in text, text


def test_the_untouched_receipt_loads(good, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(good), encoding="utf-8")
    loaded = bundle.load(path)
    assert loaded.pool.size == len(good["pool"]["ids"]["data"])



# what only the loader can say: lengths, ranges and agreements between fields, and the
# parameters, which Params itself validates
BEYOND_A_SCHEMA = {"pool.id_order.data.0", "pool.vec_leg.rows.0", "pool.vec_rank.data.0",
                   "params.limit", "params.bogus"}
TYPE_EDITS = [e for e in EDITS if e[1] is not _DROP_ONE and e[0] not in BEYOND_A_SCHEMA]


def test_the_schema_is_a_json_schema_that_a_real_receipt_passes(good):
    jsonschema.Draft202012Validator.check_schema(bundle_schema())
    jsonschema.validate(good, bundle_schema(), cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(("where", "value", "named"), TYPE_EDITS, ids=[e[0] for e in TYPE_EDITS])
def test_a_field_of_the_wrong_type_fails_the_schema_too(good, where, value, named):
    doc = copy.deepcopy(good)
    _set(doc, where, value)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, bundle_schema(), cls=jsonschema.Draft202012Validator)
