"""Record what the real frameworks return: each package writes a store through its own API
with a deterministic embedding, runs its own search, and the store and results are saved as
fixtures (tests/frameworks/data/<system>/{store/, cases.json}).

    python tests/frameworks/record.py [--out DIR] [--only crewai,langchain,llamaindex]
    python tests/frameworks/record.py --openclaw-rows FILE

The second writes what OpenClaw's harness (tests/frameworks/record_openclaw/record.mjs, Node)
stores and asks, with this file's vectors: numpy's generator is not reproduced in JS.

Run it with an interpreter that can import the packages (it installs nothing), e.g. a
separate virtualenv:

    python3 -m venv /tmp/fwvenv
    /tmp/fwvenv/bin/pip install lancedb==0.40.0 crewai==1.15.30 langchain-community==0.4.2 \
        llama-index-vector-stores-lancedb==0.6.0 pandas
    /tmp/fwvenv/bin/python tests/frameworks/record.py

It imports nothing from the inspector, so it runs where the inspector is not installed.
CrewAI writes files under HOME and TMPDIR on import: both point into a temporary folder.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

DIM = 32
NOW = dt.datetime(2026, 3, 1, 12, 0, 0)  # naive UTC, as CrewAI's utcnow()
HERE = Path(__file__).resolve().parent

TOPICS = {
    "deploy": "deploy the payments service with a blue green rollout",
    "database": "postgres database backup runs nightly at two",
    "editor": "prefers a dark editor theme and vim keys",
    "billing": "billing invoice goes out on the first monday",
    "travel": "flight to berlin booked for the march offsite",
    "pets": "has a cat named miso who hates the vacuum",
}
USERS = ("u1", "u2", "u3", "u10", "u11", "u12")
QUERIES = ("how do we deploy the payments service", "when does the database backup run",
           "which editor theme is preferred", "trip to berlin in march",
           "what is the cat called", "tie alpha bravo charlie deploy window",
           "invoice schedule for billing")


def embed(text: str) -> list[float]:
    """Bag of words: the sum of one seeded random vector per word (words sorted, so a
    permutation of the same words has bitwise the same vector), normalised, float32."""
    v = np.zeros(DIM)
    for w in sorted(re.findall(r"[a-z0-9]+", text.lower())):
        seed = int.from_bytes(hashlib.sha256(w.encode()).digest()[:8], "little")
        v += np.random.default_rng(seed).standard_normal(DIM)
    n = float(np.linalg.norm(v))
    return [float(x) for x in (v / n).astype(np.float32)] if n else [0.0] * DIM


def memories() -> list[dict[str, Any]]:
    """The rows every framework stores: 36 user x topic notes and 4 whose words are the same
    permuted (equal vectors: a tie LanceDB orders by row id)."""
    out = []
    for i, (user, (topic, phrase)) in enumerate(
            (u, t) for u in USERS for t in TOPICS.items()):
        out.append({"rid": f"m{i:02d}", "text": f"{user} says {phrase} note {i}",
                    "user_id": user, "topic": topic, "year": 2021 + i % 5,
                    "priority": 1 + (i * 7) % 5})
    tie = ["tie alpha bravo charlie deploy window", "deploy window tie alpha bravo charlie",
           "charlie bravo alpha tie window deploy", "window deploy charlie tie bravo alpha"]
    for j, text in enumerate(tie):
        out.append({"rid": f"t{j}", "text": text, "user_id": USERS[j % 2],
                    "topic": "deploy", "year": 2024, "priority": 3})
    return out


def _fresh(out: Path) -> Path:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    return out


def _write(out: Path, doc: dict[str, Any]) -> None:
    doc["vectors"] = {q: embed(q) for q in QUERIES}  # each case's query vector, by its text
    (out / "cases.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    names = ("lancedb", "pylance", "crewai", "langchain-community", "langchain-core",
             "llama-index-core", "llama-index-vector-stores-lancedb")
    got = {}
    for n in names:
        try:
            got[n] = version(n)
        except Exception:  # noqa: BLE001 - a package not installed is simply not recorded
            pass
    return got


# ------------------------------------------------------------------ LangChain

def record_langchain(out: Path) -> None:
    import lancedb
    from langchain_community.vectorstores import LanceDB
    from langchain_core.embeddings import Embeddings

    class Emb(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [embed(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return embed(text)

    store_dir = _fresh(out) / "store"
    db = lancedb.connect(str(store_dir))
    vs = LanceDB(connection=db, embedding=Emb(), mode="append")
    rows = memories()
    by_text = {r["text"]: r["rid"] for r in rows}
    assert len(by_text) == len(rows)
    meta = [{k: r[k] for k in ("user_id", "topic", "year", "priority")} for r in rows]
    half = len(rows) // 2  # two add_texts calls: two fragments, as a store grows
    vs.add_texts([r["text"] for r in rows[:half]], meta[:half], ids=[r["rid"] for r in rows[:half]])
    vs.add_texts([r["text"] for r in rows[half:]], meta[half:], ids=[r["rid"] for r in rows[half:]])
    cases = []
    filters: list[tuple[str, Any, dict[str, Any]]] = [
        ("none", None, {}), ("u1", {"metadata.user_id": "u1"}, {}),
        ("u3_sql", "metadata.user_id = 'u3'", {}),
        ("u3_prefilter", "metadata.user_id = 'u3'", {"prefilter": True}),
        ("year", "metadata.year >= 2024", {}),
    ]
    for qi, query in enumerate(QUERIES):
        for k in (4, 10):
            for fname, filt, kw in filters:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = vs.similarity_search_with_relevance_scores(query, k=k, filter=filt,
                                                                     **kw)
                cases.append({
                    "name": f"q{qi}_k{k}_{fname}", "query": query,
                    "k": k, "filter": filt if isinstance(filt, str) else
                    (" AND ".join(f"{a} = '{b}'" for a, b in filt.items()) if filt else None),
                    "prefilter": bool(kw.get("prefilter")),
                    "results": [{"id": by_text[d.page_content], "score": s} for d, s in got]})
    _write(out, {"system": "langchain-community LanceDB", "versions": _versions(),
                 "table": "vectorstore", "cases": cases})


# ------------------------------------------------------------------ LlamaIndex

def record_llamaindex(out: Path) -> None:
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
    from llama_index.core.vector_stores.types import (
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
        VectorStoreQuery,
    )
    from llama_index.vector_stores.lancedb import LanceDBVectorStore

    store_dir = _fresh(out) / "store"
    rows = memories()
    nodes = []
    for r in rows:
        n = TextNode(text=r["text"], id_=r["rid"], embedding=embed(r["text"]),
                     metadata={k: r[k] for k in ("user_id", "topic", "year", "priority")})
        n.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=f"doc-{r['topic']}")
        nodes.append(n)
    vs = LanceDBVectorStore(uri=str(store_dir), mode="overwrite")
    half = len(nodes) // 2
    vs.add(nodes[:half])
    vs.add(nodes[half:])
    # the inspector opens the store as a reader does: a reopened store, _metadata_keys None
    reader = LanceDBVectorStore(uri=str(store_dir), mode="append")
    cases = []
    filters: list[tuple[str, Any, Any]] = [
        ("none", None, None),
        ("u1", MetadataFilters(filters=[MetadataFilter(key="user_id", value="u1")]),
         "metadata.user_id = 'u1'"),
        ("ne_u1", MetadataFilters(filters=[MetadataFilter(key="user_id", value="u1",
                                                          operator=FilterOperator.NE)]),
         "metadata.user_id NOT LIKE '%u1%'"),
        ("year", MetadataFilters(filters=[MetadataFilter(key="year", value=2024,
                                                         operator=FilterOperator.GTE)]),
         "metadata.year >= 2024"),
        ("sql_u3", "metadata.user_id = 'u3'", "metadata.user_id = 'u3'"),
        ("nobody", MetadataFilters(filters=[MetadataFilter(key="user_id", value="nobody")]),
         "metadata.user_id = 'nobody'"),
    ]
    for qi, query in enumerate(QUERIES):
        for k, factor in ((2, 1), (5, 1), (3, 2)):
            for fname, filt, sql in filters:
                reader.overfetch_factor = factor
                q = VectorStoreQuery(query_embedding=embed(query), similarity_top_k=k,
                                     filters=filt if isinstance(filt, MetadataFilters) else None)
                kwargs = {"where": filt} if isinstance(filt, str) else {}
                try:
                    res = reader.query(q, **kwargs)
                    got = [{"id": i, "score": float(s)} for i, s in zip(res.ids,
                                                                       res.similarities,
                                                                       strict=True)]
                    raised = None
                except Warning as w:  # the package raises Warning on no rows
                    got, raised = [], str(w)
                cases.append({"name": f"q{qi}_k{k}_f{factor}_{fname}", "query": query,
                              "k": k, "overfetch_factor": factor,
                              "where": sql, "results": got, "raised": raised})
    _write(out, {"system": "llama-index LanceDBVectorStore", "versions": _versions(),
                 "table": "vectors", "cases": cases})


# ------------------------------------------------------------------ CrewAI

CREW_SCOPES = ("/team-a/alice", "/team-a/bob", "/team-b/carol", "/teamwork", "/team-a",
               "/team_x/dave")


def crew_rows() -> list[dict[str, Any]]:
    out = []
    for i, r in enumerate(memories()):
        created = NOW - dt.timedelta(days=(i * 3.7) % 95, seconds=i * 611,
                                     microseconds=(i * 12345) % 1_000_000 if i % 3 else 0)
        out.append({**r, "scope": CREW_SCOPES[i % len(CREW_SCOPES)],
                    "importance": round(0.1 + (i * 0.137) % 0.9, 3),
                    "categories": [r["topic"]] + (["ops"] if i % 4 == 0 else []),
                    "created_at": created, "private": i % 9 == 4,
                    "source": "agent-x" if i % 2 else "agent-y"})
    return out


def record_crewai(out: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="crewai-rec-"))
    for var, sub in (("HOME", "home"), ("TMPDIR", "tmp"), ("CREWAI_STORAGE_DIR", "storage")):
        (work / sub).mkdir()
        os.environ[var] = str(work / sub)
    os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    tempfile.tempdir = str(work / "tmp")
    import crewai.memory.types as ctypes
    from crewai.memory import Memory
    from crewai.memory.storage.lancedb_storage import LanceDBStorage
    from crewai.memory.types import MemoryRecord

    class FixedNow(dt.datetime):
        @classmethod
        def utcnow(cls) -> dt.datetime:  # type: ignore[override]
            return NOW

    ctypes.datetime = FixedNow  # compute_composite_score's clock is --now

    class NoLLM:
        def call(self, *a: Any, **k: Any) -> str:
            raise RuntimeError("no LLM here")

    store_dir = _fresh(out) / "store"
    storage = LanceDBStorage(path=str(store_dir))
    rows = crew_rows()
    storage.save([MemoryRecord(id=r["rid"], content=r["text"], scope=r["scope"],
                               categories=r["categories"], metadata={"topic": r["topic"]},
                               importance=r["importance"], created_at=r["created_at"],
                               last_accessed=r["created_at"], embedding=embed(r["text"]),
                               source=r["source"], private=r["private"]) for r in rows[:20]])
    storage.save([MemoryRecord(id=r["rid"], content=r["text"], scope=r["scope"],
                               categories=r["categories"], metadata={"topic": r["topic"]},
                               importance=r["importance"], created_at=r["created_at"],
                               last_accessed=r["created_at"], embedding=embed(r["text"]),
                               source=r["source"], private=r["private"]) for r in rows[20:]])
    del storage
    mem = Memory(storage=LanceDBStorage(path=str(store_dir)),
                 embedder=lambda texts: [embed(t) for t in texts], read_only=True)
    mem._llm_instance = NoLLM()  # deep recall of a short query calls no LLM to analyse it
    cases = []
    runs: list[dict[str, Any]] = [{"scope": None}, {"scope": "/team-a"}, {"scope": "/team"},
                                  {"scope": "/team-a/alice"}, {"scope": "team-a"},
                                  {"scope": "/team_x"}, {"scope": "/"},
                                  {"scope": None, "categories": ["ops"]},
                                  {"scope": None, "include_private": True},
                                  {"scope": None, "source": "agent-x"}]
    for qi, query in enumerate(QUERIES):
        for limit in (3, 10):
            for depth in ("shallow", "deep"):
                for ri, run in enumerate(runs):
                    got = mem.recall(query, limit=limit, depth=depth, **run)
                    cases.append({"name": f"q{qi}_l{limit}_{depth}_r{ri}", "query": query,
                                  "limit": limit, "depth": depth,
                                  **run, "results": [{"id": m.record.id, "score": m.score}
                                                     for m in got]})
    mem.close() if hasattr(mem, "close") else None
    _write(out, {"system": "crewai Memory", "versions": _versions(), "table": "memories",
                 "now": NOW.isoformat(), "cases": cases})
    shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------ OpenClaw (input only)

OPENCLAW_AGENTS = ("u1", "u2", "u10", "nobody")  # nobody: an agent without a memory
OPENCLAW_LIMITS = (1, 3, 5, 8)
OPENCLAW_CATEGORIES = ("preference", "fact", "decision", "entity", "other")


def openclaw_rows(path: Path) -> None:
    """The memories, their vectors and the searches record.mjs runs through the plugin: the
    40 shared rows (agentId = user_id) and two blank texts whose vector is the first query's
    words, so that they would rank first if the plugin kept them."""
    rows = [{"rid": r["rid"], "text": r["text"], "agent": r["user_id"]} for r in memories()]
    rows += [{"rid": "b0", "text": " ", "agent": "u1"}, {"rid": "b1", "text": "  ", "agent": "u2"}]
    for i, r in enumerate(rows):
        r["importance"] = round((0.05 + i * 0.173) % 0.95, 3)
        r["category"] = OPENCLAW_CATEGORIES[i % len(OPENCLAW_CATEGORIES)]
        r["vector"] = embed(r["text"] if r["text"].strip() else "deploy the payments service")
    doc = {"dim": DIM, "rows": rows, "agents": OPENCLAW_AGENTS, "limits": OPENCLAW_LIMITS,
           "vectors": {q: embed(q) for q in QUERIES}}
    Path(path).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


RECORDERS = {"langchain": record_langchain, "llamaindex": record_llamaindex,
             "crewai": record_crewai}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "data"))
    ap.add_argument("--only", default=",".join(RECORDERS))
    ap.add_argument("--openclaw-rows", metavar="FILE", help="write OpenClaw's input and stop")
    a = ap.parse_args(argv)
    if a.openclaw_rows:
        openclaw_rows(Path(a.openclaw_rows))
        return 0
    for name in a.only.split(","):
        RECORDERS[name](Path(a.out) / name)
        print(f"recorded {name} into {Path(a.out) / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
