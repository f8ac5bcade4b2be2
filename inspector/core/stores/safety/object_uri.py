"""Object-store URIs (s3://, gs://, az://, abfs://, memory://) checked before LanceDB sees them.

LanceDB parses a store URI with Rust's `url` crate (a WHATWG URL parser) and opens whatever it
cannot parse as a *local path*, creating its folders: `s3://KEY:SE/CRET@bucket/p` became
`./s3:/KEY:SE/CRET@bucket/p` in the working directory. A URL's host ends at the first `/`, `?`
or `#`, so a secret holding one of them, a port that is not a number up to 65535, or a space
or other character a host cannot hold makes the URI unparsable. `check_object_uri` parses the
URI with rules at least as strict as that parser's and refuses, in one sentence with the
credentials masked, every URI it cannot vouch for; nothing reaches LanceDB before it.
"""

from __future__ import annotations

import re
from pathlib import Path

from inspector.core.errors import InspectorError
from inspector.core.stores.safety.redact import redact_uri

OBJECT_SCHEMES = ("s3", "gs", "az", "abfs", "memory")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)
# bucket, container and account names: letters, digits, '.', '-', '_' (every object store's
# naming rules are a subset of this, and none of these characters can end or break a host)
_HOST = re.compile(r"[A-Za-z0-9._-]{1,255}")
_PORT = re.compile(r"[0-9]{1,5}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HOST_END = "/?#"


# what LanceDB opens elsewhere than on this machine: object storage and LanceDB Cloud
REMOTE_SCHEMES = ("s3://", "gs://", "az://", "abfs://", "db://", "memory://")


def is_remote(uri: str) -> bool:
    """True for an object-store or LanceDB Cloud URI (the scheme in any case, as LanceDB's
    URL parser reads it)."""
    return uri[:9].lower().startswith(REMOTE_SCHEMES)


def local_path(uri: str) -> Path:
    """The local path a store URI that is not remote opens (a `file://` URI's path)."""
    return Path(uri[len("file://"):] if uri.startswith("file://") else uri).expanduser()


def scheme_of(uri: str) -> str | None:
    """The URI's scheme, lower-cased (None for a plain path)."""
    m = _SCHEME.match(uri)
    return m.group(1).lower() if m else None


def is_object_uri(uri: str) -> bool:
    return scheme_of(uri) in OBJECT_SCHEMES


def check_object_uri(uri: str) -> str:
    """The URI with its scheme lower-cased, or one sentence saying why it is not a URL
    LanceDB can open as object storage (credentials never shown)."""
    m = _SCHEME.match(uri)
    if m is None or m.group(1).lower() not in OBJECT_SCHEMES:
        raise InspectorError(f"{redact_uri(uri)} is not an object-store URI "
                             f"({', '.join(s + '://' for s in OBJECT_SCHEMES)}).")
    scheme, rest = m.group(1).lower(), m.group(2)
    shown = redact_uri(uri)
    if _CONTROL.search(uri):
        raise InspectorError(f"The store URI {shown} holds a control character (a tab, a "
                             "line break, ...); a URL cannot.")
    cut = min((i for i in (rest.find(c) for c in _HOST_END) if i >= 0), default=len(rest))
    authority = rest[:cut]
    if rest.rfind("@") > cut and (":" in authority or not _valid_authority(authority, scheme)):
        # An '@' after the host's end: credentials (KEY:SECRET) holding '/', '?' or '#' cut
        # the host short. Nothing before that '@' is shown.
        raise InspectorError(
            f"The store URI {shown} is not a valid URL: its credentials hold '/', '?' or '#', "
            "which end a URL's host. Percent-encode them (%2F, %3F, %23) or give the "
            "credentials as storage options or environment variables instead.")
    host, colon, port = authority.rpartition("@")[2].partition(":")
    if not host:
        if scheme == "memory" and not colon:
            return scheme + "://" + rest
        raise InspectorError(f"The store URI {shown} names no bucket: an object-store URI "
                             f"is {scheme}://BUCKET/PATH.")
    if not _HOST.fullmatch(host):
        raise InspectorError(f"The store URI {shown} names the bucket or container '{host}', "
                             "which holds characters a URL host cannot (such a name is "
                             "letters, digits, '.', '-' and '_').")
    if colon and not (_PORT.fullmatch(port) and int(port) <= 65535):
        raise InspectorError(f"The store URI {shown} has the port '{port}'; a port is a whole "
                             "number from 0 to 65535.")
    return scheme + "://" + rest


def _valid_authority(authority: str, scheme: str) -> bool:
    host, colon, port = authority.rpartition("@")[2].partition(":")
    if not host:
        return scheme == "memory" and not colon
    return bool(_HOST.fullmatch(host)) and (
        not colon or (bool(_PORT.fullmatch(port)) and int(port) <= 65535))
