"""Stores on object storage: a real LanceDB dataset written to an S3-protocol server (moto) that
this test starts on 127.0.0.1, opened read-only with storage options; clear errors otherwise."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.opening import describe_tables, open_store
from inspector.core.stores.remote import cloud_target, env_options, explain, storage_options
from inspector.core.stores.versions import list_versions
from tests.askkit import final_ids
from tests.storekit import moto_s3, vectors_column

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")
lancedb = pytest.importorskip("lancedb")

BUCKET = "agent-memory"
KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
        "aws_region": "us-east-1"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """A moto S3 server on loopback with one bucket holding a two-version LanceDB table."""
    with moto_s3(BUCKET) as (endpoint, client):
        opts = {**KEYS, "aws_endpoint": endpoint, "allow_http": "true"}
        db = lancedb.connect(f"s3://{BUCKET}/stores/main", storage_options=opts)
        rng = np.random.default_rng(0)
        vecs = rng.normal(size=(60, 8)).astype(np.float32)
        tbl = db.create_table("memories", pa.table({
            "id": [f"m{i:02d}" for i in range(60)],
            "text": [f"remote memory {i} about {'keys' if i % 2 else 'themes'}"
                     for i in range(60)],
            "vector": vectors_column(vecs), "importance": [0.5] * 60,
            "agentId": ["main" if i % 3 else "helper" for i in range(60)]}))
        tbl.add(pa.table({"id": ["late"], "text": ["a late write"],
                          "vector": vectors_column(vecs[:1]), "importance": [0.9],
                          "agentId": ["main"]}))
        port = endpoint.rsplit(":", 1)[1]
        yield {"endpoint": endpoint, "port": port, "client": client, "vectors": vecs}


def _objects(s3: dict) -> dict[str, str]:
    got = s3["client"].list_objects_v2(Bucket=BUCKET).get("Contents", [])
    return {o["Key"]: o["ETag"] for o in got}


def _opts(s3: dict) -> dict[str, str]:
    return {**KEYS, "aws_endpoint": s3["endpoint"]}  # allow_http is implied for loopback


def test_s3_store_round_trip_matches_the_local_formula_and_writes_nothing(s3):
    before = _objects(s3)
    store = open_store(f"s3://{BUCKET}/stores/main", storage_options=_opts(s3))
    assert (store.table_name, store.rows, store.version, store.dim) == ("memories", 61, 2, 8)
    assert store.table_names() == ["memories"] and not store.has_newer()
    q = s3["vectors"][7] + 0.01
    got = final_ids(store, vector=q, limit=5, cap=0)
    v = np.vstack([s3["vectors"], s3["vectors"][:1]]).astype(np.float64)
    ids = [f"m{i:02d}" for i in range(60)] + ["late"]
    d = ((v - q.astype(np.float64)) ** 2).sum(axis=1)
    assert got == [ids[i] for i in np.argsort(d, kind="stable")[:5]]
    old = open_store(f"s3://{BUCKET}/stores/main", storage_options=_opts(s3), version=1)
    assert old.rows == 60 and [v.version for v in list_versions(old)] == [1, 2]
    assert [t.name for t in describe_tables(f"s3://{BUCKET}/stores/main", _opts(s3))] == \
        ["memories"]
    assert _objects(s3) == before


def test_credentials_and_endpoint_can_come_from_the_environment(s3, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("INSPECTOR_STORAGE_OPTIONS", f"aws_endpoint={s3['endpoint']}")
    assert open_store(f"s3://{BUCKET}/stores/main").rows == 61
    assert env_options({"INSPECTOR_STORAGE_OPTIONS": '{"Region": "eu-west-1"}'}) == \
        {"region": "eu-west-1"}
    assert storage_options({"aws_endpoint": "http://10.0.0.5:9000"}, {}) == \
        {"aws_endpoint": "http://10.0.0.5:9000"}  # plain http elsewhere stays explicit


@pytest.mark.parametrize("uri,message", [
    ("s3://no-such-bucket/x", "The bucket 'no-such-bucket' does not exist at http://127"),
    (f"s3://{BUCKET}/empty", f"s3://{BUCKET}/empty holds no LanceDB tables."),
])
def test_missing_bucket_and_empty_prefix_are_one_sentence(s3, uri, message):
    with pytest.raises(InspectorError) as err:
        open_store(uri, storage_options=_opts(s3))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_table_names_the_tables_that_exist(s3):
    with pytest.raises(InspectorError, match=r"Table 'nope' not found in s3://.*tables: memories"):
        open_store(f"s3://{BUCKET}/stores/main", table="nope", storage_options=_opts(s3))


def test_unreachable_endpoint_is_one_sentence_within_seconds():
    port = _free_port()  # nothing listens here
    opts = {**KEYS, "aws_endpoint": f"http://127.0.0.1:{port}", "client_max_retries": "0"}
    with pytest.raises(InspectorError, match=r"^Cannot reach the object store at http://127"):
        open_store(f"s3://{BUCKET}/x", storage_options=opts)


def test_plain_http_to_a_remote_host_needs_allow_http():
    msg = explain("s3://b/x", ValueError("... source: BadScheme } ..."),
                  {"aws_endpoint": "http://minio.lan:9000"})
    assert msg == ("The endpoint http://minio.lan:9000 uses plain http; add --storage-option "
                   "allow_http=true to allow it.")


def test_lancedb_cloud_without_a_key_is_one_clear_sentence(monkeypatch):
    monkeypatch.delenv("LANCEDB_API_KEY", raising=False)
    with pytest.raises(InspectorError) as err:
        open_store("db://my-memories")
    assert str(err.value) == ("Opening db://my-memories (LanceDB Cloud) needs an API key in the "
                              "LANCEDB_API_KEY environment variable.")


def test_lancedb_cloud_options_are_passed_through(monkeypatch):
    monkeypatch.setenv("LANCEDB_API_KEY", "sk-test")
    t = cloud_target("db://mem", {"region": "eu-central-1", "host_override": "http://127.0.0.1:9",
                                  "timeout": "5s"})
    assert t.connect_kwargs() == {"api_key": "sk-test", "region": "eu-central-1",
                                  "host_override": "http://127.0.0.1:9",
                                  "storage_options": {"timeout": "5s"}}
    assert "sk-test" not in repr(t)
    monkeypatch.setenv("LANCEDB_REGION", "ap-south-1")
    assert cloud_target("db://mem", {}).region == "ap-south-1"
