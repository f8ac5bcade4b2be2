"""Secrets are masked on every message path, malformed input included: a store URI typed with
one slash (`s3:/`), none (`s3:`), no colon (`s3//`), backslashes or a leading space, a
`file://` URI with credentials, a storage option typed with ':' for '=' (in the arguments
and in INSPECTOR_STORAGE_OPTIONS). Each case uses a secret of its own (the process remembers
the secrets it saw), and nothing is created where the command runs."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import inspector
from inspector.cli.main import main
from inspector.core.errors import InspectorError

_n = itertools.count()


def _secret() -> str:
    return f"Zq{next(_n):03d}SecretVal"


URIS = ["s3:/AKIDKEY:{s}@bucket/p", " s3://AKIDKEY:{s}@bucket/p", "s3:AKIDKEY:{s}@bucket/p",
        "s3//AKIDKEY:{s}@bucket/p", "S3:\\\\AKIDKEY:{s}@bucket", "\ts3://AKIDKEY:{s}@b/p",
        "file://AKIDKEY:{s}@/nowhere/x", "  file://AKIDKEY:{s}@{tmp}/x", "AKIDKEY:{s}@bucket/p"]
COMMANDS = [["query", "{u}", "--vector-of", "x"], ["tables", "{u}"], ["versions", "{u}"],
            ["query", "{u}", "--preset", "openclaw", "--vector-of", "x", "--json"],
            ["report", "{u}", "--vector-of", "x", "--out", "{tmp}/r"],
            ["sweep", "{u}", "--vector-of", "x", "--out", "{tmp}/s.json"]]


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out + got.err


@pytest.mark.parametrize("uri", URIS)
def test_a_malformed_store_uri_never_shows_its_secret(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        uri: str) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    for command in COMMANDS:
        secret = _secret()
        argv = [a.format(u=uri.format(s=secret, tmp=tmp_path), tmp=tmp_path) for a in command]
        code, said = _run(capsys, argv)
        assert code == 2 and said.count("\n") == 1, (argv, said)
        assert secret not in said, (argv, said)
    assert list(cwd.iterdir()) == [] and not (tmp_path / "r.json").exists()


def test_the_api_says_a_malformed_uri_without_its_secret() -> None:
    for uri in URIS:
        secret = _secret()
        with pytest.raises(InspectorError) as err:
            inspector.open(uri.format(s=secret, tmp="/nowhere"))
        assert secret not in str(err.value), str(err.value)


@pytest.mark.parametrize("typed", ["aws_secret_access_key:{s}", "aws_secret_access_key {s}",
                                   "{s}", " aws_secret_access_key:{s}",
                                   "aws_secret_access_key={s}"])
def test_a_storage_option_typed_wrong_never_shows_its_value(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, small_store: Path,
        typed: str) -> None:
    secret = _secret()
    code, said = _run(capsys, ["tables", "s3://bucket/p", "--storage-option",
                               typed.format(s=secret), "--storage-option",
                               "aws_endpoint=http://127.0.0.1:9"])
    assert code == 2 and secret not in said, said
    secret = _secret()
    code, said = _run(capsys, ["tables", str(small_store),
                               f"--storage-option={typed.format(s=secret)}"])
    assert secret not in said, said
    for env in ("aws_endpoint=http://127.0.0.1:9;{t}", "{t};aws_endpoint=http://127.0.0.1:9",
                "aws_endpoint=http://127.0.0.1:9,{t}"):  # never a real endpoint
        secret = _secret()
        monkeypatch.setenv("INSPECTOR_STORAGE_OPTIONS", env.format(t=typed.format(s=secret)))
        code, said = _run(capsys, ["tables", "s3://bucket/p"])
        assert code == 2 and said.count("\n") == 1 and secret not in said, (env, said)
