"""Record what Cognee's LanceDB adapter returns (cognee 1.6.5, which pins lancedb 0.39.0):
its own LanceDBAdapter writes the `DocumentChunk_text` collection as cognee's indexing does
(IndexSchema rows: id, vector, a payload struct with text and belongs_to_set), and its own
`search` answers (cosine distance as the score, limit, the node_name set filter with OR and
AND). Same case format as record_round2.py; check_recorded.py runs the preset on it.

    python tests/frameworks/record_cognee.py [--out DIR] [--seed N]

Cognee's adapter hangs on a first write to a missing collection: create_data_points takes its
VECTOR_DB_LOCK (an asyncio.Lock, not re-entrant) and, under it, calls create_collection, which
takes the same lock again. So the collection is created first (create_collection with
IndexSchema), then index_data_points writes into it: the smallest route through its own code
that runs. Needs an interpreter with cognee installed (a virtualenv of its own: it pins
lancedb 0.39), e.g. `python3 -m venv /tmp/cg && /tmp/cg/bin/pip install cognee==1.6.5`.
No LLM and no network: the embedding engine is record.embed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import embed  # noqa: E402
from record_round2 import case, corpus, queries  # noqa: E402

HERE = Path(__file__).resolve().parent


class Embedding:
    """A deterministic embedding engine with the methods the adapter calls."""

    async def embed_text(self, texts: list[str]) -> list[list[float]]:
        return [embed(t) for t in texts]

    def get_vector_size(self) -> int:
        return len(embed("x"))

    def get_batch_size(self) -> int:
        return 100


async def _record(store: Path, seed: int) -> dict[str, Any]:
    from cognee.infrastructure.databases.vector.lancedb.LanceDBAdapter import (
        IndexSchema,
        LanceDBAdapter,
    )
    from cognee.modules.chunking.models.DocumentChunk import DocumentChunk
    from cognee.modules.data.processing.document_types import TextDocument

    rows = corpus(seed)
    doc = TextDocument(id=uuid.uuid5(uuid.NAMESPACE_OID, "doc"), name="notes",
                       raw_data_location="/notes.txt", external_metadata=None,
                       mime_type="text/plain")
    chunks = [DocumentChunk(id=uuid.uuid5(uuid.NAMESPACE_OID, r["rid"]), text=r["text"],
                            chunk_size=len(r["text"].split()), chunk_index=i, cut_type="line",
                            is_part_of=doc, belongs_to_set=[r["user_id"] or "shared",
                                                            r["topic"]])
              for i, r in enumerate(rows)]
    names = {str(c.id): r["rid"] for c, r in zip(chunks, rows, strict=True)}
    ad = LanceDBAdapter(url=str(store), api_key=None, embedding_engine=Embedding())
    await ad.create_collection("DocumentChunk_text", IndexSchema)
    half = len(chunks) // 2
    await ad.index_data_points("DocumentChunk", "text", chunks[:half])
    await ad.index_data_points("DocumentChunk", "text", chunks[half:])
    qs = queries(seed)
    cases = []
    sets_of: list[tuple[str, list[str] | None, str]] = [
        ("none", None, "OR"), ("u1", ["u1"], "OR"), ("u1_or_deploy", ["u1", "deploy"], "OR"),
        ("u1_and_deploy", ["u1", "deploy"], "AND")]
    for qi, q in enumerate(qs):
        for limit in (3, 15, None):
            for sname, node_name, op in sets_of:
                got = await ad.search("DocumentChunk_text", query_vector=embed(q), limit=limit,
                                      node_name=node_name, node_name_filter_operator=op)
                sets: dict[str, Any] = {"fetch.scope_rule": "set_all"} if op == "AND" else {}
                if limit is None:
                    sets["fetch.all_rows"] = True
                cases.append(case(f"q{qi}_l{limit}_{sname}", "cognee", q, limit or 15,
                                  [{"id": str(r.id), "score": r.score,
                                    "rid": names[str(r.id)]} for r in got],
                                  text=False, scopes=node_name, sets=sets))
    return {"cases": cases, "queries": qs}


def record_cognee(out: Path, seed: int) -> None:
    from importlib.metadata import version

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="cognee-rec-"))
    os.environ.setdefault("SYSTEM_ROOT_DIRECTORY", str(work / "system"))
    os.environ.setdefault("DATA_ROOT_DIRECTORY", str(work / "data"))
    got = asyncio.run(_record(out / "store", seed))
    vers = {n: version(n) for n in ("cognee", "lancedb", "pylance")}
    doc = {"system": "cognee LanceDBAdapter", "versions": vers, "table": "DocumentChunk_text",
           "id_path": "id", "cases": got["cases"],
           "vectors": {q: embed(q) for q in got["queries"]}}
    (out / "cases.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "data"))
    ap.add_argument("--seed", type=int, default=0, help="0: the fixture; N: a held-out store")
    a = ap.parse_args(argv)
    record_cognee(Path(a.out) / "cognee", a.seed)
    print(f"recorded cognee into {Path(a.out) / 'cognee'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
