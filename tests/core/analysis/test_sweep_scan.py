"""A sweep over a flat table takes every query's vector leg from batched scans of the vectors
(`sweep.Scanned`), not one deep LanceDB search a query, and every number it gives is the one
the per-query searches give: over several fragments with deleted rows and exact duplicates
(ties by row id), scoped by post-filter and by pushdown, in more scan passes than one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.analysis import grid as G
from inspector.core.analysis import sweep as SW
from inspector.core.analysis.judgments import Judgments
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.engine.pools import SOURCE, batched
from inspector.core.stores.opening import open_store
from tests.storekit import CountingTable, snapshot, vectors_column, write_fragments

REPOS = ("repo0", "repo1", "repo2", "repo3")


class VectorSearches(CountingTable):
    """Counts LanceDB's vector searches only (the scan reads the vectors through plain
    scans, which it may split into several)."""

    def search(self, *a: Any, **k: Any) -> Any:
        query = a[0] if a else k.get("query")
        self.searches += query is not None and not isinstance(query, str)
        return self._table.search(*a, **k)


def _rows(start: int, n: int, rng: np.random.Generator) -> pa.Table:
    vecs = rng.normal(size=(n, 24)).astype(np.float32)
    vecs[::7] = vecs[0]  # exact duplicates: equal distances, ordered by row id
    return pa.table({
        "id": [f"m{i:04d}" for i in range(start, start + n)],
        "text": [f"memory {i}" for i in range(start, start + n)],
        "importance": pa.array([None if i % 11 == 0 else float(rng.uniform(0, 1))
                                for i in range(start, start + n)], pa.float64()),
        "repo": [REPOS[0] if i % 10 == 0 else REPOS[1 + i % 3] for i in range(start, start + n)],
        "vector": vectors_column(vecs)})


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(5)
    return write_fragments(tmp_path_factory.mktemp("sweepscan") / "db",
                           [_rows(s, n, rng) for s, n in ((0, 150), (150, 120), (270, 130))],
                           "id IN ('m0003', 'm0140', 'm0151', 'm0333')")


def _examples(n: int) -> Judgments:
    out = Judgments()
    for i in range(n):
        rid = f"m{(i * 41 + 7) % 400:04d}"
        out = out.with_query(f"like {rid}", REPOS[i % 4], vector_of=rid)
        if i % 2:  # judged queries too: recall, precision, MRR and nDCG per cell
            out = out.add(f"like {rid}", REPOS[i % 4], f"m{(i * 13 + 1) % 400:04d}")
    return out


def _sweep(path: Path, pushdown: bool, scan: bool) -> tuple[list[dict[str, Any]], int, int]:
    """Every query's sweep as JSON, the LanceDB vector searches made and the cases scanned."""
    store = open_store(str(path))
    base = Question(store=str(path), preset="lancedb", limit=5,
                    set={"scope_rule.strategy": "column", "scope_rule.column": "repo",
                         "scope_rule.pushdown": pushdown, "fetch.cap": 0})
    axes = G.parse_grid(resolve(base)[0], ["fetch.overfetch=1,4,12", "blend.weight=0,0.5,1"])
    cases = SW.cases_from_judgments(base, _examples(9), store)
    SOURCE.clear()  # no pool of another test answers these
    counting = store.table = VectorSearches(store.table)
    made: list[SW.Scanned] = []
    real = SW.Scanned

    def kept(*a: Any) -> SW.Scanned:
        made.append(real(*a))
        return made[-1]

    SW.Scanned = kept  # type: ignore[misc]
    try:
        got = [q.to_json() for q in SW.iter_sweep(store, cases, axes, scan=scan)]
    finally:
        SW.Scanned = real  # type: ignore[misc]
    return got, counting.searches, sum(m.scanned for m in made)


@pytest.mark.parametrize("pushdown", [False, True], ids=["post-filter", "pushdown"])
def test_a_swept_query_set_is_scanned_once_and_answers_as_its_own_searches(
        store_path: Path, pushdown: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    before = snapshot(store_path)
    monkeypatch.setattr(batched, "SCAN_QUERIES", 4)  # three passes over the nine queries
    searched, n_plain, none = _sweep(store_path, pushdown, scan=False)
    scanned, n_scan, taken = _sweep(store_path, pushdown, scan=True)
    assert none == 0 and taken == 9
    assert scanned == searched  # every cell, truth, metric and safe depth
    assert any(q["values"]["scoped_recall"] != searched[0]["values"]["scoped_recall"]
               for q in searched)  # the queries differ: the comparison compares something
    # per query its own deep search, against one self-check per pass
    assert n_plain >= 9 and n_scan <= 3, (n_plain, n_scan)
    assert snapshot(store_path) == before


def test_a_query_the_scan_cannot_take_is_searched_as_before(store_path: Path) -> None:
    """The scan declines a table it cannot reproduce (here: told the table is indexed); the
    sweep then searches each query itself and gives the same answers."""
    searched, _, _ = _sweep(store_path, False, scan=False)
    real = batched.scannable
    batched.scannable = lambda store: "a vector index makes LanceDB's search approximate"
    try:
        declined, n, taken = _sweep(store_path, False, scan=True)
    finally:
        batched.scannable = real
    assert taken == 0 and n >= 9
    assert declined == searched


def test_each_text_query_of_a_scanned_sweep_is_embedded_once(
        demo_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan reads each query's request from its runs; the sweep then runs those very
    runs: a text is embedded once (a remote embedder is called once a query, not twice)."""
    from inspector.core.stores import embed

    texts: list[str] = []
    real = embed.embedder_for_store

    class Counting:
        def __init__(self, emb: Any) -> None:
            self.emb = emb

        def embed(self, batch: list[str]) -> Any:
            texts.extend(batch)
            return self.emb.embed(batch)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.emb, name)

    def counting(*a: Any, **k: Any) -> Any:
        return Counting(real(*a, **k))

    monkeypatch.setattr(embed, "embedder_for_store", counting)
    store = open_store(str(demo_path))
    base = Question(store=str(demo_path), preset="lancedb", limit=5)
    axes = G.parse_grid(resolve(base)[0], ["fetch.overfetch=1,3", "blend.weight=0,1"])
    asked = Judgments()
    for words in ("rotate the signing keys", "deploy cache warmup", "postgres pool size"):
        asked = asked.with_query(words, None)
    cases = SW.cases_from_judgments(base, asked, store)
    assert texts == []
    SOURCE.clear()
    got = list(SW.iter_sweep(store, cases, axes))
    assert sorted(texts) == sorted(q.question.text for q in cases)  # once each
    assert [q.case.name for q in got] == [c.name for c in cases]
