"""A second process writes to the store while the inspector has it open."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_store
from tests.askkit import ask, final_ids

_WRITER = textwrap.dedent("""
    import sys, time, lancedb, numpy as np, pyarrow as pa
    rounds, jobs = int(sys.argv[1]), sys.argv[2:]  # PATH ACTION pairs, one after the other
    for path, action in zip(jobs[::2], jobs[1::2]):
      tbl = lancedb.connect(path).open_table("memories")
      dim = tbl.schema.field("vector").type.list_size
      rng = np.random.default_rng(99)
      for r in range(rounds):
          if action in ("add", "mixed"):
              vec = rng.normal(size=(20, dim)).astype(np.float32) * 0.01  # very close to 0
              tbl.add(pa.table({"id": [f"new{r}-{i}" for i in range(20)], "text": ["new"] * 20,
                  "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), dim),
                  "importance": pa.array([1.0] * 20, pa.float64()), "category": ["fact"] * 20,
                  "repo": ["repo1"] * 20, "path": ["repo1/new"] * 20}))
          if action in ("delete", "mixed"):
              tbl.delete(f"id = 'm{r:04d}'")
          if action == "overwrite":
              tbl.update(where="true", values={"importance": 0.0})
          time.sleep(0.01)
""")


def _write(jobs: list[tuple[Path, str]], rounds: int = 3) -> None:
    """One writer process makes every (store, action) change, one store after the other."""
    args = [str(x) for path, action in jobs for x in (path, action)]
    subprocess.run([sys.executable, "-c", _WRITER, str(rounds), *args], check=True,
                   timeout=120)


ORIGIN = {"vector": np.zeros(8, np.float32), "text": "note keys"}


ACTIONS = ("add", "delete", "overwrite", "mixed")
PINNED = {"limit": 10, "blend": 0.5, "scope": "repo1"}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    """Per action: a store opened and queried, then changed by another process (one writer
    process for all four stores)."""
    from tests.storekit import write_random_store

    opened = {}
    for action in ACTIONS:
        path = write_random_store(tmp_path_factory.mktemp(action) / "store", n=200)
        store = open_store(str(path))
        opened[action] = (path, store, ask(store, **ORIGIN, **PINNED).trace)
    _write([(path, action) for action, (path, _s, _b) in opened.items()])
    return {action: (store, before) for action, (_p, store, before) in opened.items()}


@pytest.mark.parametrize("action", ACTIONS)
def test_answers_stay_on_the_pinned_version_until_a_refresh(written, action):
    store, before = written[action]
    p = PINNED
    after = ask(store, **ORIGIN, **p).trace
    assert after.final.ids == before.final.ids
    assert [s.score for s in after.final.rows] == [s.score for s in before.final.rows]
    assert store.has_newer()
    fresh = store.reopen()
    assert fresh.version > store.version
    moved = ask(fresh, **ORIGIN, **p).trace
    if action in ("add", "mixed"):
        assert all(i.startswith("new") for i in moved.final.ids)
        assert fresh.rows > store.rows
    if action == "overwrite":
        assert all(dict(s.inputs)["multiplier"] == 0.5 for s in moved.final.rows)


def test_queries_keep_working_while_a_writer_runs(random_store):
    path = random_store(n=300)
    store = open_store(str(path))
    p = {"mode": "hybrid", "limit": 10, "overfetch": 3, "scope": "repo2"}
    want = final_ids(store, **ORIGIN, **p)
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, "40", str(path), "mixed"])
    try:
        deadline = time.monotonic() + 60
        runs = 0
        while writer.poll() is None and time.monotonic() < deadline:
            assert final_ids(store, **ORIGIN, **p) == want
            runs += 1
        assert runs >= 1
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0
    assert store.reopen().rows == 300 + 40 * 20 - 40


def test_a_store_deleted_while_open_gives_a_clear_error(random_store):
    import shutil

    path = random_store(n=100)
    store = open_store(str(path))
    shutil.rmtree(path)
    with pytest.raises(InspectorError, match="LanceDB could not search table 'memories'"):
        ask(store, vector=np.ones(8, np.float32), text="x", limit=5)
    with pytest.raises(InspectorError, match="does not exist"):
        store.reopen()
    assert not path.exists()
