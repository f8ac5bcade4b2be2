"""The bundled demo store tells both stories it promises."""

from __future__ import annotations

import pytest

from inspector.core.engine.flow.runner import PoolCache
from inspector.core.errors import InspectorError
from inspector.core.stores import demo as demo_module
from inspector.core.stores.demo import (
    BLEND_QUERY,
    SCOPE_QUERY,
    TIE_QUERY,
    build_demo,
    ensure_demo_store,
)
from inspector.core.stores.opening import open_store
from tests.askkit import ask, final_ids


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return open_store(str(build_demo(tmp_path_factory.mktemp("demo") / "store")))


def test_demo_is_large_varied_and_records_its_embedder(demo):
    assert 2000 <= demo.rows <= 5000
    assert len(demo.distinct("repo")) >= 12
    assert set(demo.distinct("category")) == {"preference", "fact", "decision", "entity", "other"}
    assert demo.embedder == {"name": "hash-v1", "dim": 256}
    assert demo.fts_index_column() == "text"
    assert [q["name"] for q in demo.suggested_queries] == [
        "Scoped miss: key rotation in vault-agent", "Importance: editor theme preference",
        "Tie: one memory saved twice", "Lost to the index: an agent's memory IVF_PQ misses"]


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_scoped_miss_story(demo, mode):
    cache = PoolCache()
    ask_ = lambda **kw: ask(demo, preset="docs-before-fix", text=SCOPE_QUERY,  # noqa: E731
                            scope="vault-agent", limit=10, mode=mode, cache=cache, **kw)
    before = ask(demo, preset="docs-before-fix", text=SCOPE_QUERY, scope="vault-agent",
                 limit=10, mode=mode, fixes=True)
    assert before.trace.stage("scope").rows == ()
    assert before.diagnosis.code == "filter_after_cut"
    at = {f: len(ask_(overfetch=f).trace.final.rows) for f in (1.0, 2.0, 2.5, 3.0)}
    assert at[1.0] == 0 and at[2.0] == 0 and at[2.5] >= 1 and at[3.0] >= 1
    pushed = ask_(filter="pushdown").trace
    assert pushed.stage("fetch").facts["depth"] == 10 and len(pushed.final.rows) == 10


def test_importance_story(demo):
    ask_ = lambda w: final_ids(demo, preset="importance-blend", text=BLEND_QUERY,  # noqa: E731
                               limit=5, min_score=0.0, blend=w, mode="vector")
    plain, blended = ask_(0.0), ask_(0.5)
    assert plain[:2] == ["agent-memory-theme-close", "agent-memory-theme-far"]
    assert blended[0] == "agent-memory-theme-far"
    assert blended.index("agent-memory-theme-close") > 0


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_the_scoped_miss_story_does_not_depend_on_tie_order(demo, mode):
    """The story's facts under either tie rule, and no in-scope row tied at a cut (so no
    other order LanceDB could return changes which rows an over-fetch returns)."""
    cache = PoolCache()

    def run(rule, **kw):
        return ask(demo, preset="docs-before-fix", text=SCOPE_QUERY, scope="vault-agent",
                   limit=10, mode=mode, tie_rule=rule, cache=cache, **kw).trace

    def facts(rule):
        first = next(d for d in range(10, 60)
                     if run(rule, overfetch=d / 10, cap=0).final.rows)
        return (first, tuple(frozenset(run(rule, overfetch=f).final.ids)
                             for f in (2.0, 2.5, 3.0)))

    got = {facts(rule) for rule in ("lancedb", "id")}
    assert len(got) == 1
    assert next(iter(got))[0] == (25 if mode == "hybrid" else 24)  # the docs quote hybrid's
    for f in (1.0, 2.0, 2.4, 2.5, 3.0):  # no in-scope row is ever tied at a cut
        t = run("lancedb", overfetch=f)
        out = {d.id for d in t.stage("scope").dropped if d.code == "out_of_scope"}
        scoped = set(t.stage("fetch").ids) - out
        assert not any(g.at_cut and scoped & set(g.ids) for g in t.ties)
    assert len({frozenset(run(rule, filter="pushdown").final.ids)
                for rule in ("lancedb", "id")}) == 1


def test_the_importance_story_does_not_depend_on_tie_order(demo):
    for w in (0.0, 0.5):
        got = {tuple(ask(demo, preset="importance-blend", text=BLEND_QUERY, limit=5,
                         min_score=0.0, blend=w, tie_rule=rule).trace.final.ids)
               for rule in ("lancedb", "id")}
        assert len(got) == 1
        t = ask(demo, preset="importance-blend", text=BLEND_QUERY, limit=5, min_score=0.0,
                blend=w).trace
        assert not any(g.at_cut for g in t.ties)


def test_the_tie_story_ties_at_the_cut_and_importance_breaks_it(demo):
    plain = ask(demo, preset="memory-plugin", text=TIE_QUERY, limit=1).trace
    one, two = "agent-memory-timezone-1", "agent-memory-timezone-2"
    assert plain.final.ids == [one]  # the lower row id, as LanceDB orders equal distances
    (cut,) = [g for g in plain.ties if g.at_cut]
    assert cut.ids == (one,) and cut.beyond == 1 and not cut.arbitrary
    blended = ask(demo, preset="importance-blend", text=TIE_QUERY, limit=1).trace
    assert blended.final.ids == [two]
    assert not any(g.at_cut for g in blended.ties)


def test_demo_is_deterministic_and_refuses_to_overwrite(tmp_path):
    a = open_store(str(build_demo(tmp_path / "a"))).table.to_arrow()
    b = open_store(str(build_demo(tmp_path / "b"))).table.to_arrow()
    assert a.equals(b)
    with pytest.raises(InspectorError, match="already exists and is not empty"):
        build_demo(tmp_path / "a")


def test_ensure_demo_store_builds_once_in_the_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    first = ensure_demo_store()
    assert first.parent == tmp_path / "data"
    mtime = (first / "memories.lance").stat().st_mtime_ns
    assert ensure_demo_store() == first
    assert (first / "memories.lance").stat().st_mtime_ns == mtime


def test_two_callers_at_once_write_the_demo_store_once(monkeypatch, tmp_path):
    """A first launch starts writing the demo store early (qt.app.write_demo_early) and the
    open job asks for it too: the second caller waits for the first one's store."""
    import threading
    import time

    from inspector.core.stores import demo as demo_module

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    calls = []
    real = demo_module.build_demo

    def slow_build(path, *args, **kwargs):
        calls.append(path)
        time.sleep(0.3)  # both callers are in before the first one's store is there
        return real(path, *args, **kwargs)

    monkeypatch.setattr(demo_module, "build_demo", slow_build)
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(ensure_demo_store()))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(calls) == 1
    assert got == [demo_module.demo_store_path()] * 2
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["demo-store-v2"]
    assert open_store(str(got[0])).rows == len(demo_module._rows())


def test_the_demo_store_is_not_mistaken_for_a_real_system(demo):
    from inspector.core.stores.shapes import detect_shape

    shape = detect_shape(demo)
    assert shape.preset is None and "demo" in shape.title


def test_the_shipped_rows_are_what_the_generators_make():
    """A first launch reads the demo tables' rows from resources/demo instead of making them:
    each file must hold exactly its generator's rows, types and order included."""
    generators = demo_module.row_generators()
    assert sorted(generators) == ["memories", "memories_indexed"]
    for table, make in generators.items():
        got = demo_module.shipped_rows(table)
        assert got is not None, f"resources/demo has no rows of {table}"
        made = demo_module.from_rows(make())
        assert got.schema.equals(made.schema) and got.equals(made), table
        assert got.num_rows == len(make()) and "vector" not in got.column_names


def test_write_rows_writes_the_shipped_files_again(tmp_path):
    """The documented command (docs/developer/layout.md), run as written but into a temporary
    folder: its files hold the shipped rows; a wrong call says how to call it."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "inspector.core.stores.demo", "--write-rows",
                           str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "memories.arrow", "memories_indexed.arrow"]
    for table in ("memories", "memories_indexed"):
        written = demo_module.read_rows_file(tmp_path / "out" / f"{table}.arrow")
        assert written is not None and written.equals(demo_module.shipped_rows(table))
        assert f"wrote {tmp_path / 'out' / f'{table}.arrow'}" in done.stdout
    wrong = subprocess.run([sys.executable, "-m", "inspector.core.stores.demo"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert wrong.returncode == 2 and "usage:" in wrong.stderr


def test_a_missing_or_damaged_rows_file_reads_as_none(tmp_path):
    """`demo.read_rows_file` gives None for a file that is not there or not an Arrow file, so
    the demo's generator makes the rows instead of the launch failing."""
    assert demo_module.read_rows_file(tmp_path / "absent.arrow") is None
    (tmp_path / "cut.arrow").write_bytes(b"ARROW1\x00\x00 not the rest of a file")
    assert demo_module.read_rows_file(tmp_path / "cut.arrow") is None
    good = demo_module.shipped_rows("memories")
    assert good is not None
    whole = (tmp_path / "whole")
    demo_module.write_rows(whole, {"memories": lambda: good.to_pylist()})
    assert demo_module.read_rows_file(whole / "memories.arrow").equals(good)


def test_a_demo_store_from_the_generators_equals_one_from_the_shipped_rows(monkeypatch,
                                                                           tmp_path):
    """Without the shipped files (a source tree missing them), the rows are made: the same
    tables either way (the index story is read off each store's own trained index)."""
    shipped = open_store(str(build_demo(tmp_path / "shipped")))
    calls = []
    monkeypatch.setattr(demo_module, "shipped_rows", lambda table: calls.append(table))
    made = open_store(str(build_demo(tmp_path / "made")))
    assert sorted(calls) == ["memories", "memories_indexed"]
    for table in ("memories", "memories_indexed"):
        a = open_store(str(tmp_path / "shipped"), table).table.to_arrow()
        b = open_store(str(tmp_path / "made"), table).table.to_arrow()
        assert a.equals(b), table
    assert shipped.rows == made.rows
