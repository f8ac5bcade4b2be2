"""Memory-store inspector: see an agent memory store's retrieval pipeline stage by stage."""

__version__ = "0.1.0"

import os as _os

# LanceDB's native logger warns on routine events (e.g. "No existing dataset ... will be created"
# when the demo store is written); keep stderr for messages a user must act on.
_os.environ.setdefault("LANCEDB_LOG", "error")
