"""Benchmark stores: random rows written in batches, cached under bench/.data between runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa

DATA = Path(__file__).resolve().parent / ".data"
REPOS = [f"repo-{i:02d}" for i in range(16)]
WORDS = ("key token rotate deploy cache index search memory agent scope vault billing "
         "invoice theme editor queue worker schedule export import").split()


def _batch(start: int, n: int, dim: int, rng: np.random.Generator) -> pa.Table:
    ids = [f"row-{i:08d}" for i in range(start, start + n)]
    repo_idx = rng.integers(0, len(REPOS), n)
    words = rng.integers(0, len(WORDS), (n, 6))
    texts = [" ".join(WORDS[w] for w in row) for row in words]
    vec = rng.normal(size=(n, dim)).astype(np.float32)
    imp = rng.uniform(0, 1, n)
    imp[rng.random(n) < 0.05] = np.nan
    return pa.table({
        "id": ids, "text": texts,
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), dim),
        "importance": pa.array(imp, pa.float64(), from_pandas=True),
        "category": ["fact"] * n,
        "createdAt": np.arange(start, start + n, dtype=np.float64) * 1000.0,
        "repo": [REPOS[i] for i in repo_idx],
        "path": [f"{REPOS[i]}/docs/{j}.md" for i, j in zip(repo_idx, range(start, start + n),
                                                            strict=True)],
    })


def bench_store(rows: int, dim: int, fts: bool = True) -> Path:
    """A store of `rows` random rows (built once, reused); FTS-indexed when asked."""
    path = DATA / f"store-{rows}x{dim}{'-fts' if fts else ''}"
    if (path / "READY").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    rng = np.random.default_rng(rows + dim)
    db = lancedb.connect(str(path))
    step = 100_000
    tbl = db.create_table("memories", _batch(0, min(step, rows), dim, rng))
    for start in range(step, rows, step):
        tbl.add(_batch(start, min(step, rows - start), dim, rng))
    if fts:
        from lancedb.index import FTS

        tbl.create_index("text", config=FTS())
    (path / "READY").write_text("ok\n")
    return path


def question_for(store: Any, preset: str = "lancedb", text: str | None = None,
                 vector: Any = None, limit: int = 10, scope: str | None = None,
                 **options: Any) -> Any:
    """The one engine's question of a classic preset with options by their command-line
    names (--overfetch 2.5 is fetch.overfetch=2.5), as `inspector query` asks it."""
    from inspector.core.engine.flow.question import make_question
    from inspector.core.engine.flow.spec import held_options, load_shipped

    held = held_options(load_shipped(preset), options)
    return make_question(store=str(store.uri), preset=preset, text=text,
                         vector=None if vector is None else [float(x) for x in vector],
                         limit=limit, scopes=None if scope is None else [scope],
                         set={k: v for one in held.values() for k, v in one.items()})
