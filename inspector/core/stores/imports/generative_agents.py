"""Generative Agents keeps a persona's memory stream as JSON (associative_memory/nodes.json
and embeddings.json), not in LanceDB. This writes that stream, as AssociativeMemory loads it,
into a new LanceDB table `nodes` that the `generative-agents` presets read; the source files
are only read.

As loaded (associative_memory.py): `last_accessed` is `created` (it is not saved), an event's
description with "(" is shortened as add_event does, embeddings are float64 (kept so: the
cosines are GA's own to the last digit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.jsonio import parse_json, read_text

TABLE = "nodes"
MAX_BYTES = 2 * 1024**3


def _read(path: Path) -> Any:
    if not path.exists():
        raise InspectorError(f"{path} does not exist: a Generative Agents memory folder holds "
                             f"nodes.json and embeddings.json (persona/bootstrap_memory/"
                             f"associative_memory).")
    return parse_json(read_text(path, "The memory stream file", MAX_BYTES),
                      "The memory stream file", path)


def _description(kind: str, text: str) -> str:
    """add_event's clean-up of event descriptions holding '('."""
    if kind == "event" and "(" in text:
        return " ".join(text.split()[:3]) + " " + text.split("(")[-1][:-1]
    return text


def import_memory_stream(src: str | Path, dest: str | Path) -> Path:
    """Write the stream in `src` (a folder with nodes.json, embeddings.json) to a new LanceDB
    store at `dest` (refused when it exists and is not empty)."""
    import lancedb

    src, target = Path(src).expanduser(), Path(dest).expanduser()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InspectorError(f"{target} already exists and is not empty; the stream is only "
                             f"written to a new or empty folder.")
    nodes = _read(src / "nodes.json")
    embeddings = _read(src / "embeddings.json")
    if not isinstance(nodes, dict) or not isinstance(embeddings, dict):
        raise InspectorError(f"{src}: nodes.json and embeddings.json must hold JSON objects.")
    rows = []
    dim = None
    for count in range(1, len(nodes) + 1):
        nid = f"node_{count}"
        n = nodes.get(nid)
        if not isinstance(n, dict):
            raise InspectorError(f"{src / 'nodes.json'} has no {nid} (GA loads node_1 to "
                                 f"node_{len(nodes)} in order).")
        vec = embeddings.get(n.get("embedding_key"))
        if not isinstance(vec, list) or not vec:
            raise InspectorError(f"{nid}: no embedding for its key {n.get('embedding_key')!r}.")
        dim = dim or len(vec)
        if len(vec) != dim:
            raise InspectorError(f"{nid}: an embedding of {len(vec)} numbers, not {dim}.")
        kind = str(n.get("type", ""))
        rows.append({"id": nid, "node_count": int(n.get("node_count", count)), "type": kind,
                     "description": _description(kind, str(n.get("description", ""))),
                     "poignancy": float(n.get("poignancy", 0)),
                     "created": str(n.get("created", "")),
                     "last_accessed": str(n.get("created", "")),
                     "expiration": n.get("expiration"),
                     "subject": str(n.get("subject", "")),
                     "predicate": str(n.get("predicate", "")),
                     "object": str(n.get("object", "")),
                     "embedding_key": str(n.get("embedding_key", "")),
                     "vector": [float(x) for x in vec]})
    if not rows:
        raise InspectorError(f"{src / 'nodes.json'} holds no node.")
    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("node_count", pa.int64()),
                        pa.field("type", pa.utf8()), pa.field("description", pa.utf8()),
                        pa.field("poignancy", pa.float64()), pa.field("created", pa.utf8()),
                        pa.field("last_accessed", pa.utf8()),
                        pa.field("expiration", pa.utf8()), pa.field("subject", pa.utf8()),
                        pa.field("predicate", pa.utf8()), pa.field("object", pa.utf8()),
                        pa.field("embedding_key", pa.utf8()),
                        pa.field("vector", pa.list_(pa.float64(), dim))])
    table = pa.table({f.name: pa.array([r[f.name] for r in rows], f.type) for f in schema},
                     schema=schema)
    target.mkdir(parents=True, exist_ok=True)
    lancedb.connect(str(target)).create_table(TABLE, table)
    return target
