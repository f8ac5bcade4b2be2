"""Column roles inside a struct or a JSON-text column (`COLUMN.KEY`), on a table made here:
a struct field is read by LanceDB and pushed down as LanceDB SQL, compared with LanceDB's own
filtered search; a JSON-text key is parsed from the fetched rows; bad paths are one sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.opening import OpenOptions, open_for_browsing, open_store
from inspector.core.stores.roles import detect_roles
from tests.askkit import ask
from tests.storekit import snapshot

N, DIM = 60, 8
AGENTS = ("main", "helper", "o'neil")
SCOPES = ("proj", "", None, "other")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray, list[dict]]:
    rng = np.random.default_rng(11)
    vecs = rng.normal(size=(N, DIM)).astype(np.float32)
    rows = [{"agent": AGENTS[i % 3], "scope": SCOPES[i % 4], "weight": round((i % 9) / 8, 3),
             "when": f"2026-{1 + i % 12:02d}-0{1 + i % 9}T10:00:00"} for i in range(N)]
    meta_t = pa.struct([("agent", pa.utf8()), ("scope", pa.utf8()), ("weight", pa.float64()),
                        ("when", pa.utf8())])
    path = tmp_path_factory.mktemp("nested") / "store"
    lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": [f"m{i:02d}" for i in range(N)], "text": [f"memory {i}" for i in range(N)],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), DIM),
        "meta": pa.array(rows, meta_t),
        "meta_json": [json.dumps({"agent": r["agent"], "weight": r["weight"]}) for r in rows],
        "n": list(range(N))}))
    return path, vecs, rows


ROLES = {"agent": "meta.agent", "scope": "meta.scope"}


def _lancedb_ids(path: Path, q: np.ndarray, where: str, k: int) -> list[str]:
    tbl = lancedb.connect(str(path)).open_table("memories")
    return tbl.search(q).where(where, prefilter=True).limit(k).to_arrow().column("id") \
        .to_pylist()


@pytest.mark.parametrize("scope", ["main", "main/proj", "helper/other", "o'neil/proj", "x"])
def test_agent_and_scope_inside_a_struct_are_pushed_down_as_lancedb_sql(made: tuple,
                                                                        scope: str) -> None:
    path, vecs, _ = made
    before = snapshot(path)
    store = open_store(str(path), roles=ROLES)
    q = vecs[5]
    trace = ask(store, preset="openclaw-search-defaults", vector=q, limit=8, scope=scope,
                min_score=0.0).trace
    agent, _, sub = scope.partition("/")
    want = f"meta.agent = '{agent.replace(chr(39), chr(39) * 2)}'"
    if sub:
        want += f" AND (meta.scope = '{sub}' OR meta.scope = '' OR meta.scope IS NULL)"
    assert trace.final.ids == _lancedb_ids(path, q, want, 8)
    assert trace.stage("fetch").facts["pushdown_sql"].startswith("`meta`.`agent` = ")
    assert snapshot(path) == before


def test_a_struct_scope_column_post_filters_what_lancedb_would_post_filter(made: tuple) -> None:
    path, vecs, rows = made
    store = open_store(str(path))  # the scope column named as --scope-column does
    trace = ask(store, preset="memory-plugin", vector=vecs[0], limit=5, scope="proj",
                scope_strategy="column", filter="post", scope_column="meta.scope",
                overfetch=4.0, cap=0, min_score=0.0).trace
    tbl = lancedb.connect(str(path)).open_table("memories")
    theirs = tbl.search(vecs[0]).where("meta.scope = 'proj'", prefilter=False).limit(20) \
        .to_arrow().column("id").to_pylist()
    assert trace.stage("scope").ids == theirs and trace.final.ids == theirs[:5]


@pytest.mark.parametrize("where", ["meta.weight", "meta_json.weight"])
def test_importance_inside_a_struct_or_json_text_is_what_the_blend_uses(made: tuple,
                                                                        where: str) -> None:
    path, vecs, rows = made
    store = open_store(str(path), roles={"importance": where})
    trace = ask(store, preset="importance-blend", vector=vecs[3], limit=10, overfetch=3.0,
                cap=0, min_score=0.0).trace
    fetched = trace.stage("fetch").rows
    ids = [s.id for s in fetched]
    assert len(ids) == 30
    assert all(s.row.importance == rows[int(s.id[1:])]["weight"] for s in fetched)
    assert trace.final.ids != ids[:10], "the stored weights re-rank the pool"


def test_a_json_text_agent_is_a_post_filter_even_when_pushdown_is_asked(made: tuple) -> None:
    path, vecs, rows = made
    store = open_store(str(path), roles={"agent": "meta_json.agent"})
    trace = ask(store, preset="openclaw-search-defaults", vector=vecs[9], limit=6,
                scope="helper", overfetch=5.0, cap=0, min_score=0.0).trace
    fetch = trace.stage("fetch")
    assert fetch.facts["pushdown_sql"] is None and "no prefilter" in fetch.note \
        and "JSON text" in fetch.note
    tbl = lancedb.connect(str(path)).open_table("memories")
    top = tbl.search(vecs[9]).limit(30).to_arrow().column("id").to_pylist()
    assert fetch.ids == top
    assert trace.stage("scope").ids == [i for i in top if rows[int(i[1:])]["agent"] == "helper"]


def test_the_window_offers_the_values_of_a_nested_scope(made: tuple) -> None:
    path, _, _ = made
    opened = open_for_browsing(str(path), None, OpenOptions.make(roles={
        "agent": "meta_json.agent", "scope": "meta.scope"}))
    assert opened.scope_values["meta_json.agent"] == sorted(AGENTS)
    assert opened.scope_values["meta.scope"] == ["", "other", "proj"]


@pytest.mark.parametrize("roles,says", [
    ({"scope": "meta.nope"}, "has no field 'nope'; its fields: agent, scope, weight, when"),
    ({"importance": "meta.agent"}, "type string, which cannot serve as importance"),
    ({"scope": "n.key"}, "neither a struct nor JSON text"),
    ({"scope": "absent.key"}, "is not in the table; columns: id, text, vector, meta, meta_json, n "
                              "(a field inside one is COLUMN.KEY)"),
    ({"id": "meta.agent"}, "The id must be a column of its own"),
])
def test_a_bad_nested_role_is_one_sentence(made: tuple, roles: dict[str, str],
                                           says: str) -> None:
    path, _, _ = made
    schema = lancedb.connect(str(path)).open_table("memories").schema
    with pytest.raises(InspectorError, match=None) as exc:
        detect_roles(schema, roles)
    assert says in str(exc.value) and "\n" not in str(exc.value)


def test_a_struct_time_role_reads_iso_text(made: tuple) -> None:
    path, _, rows = made
    roles = detect_roles(lancedb.connect(str(path)).open_table("memories").schema,
                         {"created": "meta.when"})
    assert roles.created == "meta.when"
    store: Any = open_store(str(path), roles={"created": "meta.when"})
    trace = ask(store, preset="memory-plugin", vector=np.ones(DIM, np.float32), limit=3,
                min_score=0.0).trace
    fetched = trace.stage("fetch").rows
    assert fetched and [s.row.columns["meta.when"] for s in fetched] == \
        [rows[int(s.id[1:])]["when"] for s in fetched]


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray, list[list]]:
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(N, DIM)).astype(np.float32)
    tags = [["ops", "deploy"] if i % 3 == 0 else (["db"] if i % 3 == 1 else []) for i in range(N)]
    path = tmp_path_factory.mktemp("tagged") / "store"
    lancedb.connect(str(path)).create_table("vectorstore", pa.table({
        "id": [f"t{i:02d}" for i in range(N)], "text": [f"memory {i}" for i in range(N)],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), DIM),
        "tags": pa.array(tags, pa.list_(pa.utf8())),
        "meta": pa.array([{"tags": json.dumps(t)} for t in tags])}))
    return path, vecs, tags


@pytest.mark.parametrize("role", ["tags", "meta.tags"])
def test_list_membership_scopes_keep_the_rows_whose_list_holds_a_scope(tagged: tuple,
                                                                      role: str) -> None:
    """A list column, or a JSON list inside a struct: `--column scope=COL` with the fetch
    stage's scope_rule contains keeps the fetched rows whose list holds any given scope."""
    import inspector

    path, vecs, tags = tagged
    store = inspector.open(path, columns={"scope": role})
    r = store.query(vector=vecs[4], preset="langchain-lancedb", limit=5, scopes=["ops", "db"],
                    set={"fetch.scope_rule": "contains", "fetch.depth_factor": 4})
    tbl = lancedb.connect(str(path)).open_table("vectorstore")
    top = tbl.search(vecs[4]).limit(20).to_arrow().column("id").to_pylist()
    want = [i for i in top if {"ops", "db"} & set(tags[int(i[1:])])]
    assert [c["id"] for c in r.to_json()["stages"][-1]["candidates"]] == want
    if role == "tags":  # the fixed pipeline compares scalars: it says so for a list column
        with pytest.raises(InspectorError, match="holds lists: list membership runs in"):
            ask(store.engine_store, preset="memory-plugin", vector=vecs[4], limit=5,
                scope="ops", scope_strategy="column", scope_column=role, min_score=0.0)


def test_roles_as_a_dict_are_a_fresh_copy_each_time() -> None:
    # the dict is made once per Roles and handed out as a copy: a caller's change to its copy
    # never reaches the next caller, and a Roles made by replace() has its own
    from dataclasses import replace

    from inspector.core.stores.roles import Roles

    r = Roles(id="id", text="text", scope="scope")
    first = r.as_dict()
    first["scope"] = "changed"
    assert r.as_dict()["scope"] == "scope"
    assert replace(r, scope="agent").as_dict()["scope"] == "agent"
    assert r == Roles(id="id", text="text", scope="scope")  # the memo is not a field
