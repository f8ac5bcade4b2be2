"""Record what the real packages return on every entry point and route of round two: Agno's
knowledge search (vector, keyword, hybrid), LangChain's similarity_search_with_score,
similarity_search, the by-vector calls, MMR and full-text search, LlamaIndex's fts and hybrid
query types, and Mem0 through its langchain provider on LanceDB. Each package writes its store
through its own API with a deterministic embedding (record.embed), runs its own search, and the
store and results are saved as fixtures (DIR/<system>/{store/, cases.json}); every case names
the preset that reproduces it, the question (`text`, `limit`, `scopes`, `sets`) and where a
returned row's name is read (`id_path`), so one checker runs them all:

    python tests/frameworks/record_round2.py [--out DIR] [--only agno,langchain2,...] [--seed N]

`--only crewai2` needs crewai (1.15.30, its own virtualenv: it pins pydantic and pulls in
chromadb); the others need the packages listed below.
    python tests/frameworks/check_recorded.py DIR          # the presets against DIR

Held-out checks: `--seed N` (N > 0) draws another store (other texts, users, topics, years,
duplicates and permuted texts) and other queries from the same vocabulary, and
check_recorded.py runs every preset against what the packages answered there, e.g.

    /work/pkgs/bin/python tests/frameworks/record_round2.py --out /tmp/held --seed 7
    .venv/bin/python tests/frameworks/check_recorded.py /tmp/held

Run the recorder with an interpreter that can import the packages (it installs nothing):

    python3 -m venv /tmp/r2 && /tmp/r2/bin/pip install lancedb==0.40.0 agno==3.1.10 \\
        langchain-community==0.4.2 langchain-core==1.8.3 mem0ai==2.2.1 pandas \\
        llama-index-vector-stores-lancedb==0.6.0 llama-index-core==0.14.25

It imports nothing from the inspector.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import QUERIES, TOPICS, USERS, embed, memories  # noqa: E402

HERE = Path(__file__).resolve().parent


# ------------------------------------------------------------------ the corpus

def corpus(seed: int) -> list[dict[str, Any]]:
    """Seed 0: record.memories() (36 user x topic notes, 4 permutations of one text: equal
    vectors and equal BM25 scores), two stored copies of one text and a shared note per topic.
    Another seed: texts drawn from the same words, the same kinds of ties and copies."""
    if seed == 0:
        rows = memories()
        rows += [{**rows[0], "rid": "d0"}, {**rows[7], "rid": "d1"}]
        rows += [{"rid": f"s{i}", "text": f"shared team note {phrase}", "user_id": None,
                  "topic": topic, "year": 2020, "priority": 2}
                 for i, (topic, phrase) in enumerate(TOPICS.items())]
        return rows
    rng = random.Random(seed)
    words = sorted({w for p in TOPICS.values() for w in p.split()})
    rows = []
    for i in range(rng.randint(30, 60)):
        topic = rng.choice(sorted(TOPICS))
        picked = rng.sample(TOPICS[topic].split(), rng.randint(3, 6)) + \
            rng.sample(words, rng.randint(0, 3))
        rows.append({"rid": f"m{i:02d}", "text": f"{' '.join(picked)} note {i}",
                     "user_id": rng.choice([*USERS, None]), "topic": topic,
                     "year": rng.randint(2019, 2025), "priority": rng.randint(1, 5)})
    base = rng.sample(words, 5)
    for j in range(rng.randint(2, 5)):  # permutations: equal vectors, equal BM25 scores
        rows.append({"rid": f"t{j}", "text": " ".join(rng.sample(base, len(base))),
                     "user_id": rng.choice(USERS[:2]), "topic": "deploy", "year": 2024,
                     "priority": 3})
    for j in range(2):
        rows.append({**rng.choice(rows[:20]), "rid": f"d{j}"})
    return rows


def queries(seed: int) -> list[str]:
    if seed == 0:
        return [*QUERIES, "deploy window", "berlin flight"]
    rng = random.Random(seed * 7919)
    words = sorted({w for p in TOPICS.values() for w in p.split()})
    return [" ".join(rng.sample(words, rng.randint(1, 5))) for _ in range(8)]


def _fresh(out: Path) -> Path:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    return out


def _write(out: Path, doc: dict[str, Any], qs: list[str]) -> None:
    """cases.json beside the store; the store keeps its last version only (the searches ran
    on it; earlier versions are the writes and index rebuilds that led there)."""
    import datetime as dt

    import lancedb

    db = lancedb.connect(str(out / "store"))
    for name in db.table_names():
        try:
            db.open_table(name).cleanup_old_versions(older_than=dt.timedelta(0),
                                                     delete_unverified=True)
        except ImportError:  # needs pylance; without it the store keeps its old versions
            pass
    doc["vectors"] = {q: embed(q) for q in qs}
    (out / "cases.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    got = {}
    for n in ("lancedb", "pylance", "agno", "langchain-community", "langchain-core",
              "llama-index-core", "llama-index-vector-stores-lancedb", "mem0ai", "crewai"):
        try:
            got[n] = version(n)
        except Exception:  # noqa: BLE001 - a package not installed is simply not recorded
            pass
    return got


def case(name: str, preset: str, query: str, limit: int, results: list[dict[str, Any]], *,
         text: bool = True, scopes: list[str] | None = None, sets: dict[str, Any] | None = None,
         scores: bool = True, **extra: Any) -> dict[str, Any]:
    return {"name": name, "preset": preset, "query": query, "text": query if text else None,
            "limit": limit, "scopes": scopes, "sets": sets or {}, "scores": scores,
            "results": results, **extra}


# ------------------------------------------------------------------ Agno

def record_agno(out: Path, seed: int) -> None:
    from agno.knowledge.document import Document
    from agno.knowledge.embedder.base import Embedder
    from agno.vectordb.lancedb import LanceDb
    from agno.vectordb.search import SearchType

    class Emb(Embedder):
        def get_embedding(self, text: str) -> list[float]:
            return embed(text)

        def get_embedding_and_usage(self, text: str) -> tuple[list[float], None]:
            return embed(text), None

    emb = Emb(dimensions=len(embed("x")))
    store = _fresh(out) / "store"
    db = LanceDb(uri=str(store), table_name="knowledge", embedder=emb)
    db.create()
    rows = corpus(seed)
    # owners: u1 and u2 own their rows, the rest are shared (user_id NULL); one insert per
    # owner and content hash, as Knowledge inserts a content's chunks
    for owner in ("u1", "u2", None):
        mine = [r for r in rows if (r["user_id"] if r["user_id"] in ("u1", "u2") else None)
                == owner]
        for h in ("h1", "h2"):
            part = [r for r in mine if (r["rid"] < "m2") == (h == "h1")]
            docs = [Document(content=r["text"], name=r["rid"], meta_data={
                "topic": r["topic"], "year": r["year"], "user": r["user_id"]}) for r in part]
            if docs:
                db.insert(content_hash=f"{h}-{owner}", documents=docs, user_id=owner)
    cases = []
    qs = queries(seed)
    filters: list[tuple[str, Any]] = [("none", None), ("deploy", {"topic": "deploy"}),
                                      ("y2024", {"year": 2024}), ("list", [])]
    for st, preset in (("vector", "agno"), ("keyword", "agno-keyword"),
                       ("hybrid", "agno-hybrid")):
        searcher = LanceDb(uri=str(store), table_name="knowledge", embedder=emb,
                           search_type=SearchType(st))
        for qi, query in enumerate(qs):
            for limit in (3, 10):
                for user in (None, "u1"):
                    for fname, filt in filters:
                        got = searcher.search(query, limit=limit, filters=filt or None,
                                              user_id=user)
                        sets = {"filter.filters": filt} if isinstance(filt, dict) else {}
                        cases.append(case(
                            f"{st}_q{qi}_l{limit}_{user or 'all'}_{fname}", preset, query,
                            limit, [{"id": d.name, "text": d.content} for d in got],
                            scopes=[user] if user else None, sets=sets, scores=False))
    _write(out, {"system": "agno LanceDb", "versions": _versions(), "table": "knowledge",
                 "id_path": "payload.name", "cases": cases}, qs)


# ------------------------------------------------------------------ LangChain

def _langchain_store(store: Path, rows: list[dict[str, Any]], table: str = "vectorstore",
                     ) -> Any:
    import lancedb
    from langchain_community.vectorstores import LanceDB
    from langchain_core.embeddings import Embeddings

    class Emb(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [embed(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return embed(text)

    db = lancedb.connect(str(store))
    vs = LanceDB(connection=db, embedding=Emb(), mode="append", table_name=table)
    meta = [{"rid": r["rid"], "user_id": r["user_id"] or "shared", "topic": r["topic"],
             "year": r["year"]} for r in rows]
    half = len(rows) // 2
    for part in (slice(0, half), slice(half, None)) if rows else ():
        vs.add_texts([r["text"] for r in rows[part]], meta[part],
                     ids=[r["rid"] for r in rows[part]])
    return vs


def record_langchain2(out: Path, seed: int) -> None:
    store = _fresh(out) / "store"
    vs = _langchain_store(store, corpus(seed))
    qs = queries(seed)
    cases = []
    filters: list[tuple[str, str | None, dict[str, Any]]] = [
        ("none", None, {}), ("u1", "metadata.user_id = 'u1'", {}),
        ("u3pre", "metadata.user_id = 'u3'", {"prefilter": True})]

    def rows_of(docs: list[Any], scored: bool) -> list[dict[str, Any]]:
        if scored:
            return [{"id": d.metadata["rid"], "score": float(s)} for d, s in docs]
        return [{"id": d.metadata["rid"]} for d in docs]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for qi, q in enumerate(qs):
            v = embed(q)
            for k in (4, 10):
                for fname, filt, kw in filters:
                    sets = {"where": filt or ""} | ({"fetch.prefilter": True} if kw else {})
                    got = vs.similarity_search_with_score(q, k=k, filter=filt, **kw)
                    cases.append(case(f"score_q{qi}_k{k}_{fname}", "langchain-lancedb-score",
                                      q, k, rows_of(got, True), sets=sets))
                    got = vs.similarity_search(q, k=k, filter=filt, **kw)
                    cases.append(case(f"search_q{qi}_k{k}_{fname}", "langchain-lancedb-score",
                                      q, k, rows_of(got, False), sets=sets, scores=False))
                    got = vs.similarity_search_by_vector(v, k=k, filter=filt, **kw)
                    cases.append(case(f"byvec_q{qi}_k{k}_{fname}", "langchain-lancedb-score",
                                      q, k, rows_of(got, False), text=False, sets=sets,
                                      scores=False))
                    got = vs.similarity_search_by_vector_with_relevance_scores(
                        v, k=k, filter=filt, **kw)
                    cases.append(case(f"byvecrel_q{qi}_k{k}_{fname}",
                                      "langchain-lancedb-by-vector", q, k, rows_of(got, True),
                                      text=False, sets={"where": filt or ""}))
                for fetch_k, lam in ((20, 0.5), (10, 0.2), (6, 0.9)):
                    for fname, filt, kw in filters:
                        got = vs.max_marginal_relevance_search(
                            q, k=k, fetch_k=fetch_k, lambda_mult=lam, filter=filt, **kw)
                        cases.append(case(
                            f"mmr_q{qi}_k{k}_f{fetch_k}_l{lam}_{fname}", "langchain-lancedb-mmr",
                            q, k, rows_of(got, False), scores=False,
                            sets={"where": filt or "", "fetch.depth_extra": fetch_k,
                                  "mmr.lambda_mult": lam}))
        # similarity_search(query_type="fts") raises TypeError (`name` given twice), and a
        # store's second fts call raises NotImplementedError (its index exists): each search
        # is the first call of a new store object, which (re)creates the index (replace=True)
        for qi, q in enumerate(qs):
            for k in (1, 4, 10):
                for fname, filt, kw in filters:
                    fresh = _langchain_store(store, [])
                    got = fresh.similarity_search_with_score(q, k=k, filter=filt,
                                                             query_type="fts", **kw)
                    sets = {"where": filt or ""} | ({"fetch.prefilter": True} if kw else {})
                    cases.append(case(f"fts_q{qi}_k{k}_{fname}", "langchain-lancedb-fts", q, k,
                                      rows_of(got, False), sets=sets, scores=False))
    _write(out, {"system": "langchain-community LanceDB", "versions": _versions(),
                 "table": "vectorstore", "id_path": "metadata.rid", "cases": cases}, qs)


# ------------------------------------------------------------------ Mem0 (langchain provider)

def record_mem0(out: Path, seed: int) -> None:
    import lancedb
    from langchain_community.vectorstores import LanceDB
    from langchain_core.embeddings import Embeddings
    from mem0.vector_stores.langchain import Langchain

    class Emb(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [embed(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return embed(text)

    store = _fresh(out) / "store"
    client = LanceDB(connection=lancedb.connect(str(store)), embedding=Emb(), mode="append",
                     table_name="mem0")
    mem = Langchain(client=client, collection_name="mem0")
    rows = corpus(seed)
    for r in rows:  # Mem0 inserts one memory at a time: its payload is LangChain's metadata
        mem.insert([embed(r["text"])], [{"data": r["text"], "rid": r["rid"],
                                         "user_id": r["user_id"] or "shared",
                                         "hash": r["rid"]}], [r["rid"]])
    qs = queries(seed)
    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for qi, q in enumerate(qs):
            for k in (5, 12):
                for user in (None, "u1"):
                    got = mem.search(q, embed(q), top_k=k,
                                     filters={"user_id": user} if user else None)
                    cases.append(case(f"q{qi}_k{k}_{user or 'all'}", "mem0-langchain-lancedb",
                                      q, k, [{"id": o.payload["rid"], "score": o.score,
                                              "mem0_id": o.id} for o in got], text=False,
                                      scopes=[user] if user else None,
                                      sets={"fetch.scope_path": "metadata.user_id"}))
    _write(out, {"system": "mem0 Langchain provider on LangChain LanceDB",
                 "versions": _versions(), "table": "mem0", "id_path": "metadata.rid",
                 "cases": cases}, qs)


# ------------------------------------------------------------------ LlamaIndex

def record_llamaindex2(out: Path, seed: int) -> None:
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
    from llama_index.core.vector_stores.types import VectorStoreQuery
    from llama_index.vector_stores.lancedb import LanceDBVectorStore

    store = _fresh(out) / "store"
    nodes = []
    for r in corpus(seed):
        n = TextNode(text=r["text"], id_=r["rid"], embedding=embed(r["text"]),
                     metadata={"user_id": r["user_id"] or "shared", "topic": r["topic"],
                               "year": r["year"]})
        n.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=f"doc-{r['topic']}")
        nodes.append(n)
    vs = LanceDBVectorStore(uri=str(store), mode="overwrite")
    half = len(nodes) // 2
    vs.add(nodes[:half])
    vs.add(nodes[half:])
    qs = queries(seed)
    cases = []
    for qt in ("fts", "hybrid"):
        reader = LanceDBVectorStore(uri=str(store), mode="append", query_type=qt)
        for qi, q in enumerate(qs):
            for k, factor in ((2, 1), (5, 1), (3, 2), (10, 1)):
                for fname, where in (("none", None), ("u1", "metadata.user_id = 'u1'")):
                    reader.overfetch_factor = factor
                    query = VectorStoreQuery(query_str=q, query_embedding=embed(q),
                                             similarity_top_k=k)
                    try:
                        res = reader.query(query, **({"where": where} if where else {}))
                        got = [{"id": i, "score": float(s)} for i, s in
                               zip(res.ids, res.similarities, strict=True)]
                    except Warning:  # the package raises Warning on no rows
                        got = []
                    cases.append(case(f"{qt}_q{qi}_k{k}_f{factor}_{fname}",
                                      f"llamaindex-lancedb-{qt}", q, k, got,
                                      sets={"where": where or "",
                                            "fetch.depth_factor": factor}))
    _write(out, {"system": "llama-index LanceDBVectorStore", "versions": _versions(),
                 "table": "vectors", "id_path": "id", "cases": cases}, qs)


def record_llamaindex_ivf(out: Path, seed: int) -> None:
    """An IVF_PQ-indexed LlamaIndex store (300 rows: the corpus and variations of it), queried
    with the constructor's nprobes and refine_factor, vector and hybrid."""
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import VectorStoreQuery
    from llama_index.vector_stores.lancedb import LanceDBVectorStore

    store = _fresh(out) / "store"
    base = corpus(seed)
    rng = random.Random(seed + 11)
    words = sorted({w for p in TOPICS.values() for w in p.split()})
    rows = [{**r, "rid": f"{r['rid']}v{i}",
             "text": r["text"] + "".join(" " + w for w in rng.sample(words, i % 4 + 1))
             if i else r["text"]} for i in range(-(-300 // len(base))) for r in base][:300]
    nodes = [TextNode(text=r["text"], id_=r["rid"], embedding=embed(r["text"]),
                      metadata={"user_id": r["user_id"] or "shared", "topic": r["topic"]})
             for r in rows]
    vs = LanceDBVectorStore(uri=str(store), mode="overwrite")
    vs.add(nodes)
    vs.table.create_index(metric="l2", num_partitions=16, num_sub_vectors=4,
                          vector_column_name="vector", index_type="IVF_PQ")
    qs = queries(seed)
    cases = []
    for qt in ("vector", "hybrid"):
        for nprobes, refine in ((20, None), (1, None), (2, 5), (8, 1)):
            reader = LanceDBVectorStore(uri=str(store), mode="append", query_type=qt,
                                        nprobes=nprobes, refine_factor=refine)
            for qi, q in enumerate(qs):
                for k in (3, 10):
                    query = VectorStoreQuery(query_str=q, query_embedding=embed(q),
                                             similarity_top_k=k)
                    try:
                        res = reader.query(query)
                        got = [{"id": i, "score": float(sc)} for i, sc in
                               zip(res.ids, res.similarities, strict=True)]
                    except Warning:
                        got = []
                    preset = "llamaindex-lancedb" if qt == "vector" else \
                        "llamaindex-lancedb-hybrid"
                    sets = {"fetch.nprobes": nprobes, "fetch.refine_factor": refine or 0}
                    cases.append(case(f"{qt}_q{qi}_k{k}_n{nprobes}_r{refine}", preset, q, k,
                                      got, sets=sets))
    _write(out, {"system": "llama-index LanceDBVectorStore on IVF_PQ", "versions": _versions(),
                 "table": "vectors", "id_path": "id", "cases": cases}, qs)


LONG = ("which deploy runbook covers the payments service blue green rollout, the nightly "
        "postgres backup at two, the billing invoice on the first monday and the berlin "
        "flight for the march offsite, and who owns each of them this quarter please")


def record_crewai2(out: Path, seed: int) -> None:
    """CrewAI's MemorySlice over several scopes (deep and shallow), and deep recalls of a
    query of 200+ characters whose LLM call fails, on a store its LanceDBStorage wrote (the
    rows of record.crew_rows; a run of its own, with HOME and TMPDIR in a temporary folder)."""
    import datetime as dt
    import os
    import tempfile

    from record import NOW, crew_rows

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
    from crewai.memory.memory_scope import MemorySlice
    from crewai.memory.storage.lancedb_storage import LanceDBStorage
    from crewai.memory.types import MemoryRecord

    class FixedNow(dt.datetime):
        @classmethod
        def utcnow(cls) -> dt.datetime:  # type: ignore[override]
            return NOW

    ctypes.datetime = FixedNow

    class NoLLM:
        def call(self, *a: Any, **k: Any) -> str:
            raise RuntimeError("no LLM here")

    store = _fresh(out) / "store"
    storage = LanceDBStorage(path=str(store))
    rows = crew_rows()
    if seed:
        rng = random.Random(seed)
        rng.shuffle(rows)
    for part in (rows[:20], rows[20:]):
        storage.save([MemoryRecord(id=r["rid"], content=r["text"], scope=r["scope"],
                                   categories=r["categories"], metadata={"topic": r["topic"]},
                                   importance=r["importance"], created_at=r["created_at"],
                                   last_accessed=r["created_at"], embedding=embed(r["text"]),
                                   source=r["source"], private=r["private"]) for r in part])
    del storage
    mem = Memory(storage=LanceDBStorage(path=str(store)),
                 embedder=lambda texts: [embed(t) for t in texts], read_only=True)
    mem._llm_instance = NoLLM()
    qs = [*queries(seed)[:5], LONG]
    cases = []
    slices = [["/team-a", "/team-b"], ["/team-a/alice", "/teamwork"], ["/team", "/team-a"],
              ["/"], ["/team_x/", "/team-b/carol", "/team-a/bob"]]
    for qi, q in enumerate(qs):
        for limit in (3, 10):
            for depth in ("deep", "shallow"):
                for si, scopes in enumerate(slices):
                    for kw in ({}, {"include_private": True}):
                        sl = MemorySlice(memory=mem, scopes=scopes, read_only=True)
                        got = sl.recall(q, limit=limit, depth=depth, **kw)
                        sets: dict[str, Any] = {"slice.depth": depth, "slice.llm": "fails"}
                        if kw:
                            sets["slice.include_private"] = True
                        cases.append(case(
                            f"slice_q{qi}_l{limit}_{depth}_s{si}{'_priv' if kw else ''}",
                            "crewai-memory-slice", q, limit,
                            [{"id": m.record.id, "score": m.score} for m in got],
                            scopes=scopes, sets=sets))
        for limit in (3, 10):
            for scope in (None, "/team-a", "/team-a/alice", "/team"):
                got = mem.recall(q, scope=scope, limit=limit, depth="deep")
                cases.append(case(f"deep_q{qi}_l{limit}_{scope}", "crewai-memory-deep", q,
                                  limit, [{"id": m.record.id, "score": m.score} for m in got],
                                  scopes=[scope] if scope else None,
                                  sets={"search.llm": "fails"}))
    _write(out, {"system": "crewai Memory / MemorySlice", "versions": _versions(),
                 "table": "memories", "id_path": "id", "now": NOW.isoformat(),
                 "cases": cases}, qs)
    shutil.rmtree(work, ignore_errors=True)


RECORDERS = {"agno": record_agno, "langchain2": record_langchain2, "mem0": record_mem0,
             "llamaindex2": record_llamaindex2, "llamaindex_ivf": record_llamaindex_ivf,
             "crewai2": record_crewai2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "data"))
    ap.add_argument("--only", default=",".join(RECORDERS))
    ap.add_argument("--seed", type=int, default=0, help="0: the fixtures; N: a held-out store")
    a = ap.parse_args(argv)
    for name in a.only.split(","):
        RECORDERS[name](Path(a.out) / name, a.seed)
        print(f"recorded {name} into {Path(a.out) / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
