"""How a store is opened beyond its URI (storage options, a version, a docs model, column
roles), and what of that may be remembered for Open Recent.

Credentials never reach the settings: option keys that look like keys, secrets or tokens are
used for the session only, and user:password parts of URLs are cut out before saving.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from inspector.core.stores.safety.redact import looks_secret, without_credentials

__all__ = ["OpenOptions", "looks_secret", "without_userinfo"]


def without_userinfo(text: str) -> str:
    """A URL without any user-info part (whatever characters the secret holds), and with
    secret-looking query values masked; other text unchanged."""
    return without_credentials(text)


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
