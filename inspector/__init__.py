"""Memory-store inspector: see an agent memory store's retrieval pipeline stage by stage."""

__version__ = "0.1.0"

import os as _os

# LanceDB's native logger warns on routine events (e.g. "No existing dataset ... will be created"
# when the demo store is written); keep stderr for messages a user must act on.
_os.environ.setdefault("LANCEDB_LOG", "error")

# LanceDB's REST namespace client is imported when first used, not with lancedb (local stores
# never use it; its package __init__ is about half of `import lancedb`): see _lazy_client.
from inspector._lazy_client import defer as _defer  # noqa: E402

_defer()

# On Python 3.11 lancedb imports with the marking `@override` it uses on 3.12+, not the
# `overrides` package's, which disassembles its modules once per method: see _override_marks.
from inspector._override_marks import install as _install_marks  # noqa: E402

_install_marks()

# The Python API (inspector.api), loaded on first use so that `import inspector` stays cheap:
# inspector.open(store, table=...), inspector.query(...), inspector.audit(...),
# inspector.tables(store).
_API = ("open", "query", "audit", "tables", "Store", "Result", "AuditResult")
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> object:
    if name in _API:
        from inspector import api

        return getattr(api, name)
    raise AttributeError(f"module 'inspector' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
