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
    real = demo_module.unpack_store

    def slow_unpack(path, *args, **kwargs):
        calls.append(path)
        time.sleep(0.3)  # both callers are in before the first one's store is there
        return real(path, *args, **kwargs)

    monkeypatch.setattr(demo_module, "unpack_store", slow_unpack)
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


def test_write_writes_the_shipped_files_again(tmp_path):
    """The documented command (docs/developer/layout.md), run as written but into a temporary
    folder: its rows files hold the shipped rows and its packed store unpacks to the shipped
    store's tables; a wrong call says how to call it."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "inspector.core.stores.demo", "--write",
                           str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "memories.arrow", "memories_indexed.arrow", "store.tar.gz"]
    for name in ("memories.arrow", "memories_indexed.arrow", "store.tar.gz"):
        assert f"wrote {tmp_path / 'out' / name}" in done.stdout
    for table in ("memories", "memories_indexed"):
        written = demo_module.read_rows_file(tmp_path / "out" / f"{table}.arrow")
        assert written is not None and written.equals(demo_module.shipped_rows(table))
    assert demo_module.unpack_store(tmp_path / "new", tmp_path / "out" / "store.tar.gz")
    assert demo_module.unpack_store(tmp_path / "old")
    for table in ("memories", "memories_indexed"):
        _same_table(tmp_path / "new", tmp_path / "old", table)
    wrong = subprocess.run([sys.executable, "-m", "inspector.core.stores.demo", "--write-rows",
                            str(tmp_path / "x")], capture_output=True, text=True, env=env,
                           timeout=300)
    assert wrong.returncode == 2 and "usage:" in wrong.stderr and not (tmp_path / "x").exists()


def _same_table(a, b, table: str) -> None:
    """Both stores' `table` hold the same rows, vectors included, the same schema, the same
    embedder and flags, and indexes of the same kind on the same columns."""
    sa, sb = open_store(str(a), table), open_store(str(b), table)
    ta, tb = sa.table.to_arrow(), sb.table.to_arrow()
    assert ta.schema.equals(tb.schema) and ta.equals(tb), table
    assert sa.embedder == sb.embedder and sa.fts_index_column() == sb.fts_index_column()
    ia, ib = sa.vector_index, sb.vector_index
    assert (ia is None) == (ib is None)
    if ia is not None:
        assert (ia.type, ia.column, ia.metric, ia.sub_vectors, ia.num_bits, ia.indexed_rows) \
            == (ib.type, ib.column, ib.metric, ib.sub_vectors, ib.num_bits, ib.indexed_rows)


def test_the_shipped_store_is_what_the_demo_builds(tmp_path):
    """A first launch unpacks resources/demo/store.tar.gz instead of building the store: its
    tables must equal a fresh build's (rows, vectors, schema, indexes), and it suggests the
    same questions (the index story is read off its own index: the story test runs on it,
    test_demo_indexed.py)."""
    assert demo_module.shipped_store() is not None
    assert demo_module.unpack_store(tmp_path / "shipped")
    built = build_demo(tmp_path / "built")
    for table in ("memories", "memories_indexed"):
        _same_table(tmp_path / "shipped", built, table)
    shipped, made = open_store(str(tmp_path / "shipped")), open_store(str(built))
    fixed = demo_module.suggested_queries()
    assert shipped.suggested_queries[:len(fixed)] == made.suggested_queries[:len(fixed)] == fixed
    assert [q["table"] for q in shipped.suggested_queries[len(fixed):]] == ["memories_indexed"]
    assert sorted(p.name for p in (tmp_path / "shipped").iterdir()) == [
        "memories.lance", "memories_indexed.lance"]


def test_a_first_launch_unpacks_the_store_without_lancedb(tmp_path):
    """The early writer of a first launch (qt.app.write_demo_early) unpacks the store in a
    fresh process without importing lancedb (it built the store with it before: an import and
    an index training beside the window's build); the store is in the data folder."""
    import os
    import subprocess
    import sys

    code = ("import sys; from inspector.core.stores import demo; "
            "print(demo.unpack_demo_store()); print('lancedb' in sys.modules)")
    env = {**os.environ, "INSPECTOR_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    store = tmp_path / "data" / f"demo-store-v{demo_module.DEMO_VERSION}"
    assert done.stdout.split() == [str(store), "False"]
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [store.name]
    assert open_store(str(store)).rows == len(demo_module._rows())


def _archive(path, members) -> None:
    """A gzip'd tar of `members`: (name, bytes) for a file, (name, None) for a folder, (name,
    "->target") for a symbolic link."""
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(data, str):
                info.type, info.linkname = tarfile.SYMTYPE, data[2:]
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("members", [
    [("memories.lance", None), ("../outside.txt", b"x")],
    [("memories.lance", None), ("/tmp/absolute.txt", b"x")],
    [("memories.lance", None), ("memories.lance/link", "->/etc/passwd")],
    [("other.lance", None), ("other.lance/f", b"x")],
    [("memories.lance", None), ("memories.lance/f", b"x")],  # not a whole store
], ids=["dotdot", "absolute", "symlink", "foreign", "incomplete"])
def test_an_archive_holding_anything_but_the_demo_store_is_not_unpacked(tmp_path, members):
    """Nothing of a hostile or partial archive is left behind, inside the target or beside
    it; the caller then builds the store."""
    _archive(tmp_path / "a.tar.gz", members)
    target = tmp_path / "in" / "target"
    assert not demo_module.unpack_store(target, tmp_path / "a.tar.gz")
    assert not target.exists() and not (tmp_path / "in" / "outside.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz", "in"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not demo_module.unpack_store(empty, tmp_path / "a.tar.gz")
    assert empty.is_dir() and not any(empty.iterdir())


def test_a_damaged_or_missing_archive_makes_the_launch_build_the_store(tmp_path, monkeypatch):
    """A truncated archive is refused whole; without a usable shipped store the early writer
    writes nothing and ensure_demo_store builds it from the generators."""
    whole = demo_module.shipped_store().read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(whole[: len(whole) // 2])
    assert not demo_module.unpack_store(tmp_path / "t", tmp_path / "cut.tar.gz")
    assert not (tmp_path / "t").exists()
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(demo_module, "shipped_store", lambda: None)
    assert demo_module.unpack_demo_store() is None and not (tmp_path / "data").exists()
    built = []
    real = demo_module.build_demo
    monkeypatch.setattr(demo_module, "build_demo",
                        lambda path, *a, **k: built.append(path) or real(path, *a, **k))
    store = ensure_demo_store()
    assert len(built) == 1 and open_store(str(store)).rows == len(demo_module._rows())


def test_the_demo_command_writes_the_shipped_store_and_refuses_a_full_folder(tmp_path, capsys):
    """`inspector demo PATH` writes what a first launch unpacks; a folder with anything in it
    is left as it was."""
    from inspector.cli.main import main

    assert main(["demo", str(tmp_path / "d")]) == 0
    assert f"demo store written to {tmp_path / 'd'}" in capsys.readouterr().out
    assert demo_module.unpack_store(tmp_path / "ref")
    _same_table(tmp_path / "d", tmp_path / "ref", "memories")
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    assert main(["demo", str(full)]) != 0
    assert "already exists and is not empty" in capsys.readouterr().err
    assert [p.name for p in full.iterdir()] == ["keep.txt"]


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
