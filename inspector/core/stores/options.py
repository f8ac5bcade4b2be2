"""How a store is opened beyond its URI (storage options, a version, a docs model, column
roles), and what of that may be remembered for Open Recent.

Credentials never reach the settings: option keys that look like keys, secrets or tokens are
used for the session only, and user:password parts of URLs are cut out before saving.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_SECRET_KEY = re.compile(r"key|secret|token|passw|credential|session|signature|sas|auth|cookie",
                         re.IGNORECASE)


def looks_secret(key: str) -> bool:
    """True for option names that may carry a credential (access_key_id included)."""
    return bool(_SECRET_KEY.search(key))


def without_userinfo(text: str) -> str:
    """A URL without any user:password@ part; other text unchanged."""
    parts = urlsplit(text) if "://" in text else None
    if parts is None or "@" not in parts.netloc:
        return text
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


@dataclass(frozen=True)
class OpenOptions:
    """Everything open_store takes besides the URI and table, hashable and comparable."""

    storage: tuple[tuple[str, str], ...] = ()
    version: int | None = None
    docs_model: str | None = None
    roles: tuple[tuple[str, str], ...] = ()

    @classmethod
    def make(cls, storage: dict[str, str] | None = None, version: int | None = None,
             docs_model: str | None = None, roles: dict[str, str] | None = None) -> OpenOptions:
        return cls(storage=tuple(sorted((storage or {}).items())), version=version,
                   docs_model=docs_model or None, roles=tuple(sorted((roles or {}).items())))

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for store.open_store."""
        return {"storage_options": dict(self.storage) or None, "version": self.version,
                "embedding_model": self.docs_model, "roles": dict(self.roles) or None}

    def at(self, version: int | None) -> OpenOptions:
        """The same options pinned at another version (None: the latest)."""
        return replace(self, version=version)

    def remembered(self) -> dict[str, Any]:
        """What Open Recent may keep: no version, no secret-looking options, no userinfo."""
        storage = {k: without_userinfo(v) for k, v in self.storage if not looks_secret(k)}
        out: dict[str, Any] = {"storage": storage}
        if self.docs_model:
            out["docs_model"] = self.docs_model
        return out
