"""Each stage's one line, the stage that matters and the clock rule, on the store the plugin
wrote (its pg query: every kind of drop, re-scoring and re-ordering happens)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.engine.flow.live import LiveFlow
from inspector.core.engine.flow.question import Question
from inspector.core.engine.flow.spec import load_shipped
from inspector.core.engine.flow.summary import stage_that_matters, summarise, uses_clock
from inspector.core.stores.opening import open_for_browsing
from tests.core.engine.flow.fixtures import fixture_copy


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory):
    d = fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("mlp"))
    store = open_for_browsing(str(d / "store"), "memories", None).store
    vec = json.loads(Path(d / "q_pg.json").read_text())
    q = Question(store="s", preset="memory-lancedb-pro", text="postgres connection pool size",
                 vector=vec, scopes=["global", "agent:main", "reflection:agent:main"],
                 limit=5)
    return LiveFlow(store, q, 1796113042582).answer()


def test_each_stage_says_what_it_did_in_the_drop_codes_words(trace) -> None:
    lines = {st.name: summarise(st) for st in trace.stages}
    w = lines["rerank_window"]
    assert (w.count_in, w.count, w.drops) == (20, 10, (("outside_window", 10),))
    assert w.line == "kept 10 of 20 · dropped 10: 10 outside the window"
    assert lines["vector_leg"].line.startswith("fetched 20 · dropped 1: 1 inactive")
    assert lines["fused"].count_in is None and lines["fused"].line.startswith("fused 21")
    r = lines["rerank"]
    assert r.rescored == 10 and r.moved > 0 and "re-ordered" in r.line
    assert lines["mmr"].deferred == 1 and "deferred 1 to the end" in lines["mmr"].line
    assert lines["final"].line == "kept 5 of 8 · dropped 3: 3 past the limit"


def test_the_stage_that_matters_is_where_an_expected_row_fell_else_the_biggest_drop(
        trace) -> None:
    names = [s.name for s in trace.stages]
    assert names[stage_that_matters(trace)] == "rerank_window"
    fell = trace.stage("noise_filter").dropped[0].id
    assert names[stage_that_matters(trace, [fell])] == "noise_filter"
    returned = trace.final.ids[0]
    assert names[stage_that_matters(trace, [returned])] == "rerank_window"


def test_a_pipeline_reads_the_clock_when_a_stage_does() -> None:
    assert uses_clock(load_shipped("memory-lancedb-pro"))
    assert uses_clock(load_shipped("memory-lancedb-pro-cli"))
    spec = load_shipped("memory-lancedb-pro")
    assert spec.engine == "stages"


def test_a_run_seen_again_keeps_its_summaries(trace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A slider that comes back to a value gets the run it had there, and its stages'
    summaries are not counted again: the same objects; a run made anew (replace) is
    summarised anew, to the same counts; the kept summary is no field of the run."""
    from dataclasses import asdict, fields, replace

    from inspector.core.engine.flow import summary

    counted: list[object] = []
    real = summary._summarise
    monkeypatch.setattr(summary, "_summarise", lambda st: counted.append(st) or real(st))
    runs = [replace(st) for st in trace.stages]  # runs no other test summarised yet
    first = [summarise(st) for st in runs]
    assert counted == runs
    assert all(a is summarise(st) for a, st in zip(first, runs, strict=True))
    assert counted == runs  # nothing counted again
    copies = [replace(st) for st in runs]
    again = [summarise(st) for st in copies]
    assert again == first and not any(a is b for a, b in zip(again, first, strict=True))
    assert counted == runs + copies
    assert all(st == copy for st, copy in zip(runs, copies, strict=True))
    assert "_summary" not in {f.name for f in fields(runs[0])}
    assert "_summary" not in asdict(runs[0])
