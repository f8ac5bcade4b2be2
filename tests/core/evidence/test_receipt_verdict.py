"""The fixed pipeline's receipt leads with its verdict: before (preset named), n of limit, the
diagnosis; after (preset named), n of limit, scoped recall; the ranked lists side by side;
then the evidence, and the parameters folded at the end, in words (no Python values)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from inspector.core.engine.diagnosis import depth_words, safe_words
from inspector.core.engine.inputs import build_params, build_query
from inspector.core.evidence.html import render_html
from inspector.core.evidence.receipt import build_receipt
from inspector.core.stores.opening import open_store
from tests.storekit import snapshot

TEXT = "how do I rotate the signing keys for service tokens"


def _visible(page: str) -> str:
    """The page's text as a reader sees it (no markup, no embedded bundle)."""
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    body = re.sub(r"<style.*?</style>", "", body, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", body))


@pytest.fixture(scope="module")
def receipt(demo_path: Path) -> dict[str, Any]:
    before = snapshot(demo_path)
    store = open_store(str(demo_path))
    q = build_query(store, "hybrid", text=TEXT)
    p = build_params(preset="docs-before-fix", scope="vault-agent", limit=10)
    after = build_params(preset="docs-pushdown", scope="vault-agent", limit=10)
    doc = build_receipt(store, q, p, against=("docs-pushdown", after), label="docs-before-fix",
                        with_map=False)
    assert snapshot(demo_path) == before  # the receipt reads the store, never writes it
    return doc


def test_the_first_screen_is_the_verdict_with_both_presets_named(receipt) -> None:
    page = render_html(receipt)
    text = _visible(page)
    first = text[: text.index("Counters and diagnosis")]  # what comes before the evidence
    t, c = receipt["trace"], receipt["comparison"]
    limit = t["params"]["limit"]
    assert "before · preset docs-before-fix" in first
    assert f"{t['counters']['returned']} of {limit} returned" in first
    assert t["diagnosis"]["message"] in first
    assert "after · preset docs-pushdown" in first
    assert f"{len(c['b']['ids'])} of {c['b']['params']['limit']} returned" in first
    assert f"scoped recall {c['b']['scoped_recall']:.2f}" in first
    # the ranked lists side by side: after's rows in its order, before's (empty) said so
    after_ids = [r["id"] for r in sorted((r for r in c["rows"] if r["rank_b"]),
                                         key=lambda r: r["rank_b"])]
    assert after_ids and all(str(i) in first for i in after_ids)
    assert [first.index(str(i)) for i in after_ids] == sorted(first.index(str(i))
                                                              for i in after_ids)
    assert "nothing returned" in first
    # no parameter table and no store metadata table before the verdict
    assert "over-fetch factor" not in first and "Every parameter" not in first
    assert page.index("Verdict") < page.index("<h2>Counters") < page.index("Every parameter")


def test_parameters_are_folded_at_the_end_in_words(receipt) -> None:
    page = render_html(receipt)
    params = page[page.index("<details><summary>Every parameter"):]
    text = _visible(params)
    for python in ("False", "True", "None", "{}", "{'", "[]", "()"):
        assert python not in text, python
    assert "over-fetch factor" in text and "filter placement" in text
    assert "post-filter (after the global top-k cut)" in text
    assert "pushdown (inside the search)" in text  # after's placement, beside before's
    assert "exact (flat) search no" in " ".join(text.split())


def test_safe_over_fetch_is_said_in_the_banner_s_words(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    q = build_query(store, "vector", text=TEXT)
    p = build_params(preset="docs-before-fix", scope="vault-agent", limit=10, mode="vector")
    doc = build_receipt(store, q, p, label="docs-before-fix", with_map=False)
    safe = doc["safe"]
    assert safe["depth"] is not None
    words = safe_words(safe["depth"], p.limit)
    text = _visible(render_html(doc))
    assert f"Minimum {words}" in text
    # the same number, named the same; "safe" only where safe over-fetch proved it
    assert depth_words(safe["depth"], p.limit) in doc["trace"]["diagnosis"]["message"]
    first = text[: text.index("Counters and diagnosis")]
    assert "before · preset docs-before-fix" in first and "after ·" not in first
