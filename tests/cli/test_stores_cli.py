"""The command line on real store shapes: a SQLite docs file, table versions, object storage
on a loopback S3 server, and LanceDB Cloud URIs; stores stay byte-identical."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.cli import main
from tests.storekit import build_docs_db, moto_s3, snapshot, vectors_column


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _vec(dist: float) -> list[float]:
    return [1 - dist ** 0.5, 0.0, 0.0, 0.0]


@pytest.fixture
def versioned(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    rows = lambda ids, d: pa.table({  # noqa: E731
        "id": ids, "text": [f"memory {i}" for i in ids],
        "vector": vectors_column(np.array([_vec(x) for x in d], np.float32))})
    tbl = lancedb.connect(str(path)).create_table("memories", rows(["m0", "m1", "m2"],
                                                                   [0.1, 0.2, 0.3]))
    tbl.add(rows(["n0"], [0.01]))
    return path


def test_query_on_a_docs_sqlite_file_just_works(capsys, tmp_path):
    db = tmp_path / "docs.sqlite"
    build_docs_db(db, n=90)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    code, out, err = _run(capsys, "query", str(db), "--text", "rotate signing keys",
                          "--preset", "docs-pushdown", "--scope", "vault-agent", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["store"]["uri"] == str(db) and doc["store"]["table"] == "docs_chunks"
    stages = doc["params"]["stages"]
    assert stages["fetch"]["mode"] == "hybrid" and stages["scope_rule"]["pushdown"] is True
    assert doc["query"]["source"] == "text:hash-v1"
    final = doc["stages"][-1]["candidates"]
    assert final and all(c["scope"] == "vault-agent" for c in final)  # the repo column
    code, out, _ = _run(capsys, "tables", str(db), "--json")
    assert code == 0 and json.loads(out)[0]["roles"]["repo"] == "repo"
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.sqlite"]


def test_rrf_k_reaches_the_docs_presets_fusion(capsys, tmp_path):
    """--rrf-k is the docs engine's --k (the plugin's searchRrfK): 1 / (k + rank) per leg."""
    db = tmp_path / "docs.sqlite"
    build_docs_db(db, n=90)
    code, out, err = _run(capsys, "query", str(db), "--text", "rotate signing keys",
                          "--preset", "docs-before-fix", "--rrf-k", "30", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["params"]["stages"]["fetch"]["rrf_k"] == 30
    fetched = next(s for s in doc["stages"] if s["name"] == "fetch")["candidates"]
    assert fetched
    for c in fetched:
        ranks = [c["inputs"][k] for k in ("vec_rank", "fts_rank") if k in c["inputs"]]
        assert c["inputs"]["fused"] == pytest.approx(sum(1 / (30 + r) for r in ranks),
                                                     rel=1e-12)


def test_versions_as_of_and_diff_versions(capsys, versioned):
    before = snapshot(versioned)
    code, out, _ = _run(capsys, "versions", str(versioned), "--json")
    assert code == 0
    assert [(v["version"], v["rows"]) for v in json.loads(out)["versions"]] == [(1, 3), (2, 4)]
    code, out, _ = _run(capsys, "versions", str(versioned))
    assert code == 0 and "v1" in out and "v2" in out
    q = json.dumps(_vec(0.0))
    code, out, _ = _run(capsys, "query", str(versioned), "--vector", q, "--as-of", "1",
                        "--limit", "2", "--json")
    doc = json.loads(out)
    assert doc["store"]["version"] == 1 and [c["id"] for c in doc["stages"][3]["candidates"]] \
        == ["m0", "m1"]
    code, out, _ = _run(capsys, "diff-versions", str(versioned), "--from", "1", "--vector", q,
                        "--limit", "2", "--who-pushed-out", "m1", "--json")
    assert code == 0
    doc = json.loads(out)
    assert (doc["version_a"], doc["version_b"]) == (1, 2)
    assert doc["only_a"] == ["m1"] and doc["only_b"] == ["n0"]
    assert doc["push_out"]["first_without"] == 2 and doc["push_out"]["entered"] == ["n0"]
    code, out, _ = _run(capsys, "diff-versions", str(versioned), "--from", "1", "--to", "2",
                        "--vector", q, "--limit", "2", "--who-pushed-out", "m1")
    assert code == 0
    assert "only in v1 (pushed out or deleted): m1 (#2)" in out
    assert "m1: in the results at v1, gone at v2; came in then: n0" in out
    assert snapshot(versioned) == before


@pytest.mark.parametrize("args,message", [
    (["query", "{store}", "--vector", "[1,0,0,0]", "--as-of", "7"],
     "has no version 7; its versions are 1-2."),
    (["query", "{store}", "--vector", "[1,0,0,0]", "--storage-option", "oops"],
     "--storage-option takes KEY=VALUE, not '***'."),  # a lone value may be a pasted secret
    (["query", "db://team-memories", "--vector", "[1,0,0,0]"],
     "needs an API key in the LANCEDB_API_KEY environment variable."),
])
def test_store_option_errors_are_one_line_with_status_2(capsys, versioned, monkeypatch, args,
                                                        message):
    monkeypatch.delenv("LANCEDB_API_KEY", raising=False)
    code, out, err = _run(capsys, *[a.replace("{store}", str(versioned)) for a in args])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_presets_list_the_real_store_presets(capsys):
    code, out, _ = _run(capsys, "presets")
    assert code == 0 and "openclaw" in out and "engine-memory" in out


def test_every_preset_names_its_system_version_and_what_it_does_not_reproduce(capsys):
    """Issue 19: each preset's description says which system, which version it was read
    from, and its known limits; `inspector presets` prints all three for every one."""
    from inspector.core.engine.flow.shipped import shipped_names
    from inspector.core.engine.flow.spec import load_shipped

    code, out, _ = _run(capsys, "presets")
    assert code == 0
    blocks = {b.split(" ", 1)[0]: b for b in re.split(r"\n(?=\S)", out)}
    for name in shipped_names():
        spec = load_shipped(name)
        assert spec.system and spec.version, name
        block = blocks[name]
        assert f"read from: {spec.system} {spec.version}" in block, name
        # every system's reading names what it leaves out; LanceDB's own search leaves none
        assert spec.not_reproduced or name == "lancedb", name
        assert ("not reproduced: " + "; ".join(spec.not_reproduced) in block) \
            if spec.not_reproduced else "not reproduced" not in block, name


@pytest.fixture(scope="module")
def s3_store() -> Iterator[tuple[str, list[str]]]:
    pytest.importorskip("moto.server")
    with moto_s3("cli-bucket", key="t") as (endpoint, _):
        opts = {"aws_endpoint": endpoint, "aws_access_key_id": "t",
                "aws_secret_access_key": "t", "aws_region": "us-east-1"}
        db = lancedb.connect("s3://cli-bucket/mem",
                             storage_options={**opts, "allow_http": "true"})
        db.create_table("memories", pa.table({
            "id": ["a", "b", "c"], "text": ["x", "y", "z"],
            "vector": vectors_column(np.eye(3, dtype=np.float32))}))
        yield "s3://cli-bucket/mem", [f"--storage-option={k}={v}" for k, v in opts.items()]


def test_query_an_s3_store_with_storage_options(capsys, s3_store):
    uri, opts = s3_store
    code, out, err = _run(capsys, "query", uri, *opts, "--vector", "[0, 1, 0]", "--limit", "1",
                          "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["store"]["uri"] == uri and doc["stages"][3]["candidates"][0]["id"] == "b"
    code, out, _ = _run(capsys, "tables", uri, *opts, "--json")
    assert code == 0 and json.loads(out)[0]["name"] == "memories"
    missing = uri.replace("s3://cli-bucket/", "s3://missing-bucket/")
    code, _, err = _run(capsys, "query", missing, *opts, "--vector", "[0, 1, 0]")
    assert code == 2 and "The bucket 'missing-bucket' does not exist" in err
