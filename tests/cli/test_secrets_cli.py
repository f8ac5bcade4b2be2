"""A known secret injected into the store URI and the storage options appears in no output of
any command: stdout, stderr, report files and sweep output files (issue 12, case 3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from inspector.cli.main import main
from tests.storekit import moto_s3, vectors_column

pytest.importorskip("moto.server")
lancedb = pytest.importorskip("lancedb")

BUCKET = "secret-bucket"
URI_SECRET = "Uri5ecretZ"  # percent-encoded '/' keeps this URI usable by LanceDB
OPT_SECRET = "Opt5ecret/With?All#Chars@x:y"
RAW_SECRET = "Raw5ecret/q?h#a@c:d"  # raw special characters: LanceDB cannot use this URI


@pytest.fixture(scope="module")
def s3() -> Iterator[tuple[str, list[str]]]:
    with moto_s3(BUCKET) as (endpoint, _client):
        opts = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
                "aws_region": "us-east-1", "aws_endpoint": endpoint, "allow_http": "true"}
        db = lancedb.connect(f"s3://{BUCKET}/m", storage_options=opts)
        vecs = np.random.default_rng(1).normal(size=(40, 4)).astype(np.float32)
        db.create_table("memories", pa.table({
            "id": [f"m{i}" for i in range(40)], "text": [f"keys note {i}" for i in range(40)],
            "vector": vectors_column(vecs), "importance": [0.5] * 40,
            "repo": ["a" if i % 2 else "b" for i in range(40)]}))
        args = ["--storage-option", f"aws_endpoint={endpoint}",
                "--storage-option", "aws_access_key_id=testing",
                "--storage-option", f"aws_secret_access_key={OPT_SECRET}",
                "--storage-option", "region=us-east-1", "--storage-option", "allow_http=true"]
        yield f"s3://AKID:{URI_SECRET}%2Fend@{BUCKET}/m", args


def _commands(uri: str, opts: list[str], out: Path) -> list[list[str]]:
    q = ["--vector", "[1, 0, 0, 0]"]
    checks = out.parent / f"{out.name}-checks.json"  # an input: kept out of the scanned folder
    checks.write_text(json.dumps({"format": "inspector-checks", "version": 1, "store": uri,
                                  "checks": [{"text": "keys", "params": {"mode": "fts"},
                                              "assert": ["returned > 0"]}]}))
    return [["query", uri, *q, *opts], ["query", uri, *q, "--json", *opts],
            ["query", uri, *q, "--preset", "openclaw", "--json", *opts],  # a pipeline file
            ["tables", uri, *opts], ["tables", uri, "--json", *opts],
            ["versions", uri, *opts], ["versions", uri, "--json", *opts],
            ["diff-versions", uri, *q, "--from", "1", *opts],
            ["report", uri, *q, "--scope", "a", "--out", str(out / "r"), *opts],
            ["sweep", uri, *q, "--scope", "a", "--json", "--out", str(out / "s.json"), *opts],
            ["check", str(checks)]]


def _assert_clean(text: str) -> None:
    for secret in (URI_SECRET, OPT_SECRET, RAW_SECRET, "%2Fend"):
        assert secret not in text


def _env_options(opts: list[str]) -> str:
    pairs = dict(o.split("=", 1) for o in opts[1::2])
    return json.dumps(pairs)


def test_no_command_prints_or_writes_a_secret(s3, tmp_path, capsys, monkeypatch):
    uri, opts = s3
    monkeypatch.setenv("INSPECTOR_STORAGE_OPTIONS", _env_options(opts))  # `check` reads these
    for argv in _commands(uri, opts, tmp_path):
        code = main(argv)
        got = capsys.readouterr()
        assert code in (0, 1), (argv[0], got.err)
        _assert_clean(got.out + got.err)
    assert "s3://***@secret-bucket/m" in (tmp_path / "r.json").read_text()
    for f in tmp_path.iterdir():
        _assert_clean(f.read_text(errors="replace"))


def test_failing_commands_print_no_secret_either(s3, tmp_path, capsys, monkeypatch):
    _uri, opts = s3
    bad = f"s3://AKID:{RAW_SECRET}@{BUCKET}/nowhere"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # LanceDB once created ./s3:/AKID:Raw5ecret/... from this URI
    for argv in _commands(bad, opts, tmp_path):
        code = main(argv)
        got = capsys.readouterr()
        _assert_clean(got.out + got.err)
        if argv[0] != "check":
            assert code == 2 and got.err.count("\n") >= 1
        assert list(cwd.iterdir()) == [], argv[0]


def test_the_api_records_no_secret_in_its_answers(s3):
    """The API's answers hold the question, store URI included: redacted, for the fixed
    pipeline and for a pipeline file alike."""
    import inspector.api as api

    uri, opts = s3
    pairs = dict(o.split("=", 1) for o in opts[1::2])
    store = api.open(uri, storage_options=pairs)
    for preset in ("importance-blend", "openclaw"):
        got = json.dumps(store.query(vector=[1, 0, 0, 0], preset=preset).to_json())
        _assert_clean(got)
        assert "s3://***@secret-bucket/m" in got
