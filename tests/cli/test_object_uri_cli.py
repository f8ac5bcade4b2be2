"""Object-store URIs LanceDB cannot parse as a URL (issue 21): LanceDB opens them as local
paths and creates the folders, secret included. The inspector parses them first: one line,
exit 2, the secret masked, and nothing created anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.core.errors import InspectorError
from inspector.core.stores.safety.object_uri import check_object_uri
from tests.storekit import snapshot

KEY, SECRET = "AKIAEXAMPLEKEY", "wJalrXUtnFEMI"
# (uri, pieces that must never be printed)
BAD = [
    (f"s3://{KEY}:{SECRET}/XUtn/K7MD@bucket/store", (KEY, SECRET, "XUtn/K7MD")),
    (f"s3://{KEY}:{SECRET}#frag@bucket/store", (KEY, SECRET)),
    (f"s3://{KEY}:{SECRET}?q=1@bucket/store", (KEY, SECRET)),
    (f"S3://{KEY}:{SECRET}/x@bucket/store", (KEY, SECRET)),
    (f"gs://{KEY}:{SECRET}/x@bucket/store", (KEY, SECRET)),
    (f"az://{KEY}:{SECRET}/x@container/store", (KEY, SECRET)),
    (f"abfs://{KEY}:{SECRET}/x@acct.dfs.core.windows.net/store", (KEY, SECRET)),
    ("s3://bucket:99999/store", ()),
    ("s3://bucket:port/store", ()),
    ("s3://buck et/store", ()),
    ("az://a b/store", ()),
    ("gs://b|c/store", ()),
    ("s3://b\\c/store", ()),
    ("s3://", ()),
]
COMMANDS = [
    ["tables"], ["tables", "--json"], ["versions"],
    ["query", "--vector", "[1, 0, 0, 0]"],
    ["diff-versions", "--vector", "[1, 0, 0, 0]", "--from", "1"],
    ["sweep", "--vector", "[1, 0, 0, 0]", "--scope", "a"],
    ["report", "--vector", "[1, 0, 0, 0]", "--scope", "a", "--out", "r"],
]


@pytest.mark.parametrize(("uri", "secrets"), BAD, ids=range(len(BAD)))
def test_an_unparsable_object_store_uri_creates_nothing_and_says_so(
        uri: str, secrets: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = snapshot(tmp_path)
    for command in COMMANDS:
        code = main([command[0], uri, *command[1:]])
        _out, err = capsys.readouterr()
        assert snapshot(tmp_path) == before, (command, uri, err)
        assert code == 2, (command, err)
        assert err.startswith("inspector: ") and err.count("\n") == 1, (command, err)
        assert not any(s in err for s in secrets), (command, err)
        assert "holds no LanceDB tables" not in err, (command, err)


def test_the_installed_command_creates_nothing_in_its_working_directory(tmp_path: Path) -> None:
    """As a user runs it: a fresh process in a fresh working directory."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    uri = f"s3://{KEY}:{SECRET}/XUtn/K7MD@bucket/store"
    r = subprocess.run([sys.executable, "-m", "inspector", "tables", uri], cwd=cwd,
                       capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert r.returncode == 2, r.stderr
    assert list(cwd.iterdir()) == []
    assert r.stderr.count("\n") == 1 and "s3://***@bucket/store" in r.stderr
    assert KEY not in r.stderr and SECRET not in r.stderr and "XUtn" not in r.stderr


@pytest.mark.parametrize("uri", [
    "s3://bucket/store", "s3://bucket", "s3://my-bucket.v2/a/b c/d@e", "gs://b_1/x?y#z",
    "az://container/p", "s3://bucket:9000/p", "memory://", "S3://Bucket/p",
    f"s3://{KEY}:{SECRET}%2Fend@bucket/store", f"s3://{KEY}:{SECRET}@bucket/store",
    "abfs://container@acct.dfs.core.windows.net/x"])
def test_valid_object_store_uris_pass(uri: str) -> None:
    assert check_object_uri(uri).lower().startswith(uri.split("://")[0].lower() + "://")


@pytest.mark.parametrize(("uri", "_secrets"), BAD, ids=range(len(BAD)))
def test_every_uri_lancedb_would_take_for_a_path_is_refused(uri: str,
                                                            _secrets: tuple[str, ...]) -> None:
    with pytest.raises(InspectorError):
        check_object_uri(uri)
