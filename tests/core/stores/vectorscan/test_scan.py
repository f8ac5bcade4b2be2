"""The batched scan returns what LanceDB's flat search returns, query by query: the same ids
in the same order with the same `_distance` bits, ties by row id, with and without a
prefilter, over several fragments with deleted rows; with numpy and (if installed) numba."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lancedb.expr import col, lit

from inspector.core.stores.vectorscan import kernels as LM
from inspector.core.stores.vectorscan import scan as S
from tests.storekit import vectors_column

JIT = [False, True] if LM.has_jit() else [False]


def _rows(start: int, n: int, dim: int, rng: np.random.Generator, dup_every: int) -> pa.Table:
    vecs = (rng.normal(size=(n, dim)) * rng.uniform(0.05, 20)).astype(np.float32)
    if dup_every:  # exact ties (one vector shared by every fragment): ordered by row id
        vecs[::dup_every] = np.linspace(-1, 1, dim, dtype=np.float32)
    return pa.table({"id": [f"r{i}" for i in range(start, start + n)],
                     "repo": [f"repo{i % 3}" for i in range(start, start + n)],
                     "vector": vectors_column(vecs)})


def _table(path: Path, dim: int, sizes: tuple[int, ...], seed: int, dup_every: int = 0,
           delete: bool = False) -> Any:
    rng = np.random.default_rng(seed)
    tbl = lancedb.connect(str(path)).create_table("m", _rows(0, sizes[0], dim, rng, dup_every))
    start = sizes[0]
    for n in sizes[1:]:  # each add is a new fragment
        tbl.add(_rows(start, n, dim, rng, dup_every))
        start += n
    if delete:
        tbl.delete("id IN ('r1', 'r5', 'r70', 'r301', 'r302')")
    return tbl


def _scanned(req: S.ScanRequest, call: Any) -> Any:
    """The scan's answer; where its kernels do not give LanceDB's arithmetic for the metric
    on this processor (`kernels.reproduced`: cosine without AVX-512F), its refusal, before it
    reads a row (None)."""
    if LM.reproduced(req.distance):
        return call()
    with pytest.raises(S.ScanUnsupported, match="not reproduced"):
        call()
    return None


def _lancedb_ranking(tbl: Any, q: np.ndarray, distance: str, where: Any) -> tuple[Any, Any]:
    """LanceDB's full flat ranking (every row), in canonical order."""
    s = (tbl.search(q).distance_type(distance).select([]).with_row_id(True)
         .limit(tbl.count_rows()))
    if where is not None:
        s = s.where(where, prefilter=True)
    got = s.to_arrow()
    d = got.column("_distance").to_numpy()
    ids = got.column("_rowid").to_numpy().astype(np.int64)
    order = np.lexsort((ids, d))
    return d[order], ids[order]


CASES = [  # dim, fragment sizes, duplicated rows, deletions
    (17, (400,), 0, False),
    (100, (150, 90, 300), 7, True),
    (384, (260, 260), 0, True),
    (40, (500,), 3, False),
]


@pytest.mark.parametrize("jit", JIT)
@pytest.mark.parametrize("distance", ["l2", "cosine"])
@pytest.mark.parametrize(("dim", "sizes", "dup", "delete"), CASES)
def test_scan_equals_lancedb_flat_search_per_query(tmp_path: Path, dim: int, sizes: tuple,
                                                   dup: int, delete: bool, distance: str,
                                                   jit: bool) -> None:
    tbl = _table(tmp_path / "db", dim, sizes, seed=dim + len(sizes), dup_every=dup,
                 delete=delete)
    rng = np.random.default_rng(dim)
    queries = rng.normal(size=(7, dim)).astype(np.float32)
    first = tbl.search().select(["vector"]).limit(1).to_arrow()
    queries[0] = first.column("vector")[0].values.to_numpy()  # a stored vector: distance 0
    wheres = [None, col("repo") == lit("repo1")]
    groups = np.array([0, 1, 0, 1, 0, 0, 1])
    allowed = (None, S.allowed_rowids(tbl, wheres[1], "id"))
    rows = tbl.count_rows()
    for k in (1, 37, rows - 3, rows + 5):
        req = S.ScanRequest(queries, k, distance, groups, allowed, rows)
        got = _scanned(req, lambda r=req: S.scan_batches(
            lambda: S.vector_batches(tbl, "vector", batch_rows=128), "vector", dim, r,
            jit=jit))
        if got is None:
            return
        for i, q in enumerate(queries):
            d, ids = _lancedb_ranking(tbl, q, distance, wheres[groups[i]])
            assert np.array_equal(got.rowids[i], ids[:k]), (k, i)
            assert np.array_equal(got.distances[i], d[:k]), (k, i)  # bit for bit
            assert got.available[i] == len(d)


@pytest.mark.parametrize("distance", ["l2", "cosine"])
@pytest.mark.parametrize(("dim", "sizes", "dup", "delete"), CASES[1:3])
def test_many_blocks_and_query_tiles_equal_lancedb(tmp_path: Path, dim: int, sizes: tuple,
                                                   dup: int, delete: bool, distance: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 64 rows and tiles of 3 queries: every bound carried from block to block
    (the first block's guesses, the running k-th) and every tile edge, against LanceDB."""
    monkeypatch.setattr(S, "BATCH_ROWS", 64)
    monkeypatch.setattr(S, "QUERY_TILE", 3)
    tbl = _table(tmp_path / "db", dim, sizes, seed=dim, dup_every=dup, delete=delete)
    rng = np.random.default_rng(dim + 1)
    queries = rng.normal(size=(8, dim)).astype(np.float32)
    wheres = [None, col("repo") == lit("repo2")]
    groups = np.array([0, 1, 1, 0, 0, 1, 0, 1])
    allowed = (None, S.allowed_rowids(tbl, wheres[1], "id"))
    rows = tbl.count_rows()
    for k in (1, 20, 70):
        req = S.ScanRequest(queries, k, distance, groups, allowed, rows)
        got = _scanned(req, lambda r=req: S.scan_batches(
            lambda: S.vector_batches(tbl, "vector", batch_rows=32), "vector", dim, r))
        if got is None:
            return
        for i, q in enumerate(queries):
            d, ids = _lancedb_ranking(tbl, q, distance, wheres[groups[i]])
            assert np.array_equal(got.rowids[i], ids[:k]), (k, i)
            assert np.array_equal(got.distances[i], d[:k]), (k, i)
            assert got.available[i] == len(d)


@pytest.mark.parametrize("distance", ["l2", "cosine"])
def test_a_scoped_group_s_product_spans_its_own_rows(tmp_path: Path, distance: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A group whose predicate keeps part of a block is scanned over those rows alone (its
    matrix product a group's rows wide, not the block's); a group it keeps whole, and the
    unfiltered one, over the block. Each query still gets LanceDB's ranking."""
    from inspector.core.stores.vectorscan import bounds as BD

    monkeypatch.setattr(S, "BATCH_ROWS", 128)
    tbl = _table(tmp_path / "db", 40, (300, 200), seed=5, dup_every=9, delete=True)
    widths: list[tuple[int, int]] = []
    real = BD.Tile.__init__

    def counted(self: Any, blk: Any, q: np.ndarray, q_sq: np.ndarray) -> None:
        widths.append((len(q), blk.x.shape[0]))
        real(self, blk, q, q_sq)

    monkeypatch.setattr(BD.Tile, "__init__", counted)
    wheres = [None, col("repo") == lit("repo1"), col("repo") == lit("repo2"),
              col("repo").isin([lit("repo0"), lit("repo1"), lit("repo2")])]
    allowed = tuple(None if w is None else S.allowed_rowids(tbl, w, "id") for w in wheres)
    groups = np.array([0, 1, 2, 1, 3, 2, 1, 1, 2])  # 4 queries of repo1, 3 of repo2, and 2
    rng = np.random.default_rng(6)  # over the whole table (unfiltered, and kept whole)
    queries = rng.normal(size=(len(groups), 40)).astype(np.float32)
    rows = tbl.count_rows()
    req = S.ScanRequest(queries, 25, distance, groups, allowed, rows)
    got = _scanned(req, lambda: S.scan_batches(
        lambda: S.vector_batches(tbl, "vector", batch_rows=64), "vector", 40, req))
    if got is None:
        return
    for i, q in enumerate(queries):
        d, ids = _lancedb_ranking(tbl, q, distance, wheres[groups[i]])
        assert np.array_equal(got.rowids[i], ids[:25]), i
        assert np.array_equal(got.distances[i], d[:25]), i
    wide = {n: sum(w for m, w in widths if m == n) for n in (4, 3, 2)}
    assert wide == {4: len(allowed[1]), 3: len(allowed[2]), 2: rows}
    assert {m for m, _ in widths} == {4, 3, 2}
    widths.clear()  # a predicate keeping rows of the first block only: the others add none
    first = col("id").isin([lit(f"r{i}") for i in range(0, 60, 3)])
    req = S.ScanRequest(queries[:3], 7, distance, np.array([0, 1, 0]),
                        (None, S.allowed_rowids(tbl, first, "id")), rows)
    got = S.scan_batches(lambda: S.vector_batches(tbl, "vector", batch_rows=64), "vector",
                         40, req)
    for i, where in enumerate((None, first, None)):
        d, ids = _lancedb_ranking(tbl, queries[i], distance, where)
        assert np.array_equal(got.rowids[i], ids[:7]) and got.available[i] == len(d)
        assert np.array_equal(got.distances[i], d[:7])
    assert [w for m, w in widths if m == 1] == [len(req.allowed[1])]  # one block, its rows
    assert sum(w for m, w in widths if m == 2) == rows


def test_ties_are_ordered_by_row_id_across_fragments(tmp_path: Path) -> None:
    tbl = _table(tmp_path / "db", 32, (50, 50, 50), seed=1, dup_every=2, delete=True)
    q = np.zeros(32, np.float32)
    req = S.ScanRequest(q[None], 60, "l2", rows=tbl.count_rows())
    got = S.scan_batches(lambda: S.vector_batches(tbl, "vector", batch_rows=16), "vector", 32,
                         req)
    d, ids = got.distances[0], got.rowids[0]
    tied = d == d[0]
    assert tied.sum() > 30  # every other row holds the same vector
    assert np.all(np.diff(ids[tied]) > 0)
    assert len({int(r) >> 32 for r in ids[tied]}) == 3  # the tie spans the three fragments


def test_merging_partial_scans_equals_one_scan(tmp_path: Path) -> None:
    tbl = _table(tmp_path / "db", 24, (120, 80, 100), seed=4, dup_every=5)
    q = np.random.default_rng(2).normal(size=(3, 24)).astype(np.float32)
    req = S.ScanRequest(q, 90, "l2")
    whole = S.scan_batches(lambda: S.vector_batches(tbl, "vector"), "vector", 24, req)
    frags = sorted({int(r) >> 32 for r in whole.rowids[0]})
    parts = [S.scan_batches(lambda f=f: S.vector_batches(
        tbl, "vector", where=f"_rowid >= {f << 32} AND _rowid < {(f + 1) << 32}"),
        "vector", 24, req) for f in frags]
    merged = S.merge_partials(parts, 90)
    for i in range(3):
        assert np.array_equal(merged.rowids[i], whole.rowids[i])
        assert np.array_equal(merged.distances[i], whole.distances[i])
    assert np.array_equal(merged.available, whole.available)


def _round_f32(x: Fraction) -> np.float32:
    """Round an exact value to float32, nearest, ties to even."""
    r = np.float32(float(x))
    best = None
    for c in (np.nextafter(r, np.float32(-np.inf)), r, np.nextafter(r, np.float32(np.inf))):
        key = (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, c)
    assert best is not None
    return best[1]


def test_fused_multiply_add_rounds_once_even_at_double_rounding_midpoints() -> None:
    a = np.float32(1 + 2**-12)
    tiny = np.float32(2**-80)  # lost in float64, yet it decides the float32 rounding
    for c in (tiny, -tiny):
        got = LM.fma32(np.array([a]), np.array([a]), np.array([c]))[0]
        assert got == _round_f32(Fraction(float(a)) ** 2 + Fraction(float(c)))
    rng = np.random.default_rng(0)
    x, y, z = (rng.normal(size=2000).astype(np.float32) for _ in range(3))
    got = LM.fma32(x, y, z)
    want = [_round_f32(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)))
            for p, q, r in zip(x, y, z, strict=True)]
    assert np.array_equal(got, np.array(want, np.float32))


def test_unsupported_vectors_are_refused_not_guessed(tmp_path: Path) -> None:
    vecs = np.ones((5, 20), np.float32)
    vecs[2, 3] = np.nan
    tbl = lancedb.connect(str(tmp_path / "db")).create_table(
        "m", pa.table({"id": list(range(5)), "vector": vectors_column(vecs)}),
        on_bad_vectors="null")  # a NULL vector: what LanceDB does with it is not reproduced
    req = S.ScanRequest(np.ones((1, 20), np.float32), 3, "l2")
    with pytest.raises(S.ScanUnsupported):
        S.scan_batches(lambda: S.vector_batches(tbl, "vector"), "vector", 20, req)
    assert not LM.supported_dim(16) and LM.supported_dim(17)


def test_ray_missing_is_one_sentence_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.core.errors import InspectorError
    from inspector.core.stores.vectorscan import on_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(InspectorError, match=r"pip install -e '\.\[scale\]'"):
        on_ray._ray()


@pytest.mark.parametrize("distance", ["l2", "cosine"])
def test_pairs_give_each_pair_the_bits_of_its_own_query_s_kernel(distance: str) -> None:
    """Without numba, queries with many pairs run alone and the others' pairs are gathered
    together: either way each pair's `_distance` is the row kernel's for its query."""
    rng = np.random.default_rng(11)
    x = (rng.normal(size=(700, 40)) * rng.uniform(0.1, 9, size=(700, 1))).astype(np.float32)
    q = rng.normal(size=(6, 40)).astype(np.float32)
    counts = [0, 3, 600, 1, 300, 40]  # around the alone-or-gathered step, and none at all
    rows = np.concatenate([rng.choice(700, c, replace=False) for c in counts]).astype(np.int64)
    ptr = np.concatenate([[0], np.cumsum(counts)])
    got = LM.pairs(x, q, ptr, rows, distance, jit=False)
    for i in range(len(q)):
        a, b = ptr[i], ptr[i + 1]
        assert np.array_equal(got[a:b], LM.rows(x[rows[a:b]], q[i], distance)), i


def test_cosine_is_scanned_only_on_the_processor_its_kernels_were_measured_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """LanceDB's cosine depends on the processor: on an AVX2 machine without AVX-512 up
    to one row in ten came back a float32 step away from these kernels, while squared
    L2 held. Cosine is scanned only where the processor reports AVX-512F; elsewhere, or where
    the flags cannot be read, the scan refuses before it reads a row."""
    def on(flags: set[str]) -> tuple[bool, bool]:
        monkeypatch.setattr(LM, "_cpu_flags", lambda: frozenset(flags))
        LM.reproduced.cache_clear()
        return LM.reproduced("l2"), LM.reproduced("cosine")

    try:
        assert on({"avx512f", "avx2", "fma"}) == (True, True)
        assert on({"avx2", "fma"}) == (True, False)
        assert on(set()) == (True, False)
        read: list[int] = []
        req = S.ScanRequest(np.ones((1, 32), np.float32), 3, "cosine")
        with pytest.raises(S.ScanUnsupported, match="not reproduced"):
            S.scan_batches(lambda: read.append(1) or iter(()), "vector", 32, req)
        assert read == []  # refused before the table was read
    finally:
        LM.reproduced.cache_clear()
