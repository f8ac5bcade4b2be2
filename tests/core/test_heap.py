"""After a vector search of a large table the C heap's free memory goes back to the system
(glibc keeps what a flat search freed, and the next search's allocations stack on it): only
past TRIM_MIN_WORK rows x dimensions, where the trim costs a sliver of the search."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.core import heap
from inspector.core.engine import pools
from inspector.core.stores.opening import open_store
from tests.askkit import ask
from tests.storekit import write_tuning_store


def test_the_heap_is_trimmed_only_after_a_search_of_enough_work(monkeypatch) -> None:
    asked: list[int] = []
    monkeypatch.setattr(heap, "_malloc_trim", lambda: asked.append)
    assert heap.trim_after(heap.TRIM_MIN_WORK - 1) is False and asked == []
    assert heap.trim_after(heap.TRIM_MIN_WORK) is True and asked == [0]
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)  # no glibc: nothing to ask
    assert heap.trim_after(10 * heap.TRIM_MIN_WORK) is False


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's")
def test_glibc_s_trim_is_found_and_runs() -> None:
    trim = heap._malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)  # 1: memory was returned, 0: there was none to return


@pytest.fixture
def works(monkeypatch) -> list[int]:
    seen: list[int] = []
    monkeypatch.setattr(heap, "trim_after", lambda work: seen.append(work) or False)
    return seen


def test_a_fixed_pipeline_s_vector_fetch_reports_its_work(tmp_path: Path, works) -> None:
    from inspector.core.engine.flow.runner import PoolCache

    store = open_store(str(write_tuning_store(tmp_path / "s")))
    vector = [float(x) for x in np.random.default_rng(3).normal(size=store.dim)]
    pools.SOURCE.clear()
    ask(store, vector=vector, limit=5, cache=PoolCache())
    assert works and set(works) == {store.rows * store.dim}
    works.clear()
    ask(store, vector=vector, limit=5, blend=0.3, cache=PoolCache())  # the cached pool
    assert works == []


def test_a_stage_pipeline_s_vector_leg_reports_its_work(tmp_path: Path, works) -> None:
    from inspector.core.engine.flow.question import answer, make_question

    store = open_store(str(write_tuning_store(tmp_path / "s")))
    vector = [float(x) for x in np.random.default_rng(3).normal(size=store.dim)]
    q = make_question(store=str(store.uri), preset="memory-lancedb-pro", text="token",
                      vector=vector, limit=5)
    answer(q, store)
    assert store.rows * store.dim in works
