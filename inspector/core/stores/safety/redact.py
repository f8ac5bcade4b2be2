"""The one place secrets are removed from anything the inspector shows, saves or prints.

A store URI may carry credentials (`s3://KEY:SECRET@bucket/path`, `?sas=...`), and storage
options may hold keys and tokens. Every output (JSON, text, reports, error lines, settings)
goes through `redact_uri`, `redact_options` or `redact_text`. A secret may contain any
character, `/ ? # @ :` included, so the user-info part of a URI is everything between `://`
and the LAST `@`: a path holding an `@` is shown redacted too, which is the safe mistake.
Every secret seen is also remembered for this process, so `redact_text` can scrub it from a
message even where it appears without its URI (an error echoed by a library).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

MASK = "***"
_SECRET_KEY = re.compile(r"key|secret|token|passw|credential|session|signature|sas|auth|cookie|"
                         r"sig$|^sv$|^se$|^sp$", re.IGNORECASE)
# a URI's start as typed, malformed ones too (a leading space, `s3:/`, `s3:`, `s3//`,
# `s3:\\`): whatever follows up to its last `@` is taken for credentials
_SCHEME = re.compile(r"^(\s*[A-Za-z][A-Za-z0-9+.-]*(?::[/\\]*|//))(.*)$", re.DOTALL)
# a URI inside free text (`s3://` or a path-normalised `s3:/`): up to a space or quote. The
# scheme's length is bounded, so a long run of letters costs linear time, not quadratic.
_URI_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}:/+[^\s'\"<>]*")
# a KEY=VALUE pair typed without its '=' (`key:SECRET`): the key, then everything else
_PAIR_KEY = re.compile(r"\s*[A-Za-z0-9_.-]*")
_MIN_SECRET = 6  # shorter values are too common to scrub from free text (true, 1234)
_KNOWN: set[str] = set()


def looks_secret(key: str) -> bool:
    """True for option or parameter names that may carry a credential."""
    return bool(_SECRET_KEY.search(key))


def remember(secret: str | None) -> None:
    """Scrub this value from every later `redact_text` in this process."""
    if secret and len(secret) >= _MIN_SECRET:
        _KNOWN.add(secret)


def _split_userinfo(rest: str) -> tuple[str | None, str]:
    """(userinfo or None, the rest after it) of a URI's part after `scheme://`."""
    at = rest.rfind("@")
    if at < 0:
        return None, rest
    return rest[:at], rest[at + 1:]


def _redact_query(rest: str) -> str:
    """Mask the values of secret-looking query parameters (`?sig=...&sas=...`)."""
    path, sep, query = rest.partition("?")
    if not sep:
        return rest
    parts = []
    for item in query.split("&"):
        key, eq, value = item.partition("=")
        if eq and looks_secret(key):
            remember(value)
            parts.append(f"{key}={MASK}")
        else:
            parts.append(item)
    return f"{path}?{'&'.join(parts)}"


def redact_uri(uri: str) -> str:
    """The URI without credentials: user-info replaced by `***`, secret query values masked.
    Plain paths are returned unchanged."""
    return _rewrite(uri, f"{MASK}@")


def without_credentials(uri: str) -> str:
    """The URI with its user-info removed entirely (what settings may keep)."""
    return _rewrite(uri, "")


def _rewrite(uri: str, userinfo: str) -> str:
    """The URI with its user-info replaced by `userinfo` (every part of the old one
    remembered, so it is scrubbed from free text too) and secret query values masked."""
    m = _SCHEME.match(uri)
    if m is None:
        return uri
    scheme, rest = m.groups()
    info, after = _split_userinfo(rest)
    if info is not None:
        remember(info)
        for piece in re.split(r"[:]", info, maxsplit=1):
            remember(piece)
        rest = f"{userinfo}{after}"
    return scheme + _redact_query(rest)


def masked_pair(pair: str) -> str:
    """A storage option as typed, fit to echo in an error: its key, then `***` (a pair
    typed without '=', `key:SECRET`, may still hold a secret after its key)."""
    head = _PAIR_KEY.match(pair).group(0)  # type: ignore[union-attr]  (it matches "" too)
    rest = pair[len(head):]
    return f"{head.strip()}{rest[:1]}{MASK}" if rest else MASK


def remember_option_text(text: str) -> None:
    """Learn the secrets of storage options as typed (`--storage-option`, the environment's
    INSPECTOR_STORAGE_OPTIONS), well-formed or not: a secret-looking key's value, and
    whatever follows the key of a pair that lacks its '='."""
    for pair in re.split(r"[;,\n]", text):
        key, eq, value = pair.partition("=")
        if eq:
            if looks_secret(key):
                remember(value.strip().strip("\"'"))
            continue
        rest = pair[len(_PAIR_KEY.match(pair).group(0)):]  # type: ignore[union-attr]
        remember(rest[1:].strip().strip("\"'{}") if rest else pair.strip())


def redact_options(options: Mapping[str, str] | None) -> dict[str, str]:
    """Storage options fit to show: secret-looking values masked, URIs redacted."""
    out: dict[str, str] = {}
    for key, value in (options or {}).items():
        if looks_secret(key):
            remember(str(value))
            out[key] = MASK
        else:
            out[key] = redact_uri(str(value))
    return out


def remember_options(options: Mapping[str, str] | None) -> None:
    """Learn the secrets of these options (and URIs among them) without showing anything."""
    redact_options(options)


def remember_environment(environ: Mapping[str, str] | None = None) -> None:
    """Learn secrets the process was given in its environment (AWS_SECRET_ACCESS_KEY, ...)."""
    for key, value in (environ if environ is not None else os.environ).items():
        if looks_secret(key) and not key.upper().endswith(("_FILE", "_PATH", "_DIR")):
            remember(value)


def redact_text(text: str, extra: Iterable[str] = ()) -> str:
    """A message fit to print: URIs inside it redacted, every known secret masked."""
    for s in extra:
        remember(s)
    out = _URI_IN_TEXT.sub(lambda m: redact_uri(m.group(0)), text)
    for secret in sorted(_KNOWN, key=len, reverse=True):
        if secret in out:
            out = out.replace(secret, MASK)
    return out
