"""Write the bundled demo store: deterministic text, the built-in embedder, and two stories.

Story 1 (scoped miss): in scope `vault-agent`, a docs-style query's global top-10 is all
`platform-docs`, so the post-filter returns nothing; a wider pool or pushdown finds the rows.
Story 2 (importance): a low-importance memory sits slightly closer to a preference query than
a high-importance one; blending importance swaps them.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.stores.embed import HashEmbedder
from inspector.core.stores.store import META_KEY

DIM = 256
TABLE = "memories"
SCOPE_QUERY = "how do I rotate the signing keys for service tokens"
BLEND_QUERY = "which editor theme does the user prefer"
CATEGORIES = ("preference", "fact", "decision", "entity", "other")
REPOS = ("platform-docs", "vault-agent", "billing-api", "web-frontend", "ml-pipeline",
         "mobile-app", "infra-terraform", "search-service", "auth-gateway", "data-warehouse",
         "notifications", "support-bot", "analytics", "design-system", "release-tools",
         "agent-memory")
_SIZES = {"platform-docs": 520, "vault-agent": 120}
_DEFAULT_SIZE = 170
_T0_MS = 1_767_225_600_000.0  # 2026-01-01T00:00:00Z

_TOPICS: dict[str, tuple[str, ...]] = {
    "deploy": ("deploy the {x} service with a canary release and watch the error budget",
               "rollback steps when the {x} deploy fails health checks",
               "blue green deployment notes for {x} behind the load balancer"),
    "testing": ("run the {x} integration tests against a disposable database",
                "flaky test triage for {x}: quarantine, reproduce, fix",
                "snapshot tests for {x} must be reviewed before merge"),
    "logging": ("structured logging fields for {x}: request id, tenant, latency",
                "log retention for {x} is thirty days in cold storage",
                "turn on debug logging for {x} only behind a feature flag"),
    "migrations": ("database migration checklist for {x}: backup, dry run, apply",
                   "schema changes in {x} must be backwards compatible for one release",
                   "long running migrations in {x} run in batches at night"),
    "caching": ("cache invalidation for {x} uses versioned keys in redis",
                "the {x} cache warms from the nightly export",
                "tune cache expiry for {x} to cut database load"),
    "ratelimit": ("rate limits for {x} are per tenant with a burst allowance",
                  "429 responses from {x} include a retry after header"),
    "onboarding": ("new engineers on {x} start with the architecture overview",
                   "local setup for {x}: docker compose, seed data, make dev"),
    "incidents": ("incident review for {x}: timeline, impact, follow ups",
                  "paging policy for {x} escalates after fifteen minutes"),
    "search": ("the {x} search index is rebuilt after bulk imports",
               "relevance tuning notes for {x}: boosts, synonyms, typo tolerance"),
    "billing": ("invoices in {x} are generated on the first day of the month",
                "proration rules in {x} for plan upgrades and downgrades"),
}
_THINGS = ("gateway", "worker", "scheduler", "exporter", "dashboard", "queue", "ledger",
           "crawler", "indexer", "notifier", "uploader", "resolver")
_MEMORIES = (
    ("preference", "the user likes concise answers with code first"),
    ("preference", "the user works in the {x} repository most mornings"),
    ("fact", "the {x} team meets on thursdays for planning"),
    ("fact", "staging for {x} is reset every sunday night"),
    ("decision", "we decided to keep {x} on postgres instead of moving to a document store"),
    ("decision", "the {x} api will stay on version two until the migration ends"),
    ("entity", "dana owns the {x} on call rotation"),
    ("entity", "the {x} vendor contact is the platform partnerships team"),
    ("other", "remember to update the {x} changelog before tagging"),
)
_PLATFORM_KEYS = (
    "rotate the signing keys for service tokens every ninety days",
    "signing key rotation: rotate service token keys and publish the new key id",
    "to rotate signing keys for service tokens, stage the new key then revoke the old",
    "service tokens are verified with signing keys; rotate keys after any leak",
    "automate signing key rotation for service tokens in the platform scheduler",
    "audit which service tokens still use the old signing keys after you rotate",
    "rotate signing keys: overlap old and new keys so service tokens stay valid",
    "emergency rotation of signing keys for all service tokens",
)
_VAULT_KEYS = (
    "vault agent can rotate keys for tokens it issues on request",
    "rotate the transit keys held by vault agent and re-wrap tokens",
    "vault agent renews tokens; key rotation is done with the rotate endpoint",
    "configure vault agent templates to pick up rotated keys for tokens",
)
_BLEND_PAIR = (
    ("agent-memory-theme-close", "the user prefers the light editor theme", 0.15),
    ("agent-memory-theme-far", "the user prefers the dark editor theme at night", 0.95),
)


def _rows() -> list[dict[str, Any]]:
    rng = random.Random(20261130)
    rows: list[dict[str, Any]] = []

    def add(repo: str, text: str, category: str, importance: float | None,
            rid: str | None = None) -> None:
        n = len(rows)
        rows.append({
            "id": rid or str(uuid.uuid5(uuid.NAMESPACE_URL, f"demo/{repo}/{n}")),
            "text": text, "category": category, "importance": importance,
            "createdAt": _T0_MS + n * 3_600_000.0 + rng.randrange(3_600_000),
            "repo": repo, "path": f"{repo}/{'docs' if category == 'fact' else 'notes'}/{n:05d}.md",
            "agentId": "main" if n % 3 else "ops",
        })

    for repo in REPOS:
        size = _SIZES.get(repo, _DEFAULT_SIZE)
        special = {"platform-docs": _PLATFORM_KEYS * 3, "vault-agent": _VAULT_KEYS}.get(repo, ())
        for text in special:
            add(repo, text, "fact", round(rng.uniform(0.4, 0.9), 2))
        for _ in range(size - len(special)):
            thing = rng.choice(_THINGS)
            if rng.random() < 0.3:
                cat, tmpl = rng.choice(_MEMORIES)
            else:
                cat, tmpl = rng.choice(("fact", "other", "decision")), rng.choice(
                    _TOPICS[rng.choice(tuple(_TOPICS))])
            imp = None if rng.random() < 0.05 else round(rng.uniform(0.05, 1.0), 2)
            add(repo, tmpl.format(x=f"{repo} {thing}"), cat, imp)
    for rid, text, imp in _BLEND_PAIR:
        add("agent-memory", text, "preference", imp, rid=rid)
    return rows


def suggested_queries() -> list[dict[str, Any]]:
    return [
        {"name": "Scoped miss: key rotation in vault-agent", "text": SCOPE_QUERY,
         "preset": "docs-before-fix", "scope": "vault-agent", "limit": 10,
         "story": "Post-filter after the global cut returns nothing; raise over-fetch to about 3 "
                  "or switch to pushdown and the vault-agent docs appear."},
        {"name": "Importance: editor theme preference", "text": BLEND_QUERY,
         "preset": "importance-blend", "limit": 5, "min_score": 0.0, "blend": 0.0,
         "expect": [_BLEND_PAIR[1][0]],
         "story": "At blend 0 the low-importance memory ranks first; drag the blend weight "
                  "to 0.5 and the important one overtakes it."},
    ]


def build_demo(path: str | Path, overwrite: bool = False) -> Path:
    """Write the demo store to a new folder (refusing to touch an existing non-empty one)."""
    import lancedb

    target = Path(path).expanduser()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        if not overwrite:
            raise InspectorError(f"{target} already exists and is not empty; the demo store "
                                 "is only written to a new or empty folder.")
    rows = _rows()
    vectors = HashEmbedder(dim=DIM).embed([r["text"] for r in rows])
    meta = {"embedder": {"name": "hash-v1", "dim": DIM}, "demo": True,
            "suggested_queries": suggested_queries()}
    schema = pa.schema([
        pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
        pa.field("vector", pa.list_(pa.float32(), DIM)),
        pa.field("importance", pa.float64()), pa.field("category", pa.utf8()),
        pa.field("createdAt", pa.float64()), pa.field("repo", pa.utf8()),
        pa.field("path", pa.utf8()), pa.field("agentId", pa.utf8()),
    ], metadata={META_KEY: json.dumps(meta).encode()})
    cols = {k: [r[k] for r in rows] for k in schema.names if k != "vector"}
    cols["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)
    table = pa.table(cols, schema=schema)
    target.mkdir(parents=True, exist_ok=True)
    db = lancedb.connect(str(target))
    tbl = db.create_table(TABLE, table, mode="overwrite")
    from lancedb.index import FTS

    tbl.create_index("text", config=FTS())
    return target


def demo_vector(text: str) -> np.ndarray:
    return HashEmbedder(dim=DIM).embed([text])[0]


DEMO_VERSION = 1


def data_root() -> Path:
    """The app's data folder; INSPECTOR_DATA_DIR overrides it (tests use this)."""
    import os

    import platformdirs

    env = os.environ.get("INSPECTOR_DATA_DIR")
    return Path(env) if env else Path(platformdirs.user_data_dir("memory-store-inspector"))


def ensure_demo_store() -> Path:
    """The bundled demo store in the user's data folder, written on first use."""
    import os
    import shutil

    target = data_root() / f"demo-store-v{DEMO_VERSION}"
    if (target / f"{TABLE}.lance").exists():
        return target
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    build_demo(tmp)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return target
