"""The app's own folders are never the user's in a test run, also for fixtures wider than one
test: a module's store built once, and queried, before any test's own folders are set."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import platformdirs
import pytest

from inspector.core.stores.safety.cache import APP_NAME, cache_root


@pytest.fixture(scope="module")
def seen_by_a_module_fixture() -> dict[str, str | None]:
    """What a module-scoped fixture (a store built and searched once for the module) sees:
    it is set up before every function-scoped fixture, the per-test redirect included."""
    return {name: os.environ.get(name) for name in
            ("INSPECTOR_CACHE_DIR", "INSPECTOR_DATA_DIR", "XDG_CONFIG_HOME")} | {
        "cache_root": str(cache_root())}


def test_a_module_fixture_writes_its_cache_to_a_temporary_folder(
        seen_by_a_module_fixture: dict[str, str | None]) -> None:
    temp = Path(tempfile.gettempdir()).resolve()
    user_cache = Path(platformdirs.user_cache_dir(APP_NAME)).resolve()
    for name, value in seen_by_a_module_fixture.items():
        assert value, f"{name} is not redirected in a module-scoped fixture"
        where = Path(value).resolve()
        assert where.is_relative_to(temp), (name, where)
        assert not where.is_relative_to(user_cache), (name, where)
