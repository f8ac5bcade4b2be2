"""Stores beyond one machine: object storage (s3://, gs://, az://) and LanceDB Cloud (db://).

Storage options come from the environment (`INSPECTOR_STORAGE_OPTIONS`) and the command line,
the command line winning. Credentials are never required on the command line: LanceDB reads
the usual `AWS_*` / `GOOGLE_*` / `AZURE_*` variables itself, and a db:// connection takes its
API key from `LANCEDB_API_KEY` only. Connection failures become one sentence naming the cause.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from inspector.core.errors import InspectorError
from inspector.core.stores.safety import outputs
from inspector.core.stores.safety.object_uri import (  # noqa: F401  (callers import them here)
    check_object_uri,
    is_remote,
    local_path,
)
from inspector.core.stores.safety.redact import (
    masked_pair,
    redact_options,
    redact_text,
    redact_uri,
)

ENV_OPTIONS = "INSPECTOR_STORAGE_OPTIONS"
CLOUD_SCHEME = "db://"
# keys of a db:// connection that are connect() arguments, not storage options
CLOUD_KEYS = ("region", "host_override")
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_ENDPOINT_KEYS = ("aws_endpoint", "endpoint", "aws_endpoint_url", "endpoint_url")


def parse_option_pairs(pairs: Iterable[str], what: str = "--storage-option",
                       secret: bool = True) -> dict[str, str]:
    """KEY=VALUE strings to a dict; keys are lower-cased as LanceDB expects them. A pair
    without its '=' is refused with its value masked (`key:SECRET` shows as `key:***`)
    unless the pairs hold no secrets (`secret=False`: --column)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            shown = masked_pair(pair) if secret else pair
            raise InspectorError(f"{what} takes KEY=VALUE, not {shown!r}.")
        out[key.strip().lower()] = value
    return out


def env_options(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Options from INSPECTOR_STORAGE_OPTIONS: a JSON object, or `k=v` pairs split by ';' or ','."""
    raw = (environ if environ is not None else os.environ).get(ENV_OPTIONS, "").strip()
    if not raw:
        return {}
    if raw.startswith("{"):
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise InspectorError(f"{ENV_OPTIONS} is not a valid JSON object.") from exc
        if not isinstance(data, dict):
            raise InspectorError(f"{ENV_OPTIONS} must be a JSON object of strings.")
        return {str(k).lower(): str(v) for k, v in data.items()}
    return parse_option_pairs([p for p in re.split(r"[;,]", raw) if p.strip()], ENV_OPTIONS)


def storage_options(given: Mapping[str, str] | None = None,
                    environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment options overlaid with the given ones; plain-http loopback endpoints allowed."""
    opts = {**env_options(environ), **{k.lower(): v for k, v in (given or {}).items()}}
    endpoint = next((opts[k] for k in _ENDPOINT_KEYS if k in opts), "")
    host = check_endpoint(endpoint) if endpoint else ""
    if endpoint.startswith("http://") and "allow_http" not in opts and host in _LOOPBACK:
        opts["allow_http"] = "true"
    return opts


def check_endpoint(endpoint: str) -> str:
    """The endpoint's host, or one sentence when it is not an http(s) URL with a host and a
    valid port (LanceDB panics on such endpoints instead of reporting them)."""
    shown = redact_uri(endpoint)
    try:
        parts = urlsplit(endpoint)
        port = parts.port
        host = parts.hostname or ""
    except ValueError:
        host, port, parts = "", None, None
    if parts is None or parts.scheme not in ("http", "https") or not host \
            or any(c.isspace() or c == "%" for c in endpoint) or (port is not None and port < 1):
        raise InspectorError(f"The storage endpoint {shown!r} is not a URL like "
                             "http://HOST:PORT or https://HOST.")
    return host


@dataclass(frozen=True)
class CloudTarget:
    """What lancedb.connect needs for a db:// URI, with the key kept out of any repr."""

    uri: str
    api_key: str = field(repr=False)
    region: str
    host_override: str | None
    storage_options: dict[str, str]

    def connect_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"api_key": self.api_key, "region": self.region}
        if self.host_override:
            kw["host_override"] = self.host_override
        if self.storage_options:
            kw["storage_options"] = self.storage_options
        return kw


def cloud_target(uri: str, options: Mapping[str, str] | None = None,
                 environ: Mapping[str, str] | None = None) -> CloudTarget:
    """A db:// connection: key from LANCEDB_API_KEY, region and host from options or env."""
    env = environ if environ is not None else os.environ
    opts = dict(options or {})
    key = env.get("LANCEDB_API_KEY", "").strip()
    if not key:
        raise InspectorError(f"Opening {uri} (LanceDB Cloud) needs an API key in the "
                             "LANCEDB_API_KEY environment variable.")
    name = uri[len(CLOUD_SCHEME):].strip("/")
    if not name:
        raise InspectorError(f"{uri} names no database; use db://DATABASE.")
    region = opts.pop("region", None) or env.get("LANCEDB_REGION") or "us-east-1"
    host = opts.pop("host_override", None) or env.get("LANCEDB_HOST_OVERRIDE") or None
    return CloudTarget(uri=uri, api_key=key, region=region, host_override=host,
                       storage_options=opts)


def _endpoint(opts: Mapping[str, str] | None) -> str | None:
    for k in _ENDPOINT_KEYS:
        if opts and opts.get(k):
            return opts[k]
    return None


def _bucket(uri: str) -> str:
    return urlsplit(uri).netloc


def explain(uri: str, exc: BaseException, opts: Mapping[str, str] | None = None) -> str:
    """One sentence for a failure to reach or read a remote store, without credentials."""
    redact_options(opts)  # learn the options' secrets so the library's text is scrubbed too
    uri = redact_uri(uri)
    text = redact_text(str(exc))
    where = _endpoint(redact_options(opts))
    at = f" at {where}" if where else ""
    if uri.startswith(CLOUD_SCHEME):
        if "api_key" in text:
            return (f"Opening {uri} (LanceDB Cloud) needs an API key in the LANCEDB_API_KEY "
                    "environment variable.")
        if re.search(r"401|403|[Uu]nauthori[sz]ed|[Ff]orbidden", text):
            return f"LanceDB Cloud refused the API key for {uri} (check LANCEDB_API_KEY)."
        return f"Cannot reach LanceDB Cloud for {uri}: {_first_line(text)}."
    if "NoSuchBucket" in text:
        return f"The bucket '{_bucket(uri)}' does not exist{at}."
    if "BadScheme" in text:
        ep = f"The endpoint {where}" if where else "The endpoint"
        return f"{ep} uses plain http; add --storage-option allow_http=true to allow it."
    if re.search(r"InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied|status: 403", text):
        return (f"Access to {uri} was denied{at}; check the credentials "
                "(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or storage options).")
    if "Failed to get AWS credentials" in text or "FailedToLoadToken" in text:
        return (f"No credentials were found for {uri}; set AWS_ACCESS_KEY_ID / "
                "AWS_SECRET_ACCESS_KEY or give them as storage options.")
    if "panicked" in text:
        return (f"LanceDB failed while opening {uri}{at} (an internal panic); check the "
                "storage options, the endpoint in particular.")
    if re.search(r"kind: Connect|Connection refused|dns error|timed out|Timeout", text):
        return f"Cannot reach the object store{at or ' for ' + uri} (connection failed)."
    if "region" in text.lower() and ("missing" in text.lower() or "detect" in text.lower()):
        return f"Opening {uri} needs a region: add --storage-option region=REGION."
    return f"Cannot open {uri}: {_first_line(text)}."


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    return line[:200].rstrip(".")


# ---- where a store lives: checked before anything connects, so nothing is ever created ----

_with_environment = storage_options  # connect's parameter of that name hides the function


def readable_folder(uri: str) -> Path:
    """A local store's folder, or why it cannot be one (checked before anything connects)."""
    path = local_path(uri)
    shown = redact_uri(uri) if "@" in uri else path  # a malformed URI's credentials hidden
    if not path.exists():
        raise InspectorError(f"No store at {shown}: the folder does not exist.")
    if not path.is_dir():
        raise InspectorError(f"{shown} is a file, not a LanceDB store folder.")
    if not os.access(path, os.R_OK | os.X_OK):
        raise InspectorError(f"{shown} cannot be read (permission denied).")
    return path


def first_line(exc: BaseException) -> str:
    """The first line of an error, shortened and without credentials."""
    text = redact_text(str(exc)).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200].rstrip(".")


def connect(uri: str, storage_options: dict[str, str] | None = None) -> Any:
    """Connect without ever creating anything: local paths must exist and be folders.

    Remote URIs get the environment's storage options under the given ones; db:// URIs are
    LanceDB Cloud (API key from LANCEDB_API_KEY, region and host_override from the options).
    """
    import lancedb

    if is_remote(uri):
        # LanceDB opens a URI it cannot parse as a URL as a local path and creates it
        uri = CLOUD_SCHEME + uri[len(CLOUD_SCHEME):] \
            if uri[:5].lower() == CLOUD_SCHEME else check_object_uri(uri)
    if uri.startswith(CLOUD_SCHEME):
        target = cloud_target(uri, storage_options)
        try:
            return lancedb.connect(uri, **target.connect_kwargs())
        except Exception as exc:  # noqa: BLE001
            raise InspectorError(explain(uri, exc, storage_options)) from exc
    if is_remote(uri):
        opts = _with_environment(storage_options)
        try:
            return lancedb.connect(uri, storage_options=opts or None)
        except Exception as exc:  # noqa: BLE001
            raise InspectorError(explain(uri, exc, opts)) from exc
    folder = readable_folder(uri)
    outputs.protect(str(folder), redact_uri(uri))  # no later write goes inside it
    uri = str(folder)
    try:
        return lancedb.connect(uri, storage_options=storage_options)
    except Exception as exc:  # noqa: BLE001 - connection errors are user-facing
        raise InspectorError(f"Cannot open {uri}: {first_line(exc)}.") from exc
