"""A receipt carries the question its query asked (issue 18: receipts build and serialise the
one question model): `bundle.load` gives it back, its parameters are the receipt's own, its
store URI holds no credentials, a bundle written before it loads and says it has none, and a
damaged question is one sentence naming the field, in the loader and the schema alike."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from inspector.core.engine.flow.question import Question
from inspector.core.engine.inputs import question_params, question_query
from inspector.core.engine.pipeline import run
from inspector.core.evidence import bundle
from inspector.core.evidence.html import render_html
from inspector.core.evidence.receipt import build_receipt
from inspector.core.evidence.schema import bundle_schema
from inspector.core.stores.demo import SCOPE_QUERY
from inspector.core.stores.opening import open_store
from tests.core.evidence.test_bundle_validation import refused_naming

SECRET = "hunter2-secret"


def _asked(store_uri: str) -> Question:
    return Question(store=store_uri, preset="docs-before-fix", text=SCOPE_QUERY,
                    scopes=["vault-agent"], limit=8, params={"overfetch": 2.5, "blend": 0.1},
                    expect=["vault-agent-0001"])


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, demo_path: Path) -> Path:
    """A receipt built as its callers build one: parameters and query from the question."""
    q = _asked(str(demo_path))
    store = open_store(q.store)
    p = question_params(q)
    doc = build_receipt(store, question_query(store, q, p.mode), p, question=q,
                        with_map=False)
    path, _ = bundle.save(doc, tmp_path_factory.mktemp("receipt") / "r")
    return path


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_receipt_gives_back_the_question_its_parameters_came_from(written, demo_path
                                                                   ) -> None:
    loaded = bundle.load(written)
    assert loaded.question == _asked(str(demo_path))
    assert question_params(loaded.question) == loaded.params
    assert loaded.data["question"] == _asked(str(demo_path)).model_dump(mode="json",
                                                                         by_alias=True)
    jsonschema.validate(_doc(written), bundle_schema(), cls=jsonschema.Draft202012Validator)


def test_the_receipt_question_holds_no_credentials(demo_path) -> None:
    store = open_store(str(demo_path))
    q = _asked(f"s3://alice:{SECRET}@minio.local:9000/bucket/mem?sas={SECRET}")
    p = question_params(q)
    trace = run(store, question_query(store, q, p.mode), p)
    text = json.dumps(bundle.make_bundle(trace, question=q)["question"])
    assert "minio.local:9000/bucket/mem" in text
    assert SECRET not in text and "alice" not in text


def test_a_bundle_written_before_questions_loads_and_says_it_has_none(written, tmp_path
                                                                      ) -> None:
    doc = _doc(written)
    del doc["question"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    loaded = bundle.load(path)
    assert loaded.question is None
    assert loaded.params == bundle.load(written).params
    assert "before receipts kept the question" in render_html(doc)


EDITS = [("question", [], "question"), ("question.store", 3, "question.store"),
         ("question.limit", "many", "question.limit"), ("question.bogus", 1, "question.bogus"),
         ("question.scopes", "vault-agent", "question.scopes"),
         ("question.vector", [], "question.vector")]


@pytest.mark.parametrize(("key", "value", "named"), EDITS, ids=[e[0] for e in EDITS])
def test_a_damaged_question_is_one_sentence_naming_it(written, tmp_path, key, value, named
                                                      ) -> None:
    doc = _doc(written)
    if key == "question":
        doc[key] = value
    else:
        doc["question"][key.split(".", 1)[1]] = value
    refused_naming(doc, tmp_path, named)
    if key == "question.vector":
        return  # non-empty and finite: the model's own validator, beyond the schema
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, bundle_schema(), cls=jsonschema.Draft202012Validator)


def test_the_html_receipt_shows_the_question_asked(written) -> None:
    doc = _doc(written)
    page = render_html(copy.deepcopy(doc))
    assert "The question asked" in page
    assert "docs-before-fix" in page and "&quot;overfetch&quot;: 2.5" in page
