"""The recall audit's batched scan reads the vectors once (the ones the audit already read for
its probes) and every probe's answer is the one its own LanceDB search gives: over several
fragments with deleted rows, exact duplicates (ties by row id) and near-duplicates, in more
query tiles and passes than one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.analysis.audit import Prober, runs
from inspector.core.engine.flow.spec import load_shipped
from inspector.core.stores.opening import open_store
from inspector.core.stores.vectorscan import kernels as LM
from inspector.core.stores.vectorscan import scan as S
from tests.storekit import snapshot, vectors_column, write_fragments

NOW = 1.79e12
NAMES = np.random.default_rng(0).permutation(390)  # ids in another order than row ids


def _rows(start: int, n: int, rng: np.random.Generator) -> pa.Table:
    vecs = rng.normal(size=(n, 24)).astype(np.float32)
    vecs[::9] = vecs[0]  # exact duplicates in every fragment: equal distances, row id order
    near = vecs[1::9] + rng.normal(scale=1e-3, size=vecs[1::9].shape).astype(np.float32)
    vecs[2::9] = near[: len(vecs[2::9])]  # near-duplicates: a few ulps to 1e-3 apart
    return pa.table({"id": [f"m{NAMES[i]:04d}" for i in range(start, start + n)],
                     "text": [f"memory {i}" for i in range(start, start + n)],
                     "importance": rng.uniform(0, 1, n),
                     "vector": vectors_column(vecs)})


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auditscan") / "db"
    rng = np.random.default_rng(23)
    return write_fragments(path, [_rows(start, n, rng) for start, n in ((0, 160), (160, 90),
                                                                         (250, 140))],
                           "id IN ('m0003', 'm0100', 'm0161', 'm0300')")


def _answers(prober: Prober, sample: int) -> tuple[list[Any], dict[str, Any]]:
    mem = prober.read(sample, 4)
    prober.prepare(mem, mem.picked, [None] * len(mem.picked))
    return [prober.ask(mem, i, None) for i in mem.picked], prober.method()


@pytest.mark.parametrize(("preset", "distance"), [("importance-blend", "l2"),
                                                  ("other-plugin", "cosine")])
def test_scanned_probes_equal_their_own_searches(store_path: Path, preset: str, distance: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Every probe's answer from the batched scan equals its own search's. Where the scan's
    kernels do not give LanceDB's arithmetic for the metric on this processor
    (`kernels.reproduced`: cosine without AVX-512F), every probe is searched on its own and
    the answers are the same: on such a processor the scanned cosine probes had differed."""
    from inspector.core.analysis.audit import probes

    store = open_store(str(store_path), "memories")
    spec = load_shipped(preset)
    monkeypatch.setattr(S, "QUERY_TILE", 7)  # many tiles of a block
    monkeypatch.setattr(probes, "PER_PASS", 100)  # and several passes
    before = snapshot(store_path)
    fast, how = _answers(Prober(store, spec, 10, NOW), 250)
    slow, per = _answers(Prober(store, spec, 10, NOW, scan=False), 250)
    if LM.reproduced(distance):
        assert how["batched"] and how["scanned"] == 250 and not how["per_query"]
    else:
        assert how["scanned"] == 0 and how["per_query"] == 250
    assert per["per_query"] == 250
    assert fast == slow  # every probe: the returned list, the stage, the code and detail
    assert snapshot(store_path) == before


def test_the_scan_takes_the_vectors_the_audit_read(store_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit reads every vector once (by row-id ranges, apart from the other columns):
    neither the outrank shortcut nor the scan reads them again from LanceDB."""
    store = open_store(str(store_path), "memories")
    reads: list[int] = []
    ranges = S.vector_ranges

    def counted(*a: Any, **k: Any) -> Any:
        reads.append(1)
        return ranges(*a, **k)

    def no_second_read(*a: Any, **k: Any) -> Any:
        raise AssertionError("the scan read the vectors again")

    monkeypatch.setattr(S, "vector_ranges", counted)
    monkeypatch.setattr(S, "vector_batches", no_second_read)
    prober = Prober(store, load_shipped("importance-blend"), 10, NOW)
    res = runs.recall_audit(prober, sample=120, seed=1)
    how = res["scan"]
    assert reads == [1] and how["batched"] and how["scanned"] > 0 and how["shortcut"] > 0
    assert how["scanned"] + how["shortcut"] == 120 and not how["per_query"]
    slow = runs.recall_audit(Prober(store, load_shipped("importance-blend"), 10, NOW,
                                         scan=False), sample=120, seed=1)
    for key in ("counts", "never_recallable", "found"):
        assert res[key] == slow[key], key


def test_vectors_not_stored_as_float32_are_read_by_the_scan_itself(tmp_path: Path) -> None:
    """A float16 column: the audit's matrix is a conversion, so it is not handed to the scan
    as the stored vectors."""
    from tests.storekit import write_table

    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(40, 24))
    write_table(tmp_path / "db", {"id": [f"h{i}" for i in range(40)],
                                  "vector": vectors_column(vecs, pa.float16())})
    store = open_store(str(tmp_path / "db"), "memories")
    mem = Prober(store, load_shipped("importance-blend"), 5, NOW).read(None, 0)
    assert mem.rowids is None


def test_a_table_that_gives_no_row_ids_is_read_as_before(store_path: Path) -> None:
    """Where a table's search refuses row ids, the memories are read without them (and the
    scan reads its own vectors)."""
    from types import SimpleNamespace

    from inspector.core.analysis.audit.memories import read_memories

    store = open_store(str(store_path), "memories")

    class NoRowIds:
        def __init__(self, q: Any) -> None:
            self.q = q

        def select(self, cols: Any) -> NoRowIds:
            return NoRowIds(self.q.select(cols))

        def limit(self, n: int) -> NoRowIds:
            return NoRowIds(self.q.limit(n))

        def with_row_id(self, flag: bool = True) -> NoRowIds:
            raise RuntimeError("this table has no row ids")

        def to_arrow(self) -> Any:
            return self.q.to_arrow()

    table = SimpleNamespace(schema=store.table.schema,
                            search=lambda: NoRowIds(store.table.search()))
    plain = read_memories(SimpleNamespace(table=table, rows=store.rows, dim=store.dim), "id",
                          "text", "vector")
    full = read_memories(store, "id", "text", "vector")
    assert plain.rowids is None and full.rowids is not None
    assert plain.ids == full.ids and np.array_equal(plain.vectors, full.vectors)


@pytest.mark.parametrize("shuffled", [False, True])
def test_memories_hold_each_row_s_own_vector_and_scope_in_id_order(tmp_path: Path,
                                                                   shuffled: bool) -> None:
    """The memories as read row by row from the table, sorted by id: each row's own vector
    and its scope decided from its text columns (NULL, empty and repeated values, two columns
    at once) or, for a number column, row by row; written in id order or shuffled."""
    from inspector.core.analysis.audit.memories import read_memories
    from tests.storekit import write_table

    rng = np.random.default_rng(11)
    n = 500
    order = rng.permutation(n) if shuffled else np.arange(n)
    repos = ["a", "b", "", None, "A"]
    paths = ["a/x", None, "b/y", "", "a/x/z"]
    data = {"id": [f"m{i:04d}" for i in order],
            "repo": [repos[i % 5] for i in order], "path": [paths[i % 7 % 5] for i in order],
            "level": pa.array([float(i % 3) if i % 4 else None for i in order], pa.float64()),
            "vector": rng.normal(size=(n, 16)).astype(np.float32)}
    write_table(tmp_path / "db", data)
    store = open_store(str(tmp_path / "db"), "memories")
    rows = sorted(store.table.to_arrow().to_pylist(), key=lambda r: r["id"])
    for cols in (["repo"], ["repo", "path"], ["level"], ["repo", "level"]):
        calls: list[dict[str, Any]] = []

        def scope_of(row: dict[str, Any], calls: list = calls) -> Any:
            calls.append(row)
            return tuple(row.values())

        mem = read_memories(store, "id", None, "vector", scope_of, cols)
        assert list(mem.ids) == [r["id"] for r in rows]
        assert mem.scopes == tuple(tuple(r[c] for c in cols) for r in rows), cols
        assert np.array_equal(mem.vectors, np.array([r["vector"] for r in rows], np.float32))
        if "level" not in cols:  # text: each distinct tuple of values decided once
            assert len(calls) == len({tuple(r[c] for c in cols) for r in rows})
