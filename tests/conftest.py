"""Shared fixtures: real LanceDB tables in temporary folders, and an app that never touches
the user's own cache, data or settings folders."""

from __future__ import annotations

import os

os.environ.setdefault("LANCEDB_LOG", "error")  # before lancedb loads: as the package itself does

import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Hypothesis keeps no example database and its caches outside the checkout (it would write
# .hypothesis/ into it): each run draws afresh, as CI's clean clone does
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(
    tempfile.gettempdir(), f"inspector-tests-hypothesis-{os.getuid()}"))
from hypothesis import settings as hypothesis_settings  # noqa: E402 - after its folder is set

# numba's compiled scan kernels are kept in one folder for every test, worker and subprocess
# of the run (each test's own cache folder would compile them again, seconds a process),
# outside the checkout and the user's folders; test_kernels_cache checks where the app puts
# them when no folder is set
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(
    tempfile.gettempdir(), f"inspector-tests-numba-{os.getuid()}"))

hypothesis_settings.register_profile("inspector", database=None)
hypothesis_settings.load_profile("inspector")
# LanceDB, numpy and pyarrow load in the fixtures that use them, not here: this file also
# loads in pytest-xdist's controller, which would otherwise import them before any worker
# starts.


ROOT = Path(__file__).resolve().parent.parent
_SCHEME_FOLDER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@pytest.fixture(scope="session", autouse=True)
def _repository_root_untouched() -> Iterator[None]:
    """Nothing is left in the checkout's root: no `s3:`-like folder (what LanceDB creates when
    it takes an unparsable object-store URI for a local path, secrets included, issue 21), no
    cache or database of a test tool (.hypothesis/, .pytest_cache/), no file of any kind."""
    before = set(os.listdir(ROOT))
    yield
    made = sorted(set(os.listdir(ROOT)) - before)
    uris = [n for n in made if _SCHEME_FOLDER.fullmatch(n)]
    assert not uris, f"the tests created {uris} in {ROOT}: a store URI was opened as a path"
    assert not made, f"the tests left {made} in {ROOT}"


_APP_DIRS = ("INSPECTOR_CACHE_DIR", "INSPECTOR_DATA_DIR", "XDG_CONFIG_HOME")


@pytest.fixture(scope="session", autouse=True)
def _private_app_dirs_between_tests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The same folders for the whole session, set in the process itself: a worker thread a
    test left running (a window's job, a pool's build) that reads them after the test's own
    setting is undone writes to a temporary folder too, never to the user's cache."""
    base = tmp_path_factory.mktemp("appdirs-session")
    before = {name: os.environ.get(name) for name in _APP_DIRS}
    os.environ.update({"INSPECTOR_CACHE_DIR": str(base / "cache"),
                       "INSPECTOR_DATA_DIR": str(base / "data"),
                       "XDG_CONFIG_HOME": str(base / "config")})
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


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
    import pyarrow as pa

    from tests.storekit import write_table

    counter = iter(range(10_000))

    def make(columns: dict[str, Any], name: str = "memories",
             schema: pa.Schema | None = None) -> Path:
        return write_table(tmp_path / f"store{next(counter)}", columns, name, schema)

    return make


@pytest.fixture
def random_store(tmp_path: Path) -> Callable[..., Path]:
    """A store of n random rows over several repos, with importance, some of it missing
    (storekit.write_random_store)."""
    from tests.storekit import write_random_store

    counter = iter(range(10_000))

    def make(n: int = 300, dim: int = 8, seed: int = 0, repos: int = 6) -> Path:
        return write_random_store(tmp_path / f"random{next(counter)}", n, dim, seed, repos)

    return make


def _built_once(target: Path, build: Callable[[Path], Any], wait: float = 300.0) -> Path:
    """Build `target` once for every pytest-xdist worker of this run: the first worker takes
    a lock file and builds into a side folder that is renamed into place; the others wait for
    the folder to appear."""
    lock = target.with_name(target.name + ".lock")
    target.parent.mkdir(parents=True, exist_ok=True)
    end = time.monotonic() + wait
    while not target.exists():
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if time.monotonic() > end:
                raise TimeoutError(f"{target} was not built within {wait:.0f} s") from None
            time.sleep(0.05)
            continue
        try:
            if not target.exists():
                side = target.with_name(target.name + ".building")
                build(side)
                side.rename(target)
        finally:
            os.close(fd)
            os.unlink(lock)
    return target


@pytest.fixture(scope="session")
def data_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A data folder holding the demo store as a first launch writes it (unpacked as shipped:
    its rows, stories and indexed table), written once per run and shared by every worker:
    nothing writes to it."""
    from inspector.core.stores.demo import DEMO_VERSION, write_demo

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if worker_id != "master" else base
    _built_once(shared / "shared-data" / f"demo-store-v{DEMO_VERSION}", write_demo)
    return shared / "shared-data"


@pytest.fixture(scope="session")
def demo_path(data_root: Path) -> Path:
    """The demo store (built once per run)."""
    from inspector.core.stores.demo import DEMO_VERSION

    return data_root / f"demo-store-v{DEMO_VERSION}"


@pytest.fixture
def small_store(tmp_path: Path) -> Path:
    """240 random rows over five repos; repo0 is rare (crowded out under a post-filter)."""
    from tests.storekit import write_tuning_store

    return write_tuning_store(tmp_path / "small")
