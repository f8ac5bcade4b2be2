"""`render_html` over a hand-edited receipt (issue 21): whatever a field holds, the page gets no
element, attribute or script from it. Every field the page shows is set, one at a time and
all at once, to markup that would run script if it were pasted in unescaped."""

from __future__ import annotations

import copy
import json
from html.parser import HTMLParser
from typing import Any

import pytest

from inspector.core.analysis.grid import parse_grid
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.evidence.html import render_html
from inspector.core.evidence.receipt import build_receipt
from inspector.core.stores.opening import open_store
from tests.storekit import write_tuning_store

HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>',
           "'><svg onload=alert(1)>", "</script><script>alert(1)</script>"]
TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "b", "code",
        "table", "tr", "th", "td", "details", "summary", "svg", "text", "line", "polyline",
        "circle", "rect", "script", "div", "h3", "ul", "li", "span"}  # the verdict's layout


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def _assert_inert(page: str, where: str) -> None:
    parser = _Elements()
    parser.feed(page)
    parser.close()
    for tag, attrs in parser.tags:
        assert tag in TAGS, (where, tag)
        assert not any(a.startswith("on") for a in attrs), (where, tag, attrs)
        for value in attrs.values():
            assert value is None or "<" not in value, (where, tag, attrs)
    scripts = [attrs for tag, attrs in parser.tags if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "receipt"}], where


@pytest.fixture(scope="module")
def receipt(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A receipt with every section the page draws: metrics, safe curve, sweep, comparison,
    map and judgments; few rows, so every field can be edited one at a time."""
    path = write_tuning_store(tmp_path_factory.mktemp("html") / "s", n=60)
    store = open_store(str(path))
    q = Question(store=str(path), preset="lancedb", limit=3, vector_of="m0004",
                 scopes=["repo0"], set={"scope_rule.strategy": "column",
                                        "scope_rule.column": "repo"})
    other = q.model_copy(update={"set": {**q.set, "blend.weight": 0.5}})
    axes = parse_grid(resolve(q)[0], ["fetch.overfetch=1,2", "blend.weight=0,0.5"])
    doc = build_receipt(store, q, other, ("A", "B"), grades={"m0004": 2.0}, axes=axes)
    assert doc["evidence"]["map"] and doc["evidence"]["comparison"]
    return json.loads(json.dumps(doc))


def _leaves(node: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(node, dict):
        return [leaf for k, v in node.items() for leaf in _leaves(v, (*path, k))] + \
            [(*path, ("key", k)) for k in node]
    if isinstance(node, list):
        return [leaf for i, v in enumerate(node) for leaf in _leaves(v, (*path, i))]
    return [path]


def _put(doc: dict[str, Any], path: tuple, value: str) -> None:
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    last = path[-1]
    if isinstance(last, tuple):  # a key: renamed, its value kept
        node[value] = node.pop(last[1])
    else:
        node[last] = value


def _shown(path: tuple) -> bool:
    """Fields the page may read, each list's first two entries standing for the rest (every
    row of a table is drawn by the same code)."""
    return not any(isinstance(k, int) and k > 1 for k in path)


def test_every_field_holding_markup_stays_text(receipt):
    paths = [p for p in _leaves(receipt) if _shown(p)]
    assert len(paths) > 100
    for n, path in enumerate(paths):
        doc = copy.deepcopy(receipt)
        _put(doc, path, HOSTILE[n % len(HOSTILE)])
        _assert_inert(render_html(doc), str(path))


def test_every_string_at_once(receipt):
    def swap(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: swap(v) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v) for v in node]
        return HOSTILE[1] if isinstance(node, str) else node

    page = render_html(swap(copy.deepcopy(receipt)))
    _assert_inert(page, "every string")
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page


def test_a_receipt_written_by_report_is_inert(receipt):
    _assert_inert(render_html(receipt), "as written")
