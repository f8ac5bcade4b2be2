"""Named regressions from issue 12: every odd input gives the right answer or exit 2 with one
line on stderr, never a traceback, and the store stays byte-identical."""

from __future__ import annotations

import decimal
import importlib
import json
import os
import shutil
import time
import warnings
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.cli.main import main
from tests.storekit import snapshot, vectors_column

cli_main = importlib.import_module("inspector.cli.main")


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(code: int, err: str) -> str:
    assert code == 2, err
    assert err.startswith("inspector: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.fixture
def store(small_store: Path) -> Path:
    return small_store


@pytest.mark.parametrize("args,expect", [
    (("sweep", "--text", "keys", "--grid-blend", "0:1:1e-9"), "between 1 and 200 values"),
    (("sweep", "--text", "keys", "--grid-overfetch", "1:inf:1"), "finite numbers"),
    (("sweep", "--text", "keys", "--grid-overfetch", "1,nan"), "finite numbers"),
    (("sweep", "--text", "keys", "--cap", "0", "--grid-overfetch", "1,1e9"),
     "fetch.overfetch must be a finite number in [1, 1,000,000]"),
    (("query", "--text", "keys", "--overfetch", "1e308", "--cap", "0"),
     "fetch.overfetch must be a finite number in [1, 1,000,000]"),
    (("query", "--vector", "[1e39, 0, 0, 0, 0, 0, 0, 0]"), "float32"),
    (("report", "--text", "keys", "--against", 'scope_map={"a": 5}', "--out", "x"),
     "list of strings"),
])
def test_bad_sizes_fail_fast_with_one_line(capsys, store, args, expect):
    before = snapshot(store)
    start = time.perf_counter()
    code, _out, err = _run(capsys, args[0], str(store), *args[1:])
    assert time.perf_counter() - start < 30  # refused before any allocation (minutes), any load
    assert expect in _one_line(code, err)
    assert snapshot(store) == before


def test_docs_overfetch_with_a_limit_above_its_pool_runs_like_the_engine(capsys, store):
    code, out, err = _run(capsys, "query", str(store), "--preset", "docs-overfetch", "--limit",
                          "60", "--scope", "repo1", "--text", "keys", "--vector",
                          json.dumps([1.0] * 8), "--json")
    assert code == 0, err
    doc = json.loads(out)
    facts = doc["stages"][1]["facts"]
    assert facts["depth"] == 50 and facts["vec_k"] == 50  # min(50, max(60 * 5, 20))
    assert "Over-fetch" not in err and "over-fetch" not in err


@pytest.mark.parametrize("data,expect", [
    ({"checks": [{"text": "keys", "assert": ["returned > NaN"]}]}, "not a finite number"),
    ({"checks": [{"text": "keys", "params": [1], "assert": ["returned > 0"]}]}, "\"params\""),
    ({"store": 7, "checks": [{"text": "keys", "assert": ["returned > 0"]}]}, "\"store\""),
    ({"checks": [{"text": 5, "assert": ["returned > 0"]}]}, "\"text\""),
    ({"checks": [{"text": "k", "preset": 3, "assert": ["returned > 0"]}]}, "\"preset\""),
    ({"checks": [{"text": "k", "params": {"scope_map": {"a": 5}}, "assert": ["returned > 0"]}]},
     "list of strings"),
])
def test_malformed_checks_files_are_one_line(capsys, tmp_path, store, data, expect):
    f = tmp_path / "checks.json"
    f.write_text(json.dumps({"format": "inspector-checks", "version": 1, **data}))
    code, _out, err = _run(capsys, "check", str(f), "--store", str(store))
    assert expect in _one_line(code, err)


def test_vector_files_that_are_not_utf8_or_too_deep_are_one_line(capsys, tmp_path, store):
    binary = tmp_path / "v.bin"
    binary.write_bytes(b"[1, 2, \xff\xfe]")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    for f, expect in ((binary, "not UTF-8"), (deep, "JSON array")):
        code, _out, err = _run(capsys, "query", str(store), "--vector", f"@{f}")
        assert expect in _one_line(code, err)


def _lance_dir(store: Path) -> Path:
    return next(store.glob("*.lance"))


def test_tables_on_a_truncated_manifest_is_one_line(capsys, store):
    manifest = sorted((_lance_dir(store) / "_versions").glob("*.manifest"))[-1]
    manifest.write_bytes(manifest.read_bytes()[:40])
    _one_line(*_run(capsys, "tables", str(store))[::2])


def test_tables_without_a_versions_folder_is_one_line(capsys, store):
    shutil.rmtree(_lance_dir(store) / "_versions")
    code, _out, err = _run(capsys, "tables", str(store))
    _one_line(code, err)


@pytest.mark.parametrize("name", ["odd name.lance", "ünï çødé.lance", "x\ny.lance", ".lance"])
def test_tables_beside_an_odd_table_folder_is_one_line_or_works(capsys, store, name):
    (store / name).mkdir()
    (store / name / "junk").write_text("not lance")
    code, out, err = _run(capsys, "tables", str(store))
    if code != 0:
        _one_line(code, err)
    else:
        assert "memories" in out and err == ""


@pytest.mark.parametrize("meta", [b"[1", b'{"embedder": 5, "suggested_queries": "x"}',
                                  b'{"suggested_queries": [{"text": 1}, 7]}',
                                  b'{"embedder": {"name": ["x"]}}', b"[" * 5000])
def test_malformed_inspector_metadata_is_ignored(capsys, tmp_path, meta):
    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
                        pa.field("vector", pa.list_(pa.float32(), 4))],
                       metadata={b"inspector": meta})
    path = tmp_path / "meta"
    lancedb.connect(str(path)).create_table("memories", pa.table(
        {"id": ["a", "b"], "text": ["keys", "x"],
         "vector": vectors_column(np.eye(4, dtype=np.float32)[:2])}, schema=schema))
    code, out, err = _run(capsys, "query", str(path), "--vector", "[1,0,0,0]", "--json")
    assert code == 0, err
    assert json.loads(out)["store"]["rows"] == 2
    code, _out, err = _run(capsys, "query", str(path), "--text", "keys")
    assert code in (0, 2) and err.count("\n") <= 1 and "Traceback" not in err


def test_full_text_copy_of_a_table_with_a_backtick_column(capsys, tmp_path):
    path = tmp_path / "bt"
    lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": ["a", "b"], "text": ["alpha keys", "beta"], "we`ird": ["x", "y"],
        "vector": vectors_column(np.eye(4, dtype=np.float32)[:2])}))
    before = snapshot(path)
    code, out, err = _run(capsys, "query", str(path), "--mode", "fts", "--text", "keys",
                          "--json")
    assert code == 0, err
    assert [c["id"] for c in json.loads(out)["stages"][-1]["candidates"]] == ["a"]
    assert snapshot(path) == before


def test_vector_of_a_row_with_a_null_vector_is_one_line(capsys, tmp_path):
    path = tmp_path / "nulls"
    vecs = [[1.0, 0, 0, 0], None]
    lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": ["a", "b"], "text": ["x", "y"],
        "vector": pa.array(vecs, pa.list_(pa.float32(), 4))}), on_bad_vectors="null")
    code, _out, err = _run(capsys, "query", str(path), "--vector-of", "b")
    assert "NULL" in _one_line(code, err)
    code, out, err = _run(capsys, "query", str(path), "--vector-of", "a", "--json")
    assert code == 0, err


def test_decimal_importance_is_used_and_json_works(capsys, tmp_path):
    path = tmp_path / "dec"
    lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": ["a", "b"], "text": ["x", "y"],
        "vector": vectors_column(np.eye(4, dtype=np.float32)[:2]),
        "importance": pa.array([decimal.Decimal("0.20"), decimal.Decimal("1.00")],
                               pa.decimal128(4, 2))}))
    code, out, err = _run(capsys, "query", str(path), "--vector", "[1,0,0,0]", "--blend", "0.5",
                          "--min-score", "0", "--json")
    assert code == 0, err
    final = {c["id"]: c for c in json.loads(out)["stages"][-1]["candidates"]}
    assert final["a"]["inputs"]["importance"] == pytest.approx(0.2)
    assert final["b"]["inputs"]["importance"] == pytest.approx(1.0)


def test_an_unexpected_error_is_one_line_naming_the_command(capsys, monkeypatch):
    def boom(_a):
        raise KeyError("something internal")

    monkeypatch.setitem(cli_main.HANDLERS, "presets", boom)
    code, _out, err = _run(capsys, "presets")
    assert "`presets` failed unexpectedly (KeyError" in _one_line(code, err)
    code, _out, err = _run(capsys, "presets", "--debug")
    assert code == 2 and "Traceback" in err and err.strip().endswith("for the details.")


def test_warnings_and_native_stderr_do_not_add_lines(capfd, monkeypatch):
    def noisy(_a):
        warnings.warn("overflow encountered in cast", RuntimeWarning, stacklevel=1)
        os.write(2, b"thread '<unnamed>' panicked at src/lib.rs\nnote: run with RUST_BACKTRACE\n")
        raise BaseException("rust future panicked")

    monkeypatch.setitem(cli_main.HANDLERS, "presets", noisy)
    code = main(["presets"])
    err = capfd.readouterr().err
    assert "panicked" in _one_line(code, err) and "RUST_BACKTRACE" not in err


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:99999", "not a url", "http://[::1",
                                      "http://a b"])
def test_a_bad_storage_endpoint_is_one_line_not_a_rust_panic(capfd, endpoint):
    code = main(["tables", "s3://bucket/prefix", "--storage-option", f"aws_endpoint={endpoint}",
                 "--storage-option", "aws_access_key_id=AKID", "--storage-option",
                 "aws_secret_access_key=S3CRET-VALUE", "--storage-option", "region=us-east-1"])
    err = capfd.readouterr().err
    assert "storage endpoint" in _one_line(code, err) and "panicked" not in err
    assert "S3CRET-VALUE" not in err


def test_report_maps_a_pool_holding_infinite_vectors(capsys, tmp_path):
    """Issue 21: rows whose vectors hold inf or -inf (LanceDB stores them) made the map's PCA
    raise LinAlgError, and their infinite distances made every JSON writer fail. They are left
    off the map, non-finite numbers are null, and the receipt is written."""
    n = 40
    vecs = np.random.default_rng(0).normal(size=(n, 4)).astype(np.float32)
    vecs[3] = np.inf
    vecs[5, 1] = -np.inf
    vecs[6] = np.finfo(np.float32).max
    path = tmp_path / "s"
    lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": [f"m{i}" for i in range(n)], "text": [f"note {i}" for i in range(n)],
        "vector": vectors_column(vecs), "importance": [0.5] * n,
        "repo": ["a" if i % 2 else "b" for i in range(n)]}))
    before = snapshot(path)
    out = tmp_path / "out" / "r"
    out.parent.mkdir()
    code, _, err = _run(capsys, "report", str(path), "--vector", "[1, 0, 0, 0]", "--scope", "a",
                        "--scope-strategy", "column", "--scope-column", "repo", "--limit", "40",
                        "--out", str(out))
    assert code == 0, err
    doc = json.loads(out.with_suffix(".json").read_text())
    mapped = doc["evidence"]["map"]
    assert "m3" not in mapped["ids"] and "m5" not in mapped["ids"] and "m6" in mapped["ids"]
    assert all(np.isfinite(mapped["x"])) and all(np.isfinite(mapped["y"]))
    assert "<html" in out.with_suffix(".html").read_text()
    code, text, err = _run(capsys, "query", str(path), "--vector", "[1, 0, 0, 0]", "--limit",
                           "40", "--json")
    assert code == 0, err
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in strict JSON"))
    assert snapshot(path) == before


def test_report_on_an_empty_pool_says_so_and_writes_the_receipt(capsys, store, tmp_path):
    """Issue 21: `report` failed with "The candidate pool is empty, so there is nothing to map"
    unless --no-map; the receipt of an empty result is evidence too (no map: nothing fetched,
    and the diagnosis says fewer rows match)."""
    out = tmp_path / "out" / "r"
    code, text, err = _run(capsys, "report", str(store), "--vector", json.dumps([0.1] * 8),
                           "--scope", "nowhere", "--scope-strategy", "column", "--scope-column",
                           "repo", "--filter", "pushdown", "--out", str(out))
    assert code == 0, err
    assert ": 0 of 10 returned [few_matches]" in text
    doc = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert doc["evidence"]["map"] is None and doc["before"]["counters"]["returned"] == 0
    assert out.with_suffix(".html").exists()
