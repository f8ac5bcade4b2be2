"""Recognise which memory system wrote a table, so the window and CLI can suggest its preset.

The shapes are those of REFERENCE.md section 2; recognition is by column names and types only
(no rows are read), and a guess never changes any parameter by itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from inspector.core.stores.store import Store


@dataclass(frozen=True)
class Shape:
    name: str  # openclaw | engine-memory | other-plugin | crewai | langchain | ... | unknown
    preset: str | None
    title: str
    notes: tuple[str, ...] = ()


def importance_label(importance: Any) -> str:
    """The public engine's label: must_remember >= 0.8, nice_to_have >= 0.5, else ignore;
    unknown when missing or not a number."""
    if isinstance(importance, bool) or not isinstance(importance, (int, float)) \
            or not math.isfinite(importance):
        return "unknown"
    if importance >= 0.8:
        return "must_remember"
    if importance >= 0.5:
        return "nice_to_have"
    return "ignore"


def _has(schema: pa.Schema, name: str, *types: Any) -> bool:
    if name not in schema.names:
        return False
    t = schema.field(name).type
    return not types or any(check(t) for check in types)


def detect_shape(store: Store) -> Shape:
    """The system whose table this looks like, and the preset that reproduces its ranking."""
    if getattr(store, "source", None) is not None:
        return Shape("docs-sqlite", "docs-before-fix", "Docs engine (SQLite)",
                     ("docs-overfetch and docs-pushdown reproduce the two fixes",))
    if store.meta.get("demo"):  # our own store: its suggested queries carry their presets
        return Shape("demo", None, "The inspector's demo store",
                     ("its suggested queries set their own presets",))
    return shape_of(store.table_name, store.schema)


def _struct_fields(schema: pa.Schema, name: str) -> set[str]:
    if name not in schema.names or not pa.types.is_struct(schema.field(name).type):
        return set()
    t = schema.field(name).type
    return {t.field(i).name for i in range(t.num_fields)}


def shape_of(table: str, s: pa.Schema) -> Shape:
    """The system a table's name and schema say wrote it (no rows are read)."""
    framework = _framework_shape(table, s)
    if framework is not None:
        return framework
    if _has(s, "importance_label") or _has(s, "trust_tier"):
        return Shape("engine-memory", "engine-memory", "The public engine's memory table")
    if _has(s, "metadata", pa.types.is_string) and _has(s, "timestamp") and _has(s, "scope"):
        return Shape("memory-lancedb-pro", "memory-lancedb-pro",
                     "memory-lancedb-pro memory plugin (CortexReach)",
                     ("scopes look like 'global', 'agent:<id>', 'project:<id>'",
                      "its CLI search: memory-lancedb-pro-cli; other-plugin is its first "
                      "version's ranking (b1d8c65), not today's"))
    if _has(s, "createdAt", pa.types.is_floating) and table == "memories":
        notes = []
        if not _has(s, "agentId"):
            notes.append("an older table without agentId: give just a scope, or none")
        if _has(s, "scope"):
            notes.append("scope AGENT/SCOPE; '' or NULL scope rows are global")
        notes.append("--scope AGENT (the agentId); auto-recall: openclaw-autorecall; "
                     "search() with its defaults in the fixed engine: openclaw-search-defaults")
        return Shape("openclaw", "openclaw", "OpenClaw memory plugin", tuple(notes))
    return Shape("unknown", None, "Unrecognised table")


def _framework_shape(table: str, s: pa.Schema) -> Shape | None:
    """CrewAI, Agno, Cognee, Mem0, LangChain, LlamaIndex and Generative Agents, from the
    columns their writers create (crewai 1.15, agno 3.1, cognee 1.6, mem0ai 2.2 through
    langchain-community 0.4, llama-index-vector-stores-lancedb 0.6)."""
    if all(_has(s, c) for c in ("content", "scope", "categories_str", "metadata_str",
                                "created_at", "last_accessed", "private")):
        return Shape("crewai", "crewai-memory", "CrewAI Memory (LanceDBStorage)", (
            "recall(depth='shallow'); the default depth='deep' is crewai-memory-deep",
            "--scope is a path prefix such as /team-a (plain string prefix: /team also "
            "matches /team-a)", "--now fixes the clock of the recency term"))
    agno_or_cognee = _payload_shape(table, s)
    if agno_or_cognee is not None:
        return agno_or_cognee
    meta = _struct_fields(s, "metadata")
    if {"data", "hash"} <= meta and _has(s, "text") and _has(s, "vector"):
        return Shape("mem0", "mem0-langchain-lancedb",
                     "Mem0 memories in a LangChain LanceDB store (Mem0's langchain provider)", (
                         "text: text (Mem0's payload 'data'); Mem0's payload is the metadata "
                         "struct (user_id, agent_id, run_id, hash, ...)",
                         "Mem0's search drops its user/agent filters on LanceDB "
                         "(similarity_search_by_vector_with_relevance_scores): "
                         "--scope USER shows the unfiltered rows, with a warning",
                         "--limit is the top_k Mem0 asks (Memory.search: max(limit x 4, 60))"))
    if "_node_content" in meta and _has(s, "doc_id") and _has(s, "text"):
        return Shape("llamaindex", "llamaindex-lancedb", "LlamaIndex LanceDBVectorStore", (
            "filters: --where on the metadata struct, e.g. \"metadata.user_id = 'u1'\"",
            "similarity_top_k is --limit; overfetch_factor: --set fetch.depth_factor=F"))
    if meta and _has(s, "id") and _has(s, "text") and _has(s, "vector"):
        return Shape("langchain", "langchain-lancedb", "LangChain LanceDB vector store", (
            "the filter is a post-filter: --where \"metadata.KEY = 'v'\" or --scope with "
            "--set fetch.scope_path=metadata.KEY", "k is --limit (LangChain's default 4)"))
    if table == "documents" and _has(s, "metadata", pa.types.is_string) \
            and _has(s, "text") and not _has(s, "scope"):
        return Shape("langchain-lancedb", None, "langchain-lancedb 0.1 store", (
            "not reproduced: its filter is ignored and it returns no relevance scores",))
    if all(_has(s, c) for c in ("description", "poignancy", "last_accessed", "type")):
        return Shape("generative-agents", "generative-agents",
                     "Generative Agents memory stream", (
                         "the released code's retrieve; the paper's formula: "
                         "generative-agents-paper",))
    return None


def _payload_shape(table: str, s: pa.Schema) -> Shape | None:
    """Agno's knowledge table (vector, id, payload as JSON text, user_id) and Cognee's
    collections (id, vector, a payload struct with text and belongs_to_set): their text lives
    inside the payload, where the presets read it."""
    if _has(s, "payload", pa.types.is_string) and _has(s, "id") and _has(s, "vector") \
            and set(s.names) <= {"vector", "id", "payload", "user_id"}:
        return Shape("agno", "agno", "Agno knowledge base (agno.vectordb.lancedb.LanceDb)", (
            "text: payload.content (a key of the JSON payload; name, meta_data, usage too)",
            "search_type=keyword: agno-keyword; hybrid: agno-hybrid (both search the "
            "full-text index Agno builds on payload)",
            "--scope USER is search(user_id=USER): (user_id = USER OR user_id IS NULL) "
            "inside the search", "filters={...}: --set filter.filters='{\"k\": \"v\"}', "
            "applied after the limit cut as Agno applies it"))
    payload = _struct_fields(s, "payload")
    if {"text", "belongs_to_set"} <= payload and _has(s, "id") and _has(s, "vector"):
        return Shape("cognee", "cognee", "Cognee vector collection (LanceDBAdapter)", (
            f"collection {table}: text payload.text (a field of the payload struct)",
            "--scope NAME is search(node_name=[NAME, ...]) (array_has_any on "
            "payload.belongs_to_set; node_name_filter_operator='AND': --set "
            "fetch.scope_rule=set_all)", "the score is the cosine distance (lower is better)"))
    return None


# ---- where real stores live by default (File > Open offers the ones that exist) ----

@dataclass(frozen=True)
class KnownStore:
    label: str
    path: str
    preset: str  # the preset that reproduces this store's system
    table: str | None = None


# (label, path relative to the home folder, preset, table)
_DEFAULTS: tuple[tuple[str, str, str, str | None], ...] = (
    ("OpenClaw memory plugin", ".openclaw/memory/lancedb", "openclaw", "memories"),
    # CrewAI: appdirs.user_data_dir(<project folder name>, "CrewAI")/memory, or
    # $CREWAI_STORAGE_DIR/memory; the project folder is the working directory's name
)


def known_locations(home: Path | None = None) -> list[KnownStore]:
    """The default store locations that exist on this machine (checked, never created)."""
    base = home if home is not None else Path.home()
    out = []
    for label, rel, preset, table in _DEFAULTS:
        p = base / rel
        if p.is_dir():
            out.append(KnownStore(label=label, path=str(p), preset=preset, table=table))
    return out
