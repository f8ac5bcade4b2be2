"""Column roles inside struct and JSON-text columns (`--column scope=metadata.user_id`), on
the stores LangChain, LlamaIndex and CrewAI wrote themselves (tests/frameworks/data): through
a pipeline of stages they equal the package's own filtered search; through the classic
pipeline (LanceDB's own search, pipeline lancedb) they equal LanceDB's own filtered search
(prefilter for a pushdown, post-filter otherwise), a JSON-text key parsed from the fetched
rows and never pushed down. Answers in schema 3 (scope_rule, fetch, scope, blend, final)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inspector.cli.main import main
from inspector.core.errors import InspectorError
from tests.frameworks.test_recorded import DATA, _cases, same
from tests.storekit import snapshot


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("nested-roles")
    for system in ("crewai", "langchain", "llamaindex"):
        shutil.copytree(DATA / system / "store", base / system)
    return {s: base / s for s in ("crewai", "langchain", "llamaindex")}


def _user(where: str | None) -> str | None:
    """'u1' for the recorded filter "metadata.user_id = 'u1'" (the dict filter {user_id: u1})."""
    prefix = "metadata.user_id = '"
    if where and where.startswith(prefix) and where.endswith("'") and " " not in where[20:]:
        return where[len(prefix):-1]
    return None


def _ask(path: Path, table: str, preset: str, case: dict[str, Any], limit: int,
         scopes: list[str], sets: dict[str, Any]) -> list[tuple[str, float]]:
    import inspector

    store = inspector.open(path, table, columns={"scope": "metadata.user_id"})
    r = store.query(vector=case["vector"], preset=preset, limit=limit, scopes=scopes, set=sets)
    return [(c["id"], c["score"]) for c in r.to_json()["stages"][-1]["candidates"]]


LANGCHAIN = [c for c in _cases("langchain") if _user(c["filter"])]
LLAMAINDEX = [c for c in _cases("llamaindex") if _user(c["where"])]


@pytest.mark.parametrize("case", LANGCHAIN, ids=lambda c: c["name"])
def test_langchain_scope_in_its_metadata_struct_equals_the_package(copies: dict[str, Path],
                                                                   case: dict[str, Any]) -> None:
    """LangChain's filter={"user_id": u} as a scope role on the struct field: post-filtered
    by LanceDB after the top-k cut (prefilter=True when the caller passed it)."""
    sets = {"fetch.prefilter": True} if case["prefilter"] else {}
    same(_ask(copies["langchain"], "vectorstore", "langchain-lancedb", case, case["k"],
              [_user(case["filter"])], sets), case["results"], case["name"])


@pytest.mark.parametrize("case", LLAMAINDEX, ids=lambda c: c["name"])
def test_llamaindex_scope_in_its_metadata_struct_equals_the_package(
        copies: dict[str, Path], case: dict[str, Any]) -> None:
    sets = {"fetch.depth_factor": case["overfetch_factor"]}
    same(_ask(copies["llamaindex"], "vectors", "llamaindex-lancedb", case, case["k"],
              [_user(case["where"])], sets), case["results"], case["name"])


def _fixed(capsys: pytest.CaptureFixture[str], path: Path, table: str, vec: list[float],
           *extra: str) -> dict[str, Any]:
    capsys.readouterr()
    code = main(["query", str(path), "--table", table, "--vector", json.dumps(vec),
                 "--limit", "4", "--overfetch", "3", "--cap", "0", "--json", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _ids(answer: dict[str, Any], stage: str) -> list[str]:
    return [c["id"] for s in answer["stages"] if s["name"] == stage for c in s["candidates"]]


def _stage(answer: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in answer["stages"] if s["name"] == name)


@pytest.mark.parametrize("user", ["u1", "u3", "nobody"])
@pytest.mark.parametrize("placement", ["pushdown", "post"])
def test_classic_pipeline_struct_scope_equals_lancedbs_own_filtered_search(
        copies: dict[str, Path], capsys: pytest.CaptureFixture[str], user: str,
        placement: str) -> None:
    import lancedb

    path = copies["langchain"]
    before = snapshot(path)
    vec = LANGCHAIN[0]["vector"]
    got = _fixed(capsys, path, "vectorstore", vec, "--column", "scope=metadata.user_id",
                 "--scope-strategy", "column", "--scope", user, "--filter", placement)
    tbl = lancedb.connect(str(path)).open_table("vectorstore")
    theirs = (tbl.search(np.asarray(vec, np.float32)).where(
        f"metadata.user_id = '{user}'", prefilter=placement == "pushdown").limit(12)
        .to_arrow().column("id").to_pylist())
    assert _ids(got, "scope") == theirs
    assert _ids(got, "final") == theirs[:4]
    push = _stage(got, "fetch")["facts"]["pushdown_sql"]
    assert push == (f"`metadata`.`user_id` IN ('{user}')" if placement == "pushdown" else None)
    assert snapshot(path) == before


def test_classic_pipeline_importance_from_a_struct_field_is_blended(
        copies: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    import lancedb

    path = copies["langchain"]
    vec = LANGCHAIN[0]["vector"]
    got = _fixed(capsys, path, "vectorstore", vec, "--column", "importance=metadata.priority",
                 "--blend", "0.5")
    rows = lancedb.connect(str(path)).open_table("vectorstore").to_arrow().to_pylist()
    priority = {r["id"]: r["metadata"]["priority"] for r in rows}
    blended = _stage(got, "blend")["candidates"]
    assert len(blended) == 12
    for c in blended:
        used = min(max(float(priority[c["id"]]), 0.0), 1.0)
        assert c["inputs"]["importance"] == used and c["inputs"]["multiplier"] == 0.5 + 0.5 * used
        assert c["score"] == c["inputs"]["vector"] * (0.5 + 0.5 * used)


@pytest.mark.parametrize("placement", ["pushdown", "post"])
def test_classic_pipeline_json_text_scope_is_parsed_and_never_pushed_down(
        copies: dict[str, Path], capsys: pytest.CaptureFixture[str], placement: str) -> None:
    """CrewAI keeps metadata as JSON text: a key inside it is read from the fetched rows, so
    the scope is a post-filter whatever the placement asked (and the answer says so)."""
    import lancedb

    path = copies["crewai"]
    vec = _cases("crewai")[0]["vector"]
    got = _fixed(capsys, path, "memories", vec, "--column", "scope=metadata_str.topic",
                 "--scope-strategy", "column", "--scope", "deploy", "--filter", placement)
    tbl = lancedb.connect(str(path)).open_table("memories")
    top = tbl.search(np.asarray(vec, np.float32)).limit(12).to_arrow().to_pylist()
    want = [r["id"] for r in top if json.loads(r["metadata_str"]).get("topic") == "deploy"]
    assert want and _ids(got, "scope") == want
    fetch = _stage(got, "fetch")
    assert fetch["facts"]["pushdown_sql"] is None
    assert placement == "post" or "JSON text" in fetch["note"]


def test_a_pipeline_that_reads_its_own_columns_refuses_a_role(copies: dict[str, Path]) -> None:
    import inspector

    store = inspector.open(copies["crewai"], "memories", columns={"scope": "metadata_str.topic"})
    with pytest.raises(InspectorError, match="crewai-memory reads its scope where its system"):
        store.query(vector=_cases("crewai")[0]["vector"], preset="crewai-memory",
                    scopes=["deploy"])


def test_the_command_line_takes_the_role_for_a_pipeline_of_stages(
        copies: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert len(LLAMAINDEX) >= 20 and {c["prefilter"] for c in LANGCHAIN} == {True, False}
    case = next(c for c in LANGCHAIN if not c["prefilter"])
    vec = tmp_path / "q.json"
    vec.write_text(json.dumps(case["vector"]))
    capsys.readouterr()
    code = main(["query", str(copies["langchain"]), "--preset", "langchain-lancedb",
                 "--vector", f"@{vec}", "--limit", str(case["k"]), "--column",
                 "scope=metadata.user_id", "--scope", _user(case["filter"]), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    final = json.loads(out)["stages"][-1]["candidates"]
    same([(c["id"], c["score"]) for c in final], case["results"], case["name"])


def test_the_scope_audit_reads_the_scope_where_the_role_says(
        copies: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """`inspector audit scopes --column scope=metadata.user_id` on LangChain's store: every
    user's memories probed in their own scope; LangChain's post-filter starves the probes and
    pushing the scope down ends it."""
    import lancedb

    path = copies["langchain"]
    capsys.readouterr()
    code = main(["audit", "scopes", str(path), "--preset", "langchain-lancedb", "--column",
                 "scope=metadata.user_id", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = {s["scope"]: s for s in json.loads(out)["scopes"]}
    rows = lancedb.connect(str(path)).open_table("vectorstore").to_arrow().to_pylist()
    users: dict[str, int] = {}
    for r in rows:
        users[r["metadata"]["user_id"]] = users.get(r["metadata"]["user_id"], 0) + 1
    assert {u: s["memories"] for u, s in got.items()} == users
    assert all(s["probes"] == min(10, s["memories"]) for s in got.values())
    assert sum(s["short"] for s in got.values()) > 0
    assert all(s["ended_by_pushdown"] == s["short"] for s in got.values())
