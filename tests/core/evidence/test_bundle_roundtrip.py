"""Receipts: the pool survives JSON exactly, a reopened bundle re-ranks like the store does,
and the HTML page is self-contained."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from inspector.core.analysis.sweep import Grid
from inspector.core.analysis.truth import trim_pool
from inspector.core.engine.inputs import build_params, build_query
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive, run
from inspector.core.engine.pool import fetch_pool
from inspector.core.engine.pools import exhaustive_pool
from inspector.core.engine.trace import Trace
from inspector.core.errors import InspectorError
from inspector.core.evidence import bundle
from inspector.core.evidence.receipt import build_receipt
from inspector.core.stores.demo import SCOPE_QUERY
from inspector.core.stores.opening import open_store


def _same_trace(a: Trace, b: Trace, same_rows: bool = True) -> None:
    """Equal stages, counters and diagnosis; per-row arrays equal (by id when the two pools
    order their rows differently)."""
    for name in ("raw", "scoped", "blended", "final"):
        assert a.ids(name) == b.ids(name)
    assert a.counters == b.counters and a.diagnosis == b.diagnosis
    order = None if same_rows else [b.row_of(x) for x in a.pool.ids]
    for f in fields(Trace):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if order is not None:
                keep = [i for i, j in enumerate(order) if j is not None]
                x, y = x[keep], y[[order[i] for i in keep]]
            np.testing.assert_array_equal(x, y)  # NaN positions must agree too


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_pool_round_trips_and_derives_identically(small_store: Path, mode: str) -> None:
    store = open_store(str(small_store))
    p = Params(mode=mode, limit=5, scope="repo0", cap=0, fts_k=8, vec_k=8)
    q = build_query(store, mode, text="rotate keys", vector_of="m0004")
    pool = exhaustive_pool(store, q, p, depth=120)
    back = bundle.pool_from_json(json.loads(json.dumps(bundle.pool_to_json(pool))))
    for cell in (p, p.with_(overfetch=3.0, blend=0.6, min_score=0.2), p.with_(overfetch=7.5)):
        _same_trace(derive(pool, cell), derive(back, cell))


def test_trimmed_pool_equals_a_fetch_at_that_depth(small_store: Path) -> None:
    store = open_store(str(small_store))
    p = Params(mode="hybrid", limit=5, scope="repo0", fts_k=8, vec_k=8)
    q = build_query(store, "hybrid", text="rotate keys", vector_of="m0004")
    trimmed = trim_pool(exhaustive_pool(store, q, p), 30)
    fetched = fetch_pool(store, q, p, vec_k=30, fts_k=30)
    for cell in (p, p.with_(overfetch=4.0, blend=1.0), p.with_(overfetch=6.0, min_score=0.01)):
        _same_trace(derive(trimmed, cell), derive(fetched, cell), same_rows=False)


def test_saved_bundle_reopens_offline_and_reranks_like_the_store(tmp_path: Path,
                                                                  demo_path: Path) -> None:
    store = open_store(str(demo_path))
    p = build_params(preset="docs-before-fix", scope="vault-agent", limit=10)
    q = build_query(store, p.mode, text=SCOPE_QUERY)
    other = build_params(preset="docs-pushdown", scope="vault-agent", limit=10)
    doc = build_receipt(store, q, p, against=("docs-pushdown", other),
                        grid=Grid(overfetch=(1.0, 3.0, 5.0), blend=(0.0, 0.5)))
    paths = bundle.save(doc, tmp_path / "receipt")
    assert [x.suffix for x in paths] == [".json", ".html"]
    pool, params, data = bundle.load(paths[0])
    assert params == p and data["store"]["version"] == store.version
    assert data["trace"]["counters"]["scopedCandidates"] == 0
    assert data["comparison"]["a"]["starved"] == 10
    for cell in (p, p.with_(overfetch=3.0), p.with_(overfetch=5.0, blend=0.5)):
        assert derive(pool, cell).ids("final") == run(store, q, cell).ids("final")


def test_html_page_is_self_contained_and_embeds_the_bundle(tmp_path: Path,
                                                           small_store: Path) -> None:
    store = open_store(str(small_store))
    p = Params(mode="vector", limit=5, scope="repo0")
    q = build_query(store, "vector", vector_of="m0004")
    doc = build_receipt(store, q, p, grades={"m0000": 1.0}, grid=Grid(blend=(0.0, 0.5)))
    _, html_path = bundle.save(doc, tmp_path / "r.json")
    page = html_path.read_text(encoding="utf-8")
    assert page.count("<svg") >= 4  # counters, recall curve, sweep heat map, pool map
    assert not re.search(r"""(src|href)\s*=|<link|@import|url\(""", page)
    assert set(re.findall(r"https?://[^\s\"'<]+", page)) <= {"http://www.w3.org/2000/svg"}
    embedded = re.search(r'<script type="application/json" id="bundle">(.*)</script>', page, re.S)
    assert json.loads(embedded.group(1).replace("<\\/", "</")) == \
        json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert set(doc["metrics"]) == {"scoped_recall@5", "recall@5", "precision@5", "mrr", "ndcg@5"}


def test_loading_something_else_says_so(tmp_path: Path) -> None:
    with pytest.raises(InspectorError, match="does not exist"):
        bundle.load(tmp_path / "none.json")
    f = tmp_path / "x.json"
    f.write_text('{"format": "other"}')
    with pytest.raises(InspectorError, match="not an inspector bundle"):
        bundle.load(f)
