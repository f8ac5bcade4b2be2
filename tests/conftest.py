"""Shared fixtures: real LanceDB tables in temporary folders, and an app that never touches
the user's own cache, data or settings folders."""

from __future__ import annotations

import os

os.environ.setdefault("LANCEDB_LOG", "error")  # before lancedb loads: as the package itself does

from collections.abc import Callable  # noqa: E402
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from tests.storekit import write_table, write_tuning_store

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _private_app_dirs(tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache, data and settings (Qt's INI files live under XDG_CONFIG_HOME) go to a temporary
    folder in every test and every subprocess a test starts: the user's own are never read
    or written."""
    base = tmp_path_factory.mktemp("appdirs")
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))


@pytest.fixture
def make_store(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(10_000))

    def make(columns: dict[str, Any], name: str = "memories",
             schema: pa.Schema | None = None) -> Path:
        return write_table(tmp_path / f"store{next(counter)}", columns, name, schema)

    return make


@pytest.fixture
def random_store(make_store: Callable[..., Path]) -> Callable[..., Path]:
    """A store of n random rows over several repos, with importance, some of it missing."""

    def make(n: int = 300, dim: int = 8, seed: int = 0, repos: int = 6) -> Path:
        rng = np.random.default_rng(seed)
        names = [f"repo{r}" for r in range(repos)]
        imp = [None if i % 11 == 0 else float(rng.uniform(-0.2, 1.2)) for i in range(n)]
        return make_store({
            "id": [f"m{i:04d}" for i in range(n)],
            "text": [f"note {i} about {'keys' if i % 3 else 'tokens'} and {names[i % repos]}"
                     for i in range(n)],
            "vector": rng.normal(size=(n, dim)).astype(np.float32),
            "importance": pa.array(imp, pa.float64()),
            "category": ["fact"] * n,
            "repo": [names[int(rng.integers(repos))] for _ in range(n)],
            "path": [f"{names[i % repos]}/docs/{i}.md" for i in range(n)],
        })

    return make


@pytest.fixture(scope="session")
def demo_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The deterministic demo store, written once per session (3,022 rows, two stories)."""
    from inspector.core.stores.demo import build_demo

    return build_demo(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture
def small_store(tmp_path: Path) -> Path:
    """240 random rows over five repos; repo0 is rare (crowded out under a post-filter)."""
    return write_tuning_store(tmp_path / "small")
