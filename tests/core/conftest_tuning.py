"""Fixtures for the tuning tests (sweeps, metrics, bundles, checks): real LanceDB in tmp dirs.

Import the fixtures into a test module with `from conftest_tuning import ...` (tests/core is
on sys.path under pytest's default import mode; tests/cli adds it explicitly).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.core.demo import build_demo


@pytest.fixture(autouse=True)
def _tuning_private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the user's cache or data folders, with or without the shared conftest."""
    if "INSPECTOR_CACHE_DIR" not in os.environ:
        monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "_cache"))
    if "INSPECTOR_DATA_DIR" not in os.environ:
        monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "_data"))


@pytest.fixture(scope="session")
def demo_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The deterministic demo store, written once per session (3022 rows, two stories)."""
    yield build_demo(tmp_path_factory.mktemp("tuning-demo") / "demo")


def write_store(path: Path, n: int = 240, dim: int = 8, seed: int = 3, repos: int = 5) -> Path:
    """n random rows over several repos; repo0 is rare (crowded out under a post-filter)."""
    rng = np.random.default_rng(seed)
    names = [f"repo{r}" for r in range(repos)]
    repo = [names[0] if i % 12 == 0 else names[1 + i % (repos - 1)] for i in range(n)]
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    imp = [None if i % 13 == 0 else round(float(rng.uniform(0, 1)), 3) for i in range(n)]
    words = ("keys", "tokens", "rotate", "deploy", "cache", "logs")
    table = pa.table({
        "id": [f"m{i:04d}" for i in range(n)],
        "text": [f"note {i} {words[i % 6]} {words[(i * 7) % 6]} {repo[i]}" for i in range(n)],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dim),
        "importance": pa.array(imp, pa.float64()),
        "repo": repo,
        "path": [f"{repo[i]}/docs/{i}.md" for i in range(n)],
    })
    db = lancedb.connect(str(path))
    db.create_table("memories", table)
    return path


@pytest.fixture
def small_store(tmp_path: Path) -> Path:
    return write_store(tmp_path / "small")
