"""The receipt page embeds its JSON so that no stored text can end or hide the script element
(issue 12, case 9): a memory whose id holds `<!--<script>` or `</script>` round-trips
exactly."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa

from inspector.core.engine.flow.question import Question
from inspector.core.evidence.html import script_safe_json
from inspector.core.evidence.receipt import build_receipt, save
from inspector.core.stores.opening import open_store
from tests.storekit import vectors_column

NASTY = ["<!--<script>", "</script></body></html>", "<script>alert(1)</script>", "-->",
         "</SCRIPT >", "a & b > c", "\u2028line\u2029sep", "<!-- <script> --> </script>"]


class _Scripts(HTMLParser):
    """Collects the text of each <script> element, as a browser's tokenizer splits it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._attrs: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._attrs = dict(attrs)
            self.scripts.append((self._attrs, ""))

    def handle_data(self, data: str) -> None:
        if self._attrs is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._attrs = None


def test_script_safe_json_has_no_angle_brackets_and_reads_back_the_same():
    doc = {"texts": NASTY}
    text = script_safe_json(json.dumps(doc, ensure_ascii=False))
    # HTML5's script data states only change on '<': without one, nothing can end or hide it
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == doc


def test_a_receipt_of_nasty_memories_embeds_the_exact_receipt(tmp_path: Path):
    n = len(NASTY)
    vecs = np.random.default_rng(0).normal(size=(n, 4)).astype(np.float32)
    lancedb.connect(str(tmp_path / "s")).create_table("memories", pa.table({
        "id": NASTY, "text": NASTY, "vector": vectors_column(vecs), "repo": ["a"] * n}))
    store = open_store(str(tmp_path / "s"))
    q = Question(store=str(tmp_path / "s"), preset="lancedb", limit=n,
                 vector=[float(x) for x in vecs[0]])
    receipt = build_receipt(store, q, with_map=False, with_sweep=False)
    json_path, html_path = save(receipt, tmp_path / "out" / "r")
    parser = _Scripts()
    parser.feed(html_path.read_text(encoding="utf-8"))
    parser.close()
    scripts = [text for attrs, text in parser.scripts if attrs.get("id") == "receipt"]
    assert len(parser.scripts) == 1 and len(scripts) == 1
    assert "<" not in scripts[0]  # an HTML5 tokenizer stays in the plain script data state
    embedded = json.loads(scripts[0])
    assert embedded == json.loads(json_path.read_text(encoding="utf-8"))
    stored = {c["id"] for c in embedded["before"]["stages"][-1]["candidates"]}
    assert stored == set(NASTY)
