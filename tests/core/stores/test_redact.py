"""One redaction function for URIs, options and messages: secrets with any character vanish."""

from __future__ import annotations

import pytest

from inspector.core.stores.options import OpenOptions, without_userinfo
from inspector.core.stores.safety.redact import MASK, redact_options, redact_text, redact_uri

SECRETS = ["plain", "with/slash", "with?query", "with#hash", "with@at", "with:colon",
           "a/b?c#d@e:f", "trailing@"]


@pytest.mark.parametrize("secret", SECRETS)
def test_a_secret_in_the_userinfo_never_survives_whatever_it_holds(secret):
    uri = f"s3://AKIDKEY:{secret}@bucket/path/to/store"
    shown = redact_uri(uri)
    assert secret not in shown and "AKIDKEY" not in shown
    assert shown == f"s3://{MASK}@bucket/path/to/store"
    assert without_userinfo(uri) == "s3://bucket/path/to/store"


def test_plain_paths_and_uris_without_credentials_are_unchanged():
    for uri in ("/tmp/store", "relative/store", "s3://bucket/p", "db://mydb", "C:/x"):
        assert redact_uri(uri) == uri


def test_secret_looking_query_values_are_masked():
    shown = redact_uri("az://container/p?sv=2024&sig=ABCSIGNATURE&prefix=x")
    assert "ABCSIGNATURE" not in shown and "prefix=x" in shown


def test_options_show_no_secret_values_and_remembered_options_keep_none():
    opts = {"aws_access_key_id": "AKID", "aws_secret_access_key": "SEC/RET",
            "aws_endpoint": "http://user:pw0rd@127.0.0.1:9000", "region": "us-east-1"}
    shown = redact_options(opts)
    assert shown["aws_secret_access_key"] == MASK and shown["aws_access_key_id"] == MASK
    assert "pw0rd" not in shown["aws_endpoint"] and shown["region"] == "us-east-1"
    kept = OpenOptions.make(opts).remembered()["storage"]
    assert "pw0rd" not in str(kept) and "SEC/RET" not in str(kept) and "AKID" not in str(kept)


def test_messages_lose_uris_credentials_and_every_secret_seen_before():
    redact_options({"aws_secret_access_key": "KNOWN-S3CRET-42"})
    text = ("Cannot open s3://K:x/y?z#w@b/p: the library echoed KNOWN-S3CRET-42 and "
            "'s3://U:p@ss@b2/q'")
    out = redact_text(text)
    assert "KNOWN-S3CRET-42" not in out and "x/y?z#w" not in out and "p@ss" not in out
    assert "s3://***@b/p" in out
