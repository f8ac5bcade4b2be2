"""The one receipt, for any pipeline, leads with its verdict: each side named, its rows returned
of the limit, its diagnosis and the fixes the diagnosis ran (label, arguments, what each
returned); the ranked lists side by side; what changed; then the evidence (metrics, the safe
depth, the sweep, the comparison, the map) and every parameter folded at the end (no Python
values). Every number on the page is the receipt's, and the receipt's are the engine's."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from inspector.core.analysis.safe import safe_words
from inspector.core.engine.flow.question import Question, answer
from inspector.core.evidence.html import render_html
from inspector.core.evidence.receipt import build_receipt, validate
from inspector.core.stores.opening import open_store
from tests.storekit import snapshot

TEXT = "how do I rotate the signing keys for service tokens"


def _visible(page: str) -> str:
    """The page's text as a reader sees it (no markup, no embedded receipt)."""
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    body = re.sub(r"<style.*?</style>", "", body, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split())


def _ask(demo: Path, preset: str, **more: Any) -> Question:
    return Question(store=str(demo), preset=preset, scopes=["vault-agent"], text=TEXT, **more)


@pytest.fixture(scope="module")
def receipt(demo_path: Path) -> dict[str, Any]:
    before = snapshot(demo_path)
    store = open_store(str(demo_path))
    doc = build_receipt(store, _ask(demo_path, "docs-before-fix"),
                        _ask(demo_path, "docs-pushdown"), with_map=False)
    assert snapshot(demo_path) == before  # the receipt reads the store, never writes it
    validate(doc, "the receipt")
    return doc


def test_each_side_is_the_answer_query_gives(demo_path: Path, receipt) -> None:
    store = open_store(str(demo_path))
    for side, preset in (("before", "docs-before-fix"), ("after", "docs-pushdown")):
        got = answer(_ask(demo_path, preset), store)
        doc = receipt[side]
        assert [c["id"] for c in doc["stages"][-1]["candidates"]] == got.trace.final.ids
        assert doc["diagnosis"]["code"] == got.diagnosis.code
        assert [f["argv"] for f in doc["diagnosis"]["fixes"]] == \
            [f.change.argv() for f in got.diagnosis.fixes]
        assert receipt["verdict"][side]["fixes"] == doc["diagnosis"]["fixes"]
        assert doc["question"]["preset"] == preset


def test_the_first_screen_is_the_verdict_with_its_fixes(receipt) -> None:
    page = render_html(receipt)
    text = _visible(page)
    first = text[: text.index("Stage by stage")]
    v = receipt["verdict"]
    assert "before · docs-before-fix" in first and "after · docs-pushdown" in first
    assert "0 of 10 returned" in first and "10 of 10 returned" in first
    assert v["before"]["message"] in first and v["before"]["title"] in first
    for f in v["before"]["fixes"]:  # each fix: its label, its arguments, what it returned
        assert f["label"] in first and " ".join(f["argv"]) in first
        assert f"returns {f['returns']['count']} of 10" in first
    assert "--set scope_rule.pushdown=true" in first and "--widen fetch=56" in first
    assert "scoped recall 0.00" in first and "scoped recall 1.00" in first
    ids = v["after"]["ids"]
    assert [first.index(str(i)) for i in ids] == sorted(first.index(str(i)) for i in ids)
    assert "nothing returned" in first and "Every parameter" not in first
    assert page.index("Verdict") < page.index("What changed") < page.index("Stage by stage") \
        < page.index("Metrics") < page.index("Every parameter")


def test_what_changed_names_the_parameters_that_differ(receipt) -> None:
    text = _visible(render_html(receipt))
    changed = text[text.index("What changed"): text.index("Stage by stage")]
    assert "pipeline docs-before-fix docs-pushdown" in changed
    assert "scope_rule.pushdown no yes" in changed


def test_parameters_are_folded_at_the_end_in_words(receipt) -> None:
    page = render_html(receipt)
    text = _visible(page[page.index("<details><summary>Every parameter"):])
    for python in ("False", "True", "None", "{}", "{'", "[]", "()"):
        assert python not in text, python
    assert "pushdown yes" in text and "pushdown no" in text


def test_the_safe_depth_is_said_in_one_sentence_everywhere(receipt) -> None:
    safe = receipt["evidence"]["safe"]
    assert safe["sets"] == {"fetch.overfetch": 5.6, "fetch.cap": 56} and safe["depth"] == 56
    words = safe_words(safe)
    assert "fetch.overfetch 5.6 and fetch.cap 56" in words and "fetch keeps 56 rows" in words
    assert words[0].upper() + words[1:] in _visible(render_html(receipt))
    sweep = receipt["evidence"]["sweep"]
    assert sweep["queries"][0]["safe"] == safe  # the receipt's sweep found it
    assert [a["key"] for a in sweep["axes"]] == ["fetch.overfetch", "blend.weight"]
