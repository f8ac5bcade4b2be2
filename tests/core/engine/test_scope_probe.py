"""A post-filter scope miss on an ANN index: the default answer is one search (the deeper
probe for the diagnosis's depth hint runs only when asked, and the trace says so), the answer
itself is the same either way, and the window's live session follows the same rule."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.cli.main import main
from inspector.core.engine.live import LiveSession
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run
from inspector.core.engine.pool import Query
from inspector.core.stores.opening import open_store
from tests import indexkit
from tests.storekit import CountingTable

MISS = Params(limit=10, scope=indexkit.RARE, scope_strategy="column", scope_column="agentId",
              filter="post")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(indexkit.build(tmp_path_factory.mktemp("probe") / "ivf", "IVF_PQ"))


def _counted(folder: str) -> tuple[Any, CountingTable]:
    store = open_store(folder)
    store.table = CountingTable(store.table)
    return store, store.table


def test_default_answer_is_one_search_and_says_the_probe_did_not_run(folder) -> None:
    query = Query(vector=indexkit.queries(1)[0], source="vector")
    store, table = _counted(folder)
    auto = run(store, query, MISS)
    assert table.searches == 1
    assert auto.counters["filteredByScope"] * 2 > auto.counters["rawCandidates"]  # a miss
    assert any("--scope-probe on" in w for w in auto.warnings)
    assert "first enters the pool at depth" not in auto.diagnosis.message
    store, table = _counted(folder)
    asked = run(store, query, MISS, probe="on")
    assert table.searches == 2
    assert not any("--scope-probe" in w for w in asked.warnings)
    assert "global candidates" in asked.diagnosis.message or \
        "enters the pool at depth" in asked.diagnosis.message or \
        "in scope needs" in asked.diagnosis.message
    for stage in ("raw", "scoped", "blended", "final"):  # the answer is the same
        assert auto.ids(stage) == asked.ids(stage)


def test_live_session_defers_the_probe_as_run_does(folder) -> None:
    query = Query(vector=indexkit.queries(2)[1], source="vector")
    store, table = _counted(folder)
    session = LiveSession.fetch(store, query, MISS)
    fetched = table.searches
    (trace,) = session.traces(MISS)
    want = run(open_store(folder), query, MISS)
    assert trace.warnings == want.warnings
    assert trace.diagnosis == want.diagnosis
    # the pool, and the exact search of the index facet: no 1,000-deep probe
    assert fetched == 2


def test_query_command_probes_when_asked(folder, capsys) -> None:
    vec = json.dumps([float(x) for x in indexkit.queries(1)[0]])
    base = ["query", folder, "--vector", vec, "--scope", indexkit.RARE, "--scope-strategy",
            "column", "--scope-column", "agentId", "--filter", "post", "--json",
            "--index-facet", "off"]
    assert main(base) == 0
    auto = json.loads(capsys.readouterr().out)
    assert main([*base, "--scope-probe", "on"]) == 0
    asked = json.loads(capsys.readouterr().out)
    assert "--scope-probe on" in json.dumps(auto)
    assert "--scope-probe on" not in json.dumps(asked)
    assert auto["diagnosis"] != asked["diagnosis"]
