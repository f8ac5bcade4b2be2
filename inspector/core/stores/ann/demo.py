"""The demo store's indexed table: an agent's memories behind an IVF_PQ index that loses one.

Story 3 (lost to the index): table `memories_indexed` (6,000 memories, a trained IVF_PQ index)
answers an agent's question with LanceDB's default approximate search, as the memory plugins
do. The exact search ranks an in-scope memory near the top; the index does not return it. The
story is found when the table is built (index training is LanceDB's, so the lost row is read
off the built index, never assumed) and offered among the demo store's suggested queries (with
`"table": "memories_indexed"`) with the smallest fix.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.stores.embed import HashEmbedder

TABLE = "memories_indexed"
DIM = 64
ROWS = 6000
AGENTS = ("main", "ops", "research")
_TOPICS = {
    "travel": "flight hotel airport passport visa luggage train booking",
    "food": "vegetarian allergy peanuts dinner recipe coffee lunch spicy",
    "work": "standup deadline roadmap manager review sprint quarterly goals",
    "health": "doctor dentist appointment medication gym running sleep",
    "home": "rent landlord plumber garden furniture moving keys lease",
    "money": "budget invoice salary taxes savings refund subscription bank",
    "tech": "laptop editor theme terminal keyboard backup password monitor",
    "family": "birthday anniversary sister parents school kids gift wedding",
}
QUESTIONS = tuple(f"what did the user say about {w}" for t in _TOPICS.values()
                  for w in t.split()[:4])
LIMIT = 5
NPROBES_LADDER = (24, 32)  # the table has 32 partitions: 32 probes search them all
REFINE_LADDER = (2, 5, 10, 20)


def _rows() -> list[dict[str, Any]]:
    rng = random.Random(20261201)
    words = {k: v.split() for k, v in _TOPICS.items()}
    topics = list(words)
    rows = []
    for n in range(ROWS):
        main, other = rng.choice(topics), rng.choice(topics)
        text = " ".join(rng.sample(words[main], 4) + rng.sample(words[other], 2))
        rows.append({"id": f"mem-{n:05d}", "text": f"user note: {text}",
                     "importance": round(rng.uniform(0.05, 1.0), 2),
                     "category": rng.choice(("preference", "fact", "decision")),
                     "createdAt": 1_767_225_600_000.0 + n * 600_000.0,
                     "agentId": AGENTS[n % len(AGENTS)]})
    return rows


def _ids(tbl: Any, q: np.ndarray, exact: bool = False, **knobs: int) -> list[str]:
    s = tbl.search(q).where("agentId = 'main'", prefilter=True).select(["id"]).limit(LIMIT)
    if exact:
        s = s.bypass_vector_index()
    for name, value in knobs.items():
        s = getattr(s, name)(value)
    return s.to_arrow().column("id").to_pylist()


def find_story(tbl: Any, embed: HashEmbedder) -> dict[str, Any] | None:
    """The first question whose exact top 3 (agent main) holds a memory the default IVF_PQ
    search does not return, with the smallest nprobes or refine factor that returns it."""
    for text in QUESTIONS:
        q = embed.embed([text])[0]
        got, exact = _ids(tbl, q), _ids(tbl, q, exact=True)
        lost = [x for x in exact[:3] if x not in got]
        if not lost:
            continue
        steps = [("nprobes", v) for v in NPROBES_LADDER] + \
                [("refine_factor", v) for v in REFINE_LADDER]
        fix = next((f"--{k.replace('_', '-')} {v}" for k, v in steps
                    if lost[0] in _ids(tbl, q, **{k: v})), None)
        fix = f"{fix} brings it back, and --exact always does" if fix else "only --exact does"
        return {"name": "Lost to the index: an agent's memory IVF_PQ misses", "table": TABLE,
                "text": text, "preset": "memory-plugin", "scope": "main", "limit": LIMIT,
                "min_score": 0.0, "expect": [lost[0]],
                "story": (f"The exact search ranks {lost[0]} number "
                          f"{exact.index(lost[0]) + 1} for agent main, but LanceDB's default "
                          f"IVF_PQ search does not return it (diagnosis lost_to_index): "
                          f"{fix}.")}
    return None


def build_indexed(target: str | Path, meta_key: bytes, rows: pa.Table) -> list[dict[str, Any]]:
    """Write `memories_indexed` into the demo folder, train its IVF_PQ index, and return the
    suggested query its story makes (none if no question loses a row; see find_story). The
    story is read off the trained index, so it goes into the main table's metadata, which is
    written after this. `meta_key` is the schema metadata key the store reads (store.META_KEY,
    passed in: the store module depends on this package, not the other way); `rows` the
    table's rows without vectors (`_rows`, as the store module ships them)."""
    import lancedb
    from lancedb.index import IvfPq

    embed = HashEmbedder(dim=DIM)
    vectors = embed.embed(rows.column("text").to_pylist())
    vector = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)
    meta = {"embedder": {"name": embed.name, "dim": DIM}, "demo": True}
    data = rows.append_column("vector", vector).replace_schema_metadata(
        {meta_key: json.dumps(meta).encode()})
    Path(target).mkdir(parents=True, exist_ok=True)
    tbl = lancedb.connect(str(target)).create_table(TABLE, data, mode="overwrite")
    # 4-bit codes (16 centroids a sub-vector, not 256): LanceDB trains them in a fraction of
    # the CPU time, which a first launch spends beside the window's build on two cores (the
    # startup bench's first launch); the index still loses rows its refine factor brings
    # back, which is the story
    tbl.create_index("vector", config=IvfPq(num_partitions=32, num_sub_vectors=8,
                                            num_bits=4, sample_rate=64))
    story = find_story(tbl, embed)
    return [story] if story else []
