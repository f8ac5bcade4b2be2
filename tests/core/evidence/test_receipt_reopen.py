"""A receipt reopens as its record: `receipt.load` checks every part it reads back (a part of
the wrong shape is one sentence naming the field, never an exception where the window meets
it), gives back each side's question (its store without credentials), and `reopen` re-runs
the before side's question on the table as of the recorded version, refusing when that version
is gone or the re-run differs from the record: no number shown is stale or invented. The
receipt's JSON Schema (the models, each side's answer by the answer's schema) takes a real
receipt and refuses the edits the loader refuses."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.core.engine.flow.question import Question
from inspector.core.errors import InspectorError
from inspector.core.evidence.receipt import build_receipt, load, reopen, save, validate
from inspector.core.evidence.schema import receipt_schema
from inspector.core.stores.opening import open_store
from tests.storekit import write_tuning_store

SECRET = "hunter2-secret"


def _question(path: Path, **more: Any) -> Question:
    return Question(store=str(path), preset="docs-before-fix", text="rotate keys tokens",
                    vector_of="m0004", scopes=["repo0"], limit=5,
                    set={"scope_rule.strategy": "column", "scope_rule.column": "repo",
                         "fetch.overfetch": 2.5}, **more)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tuning_store(tmp_path_factory.mktemp("receipt") / "s")


@pytest.fixture(scope="module")
def written(store_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = open_store(str(store_path))
    q = _question(store_path)
    doc = build_receipt(store, q, q.model_copy(update={"set": {**q.set, "blend.weight": 0.5}}),
                        grades={"m0004": 2.0})
    path, _ = save(doc, tmp_path_factory.mktemp("out") / "r")
    return path


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_receipt_gives_back_each_sides_question(written: Path, store_path: Path) -> None:
    r = load(written)
    assert r.before.question == _question(store_path)
    assert r.after is not None and r.after.question.set["blend.weight"] == 0.5
    assert r.verdict.before.label == "docs-before-fix with scope_rule.strategy=column, " \
                                     "scope_rule.column=repo, fetch.overfetch=2.5"
    assert r.reopen.version == open_store(str(store_path)).version
    assert load(written.with_suffix(".html")) == r  # the page's JSON beside it


def test_the_receipt_question_holds_no_credentials(store_path: Path) -> None:
    store = open_store(str(store_path))
    uri = f"s3://alice:{SECRET}@minio.local:9000/bucket/mem?sas={SECRET}"
    doc = build_receipt(store, _question(store_path).model_copy(update={"store": uri}),
                        with_map=False, with_sweep=False)
    text = json.dumps(doc)
    assert "minio.local:9000/bucket/mem" in text
    assert SECRET not in text and "alice" not in text


def test_reopening_reruns_the_question_at_the_recorded_version(tmp_path: Path) -> None:
    path = write_tuning_store(tmp_path / "s")
    store = open_store(str(path))
    q = _question(path).model_copy(update={"scopes": None})  # it returns a full page
    saved, _ = save(build_receipt(store, q, with_map=False, with_sweep=False), tmp_path / "r")
    table = lancedb.connect(str(path)).open_table("memories")  # a later write: a new version
    rng = np.random.default_rng(9)
    table.add(pa.table({"id": [f"n{i}" for i in range(40)],
                        "text": ["rotate keys tokens repo0"] * 40,
                        "vector": pa.FixedSizeListArray.from_arrays(
                            pa.array(rng.normal(size=40 * 8).astype(np.float32)), 8),
                        "importance": pa.array([0.9] * 40, pa.float64()),
                        "repo": ["repo0"] * 40, "path": ["repo0/x.md"] * 40}))
    latest = open_store(str(path))
    r = load(saved)
    assert latest.version > r.reopen.version
    asked, got = reopen(r, latest)
    assert got.trace.store["version"] == r.reopen.version
    assert got.trace.final.ids == [c.id for c in r.before.stages[-1].candidates]
    assert len(got.trace.final.ids) == 5
    assert asked.now == r.before.params["now"] and asked.vector is not None
    edited = _doc(saved)
    edited["before"]["stages"][-1]["candidates"].reverse()
    with pytest.raises(InspectorError, match="only the record can be shown"):
        reopen(validate(edited, "edited"), latest)
    edited = _doc(saved)
    edited["reopen"]["version"] = 999
    with pytest.raises(InspectorError, match="version 999 .* only its record"):
        reopen(validate(edited, "edited"), latest)


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
    ("verdict.before.returned", "x", "verdict.before.returned"),
    ("verdict.before.fixes", "x", "verdict.before.fixes"),
    ("verdict.after.ids", {"a": 1}, "verdict.after.ids"),
    ("before.schema", 2, "before.schema"),
    ("before.stages", [], "before.stages"),
    ("before.stages.1.candidates.0.rank", 0, "before.stages.1.candidates.0.rank"),
    ("before.stages.1.candidates", _DROP_ONE, "before.stages.1"),
    ("before.stages.1.dropped", "x", "before.stages.1.dropped"),
    ("before.question.limit", "many", "before.question.limit"),
    ("before.question.scopes", 5, "before.question.scopes"),
    ("before.diagnosis.fixes.0.kind", "maybe", "kind"),
    ("evidence.map.x", _DROP_ONE, "evidence.map"),
    ("evidence.map.explained", [1.0], "evidence.map.explained"),
    ("evidence.before.metrics", [], "evidence.before.metrics"),
    ("reopen.version", "v2", "reopen.version"),
    ("created", 5, "created"),
]


@pytest.mark.parametrize(("where", "value", "named"), EDITS)
def test_a_wrong_field_is_one_sentence_naming_it(written, tmp_path, where, value, named):
    doc = _doc(written)
    if where.startswith("before.diagnosis.fixes") and not doc["before"]["diagnosis"]["fixes"]:
        pytest.skip("this receipt's diagnosis ran no fix")
    _set(doc, where, value)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InspectorError) as err:
        load(bad)
    msg = str(err.value)
    assert msg.startswith(f"Receipt {bad} is damaged: ") and named in msg, msg
    assert "\n" not in msg


def test_another_file_or_an_old_receipt_is_said_so(written, tmp_path):
    other = tmp_path / "x.json"
    other.write_text('{"format": "inspector-bundle", "version": 1}')
    with pytest.raises(InspectorError, match="not an inspector receipt"):
        load(other)
    doc = _doc(written)
    doc["version"] = 1
    other.write_text(json.dumps(doc))
    with pytest.raises(InspectorError, match="rebuild it with `inspector report`"):
        load(other)


def test_the_schema_takes_a_real_receipt_and_refuses_a_wrong_field(written):
    schema = receipt_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    assert v.is_valid(_doc(written)), [e.message for e in v.iter_errors(_doc(written))][:3]
    for where, value, _ in EDITS:
        if where.startswith("evidence.map") or where.endswith("candidates"):
            continue  # lengths agreeing is the loader's check, not a schema's
        doc = _doc(written)
        if where.startswith("before.diagnosis.fixes") and \
                not doc["before"]["diagnosis"]["fixes"]:
            continue
        _set(doc, where, value)
        assert not v.is_valid(doc), where


def test_the_receipt_page_is_self_contained(written):
    page = written.with_suffix(".html").read_text(encoding="utf-8")
    head = page.split("<script")[0]  # nothing fetched: no link, no source, no import
    assert page.startswith("<!doctype html>") and "src=" not in head and "href=" not in head
    assert "<link" not in head and "@import" not in head
    assert json.loads(page.split('id="receipt">')[1].split("</script>")[0]) == _doc(written)
    assert copy.deepcopy(_doc(written))["format"] == "inspector-receipt"
