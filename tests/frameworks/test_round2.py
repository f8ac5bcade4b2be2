"""Round two's presets equal the packages on the stores the packages wrote: Agno's knowledge
search (vector, keyword, hybrid), LangChain's with_score / search / by-vector / MMR / fts
calls, LlamaIndex's fts and hybrid query types, Mem0 through its langchain provider, Cognee's
LanceDB adapter (tests/frameworks/data/{agno,langchain2,llamaindex2,mem0,cognee}, recorded by
record_round2.py and record_cognee.py; the same check as check_recorded.py, which also runs
held-out recordings)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.frameworks import check_recorded as chk

DATA = Path(__file__).resolve().parent / "data"
SYSTEMS = ("agno", "langchain2", "mem0", "llamaindex2", "llamaindex_ivf", "crewai2",
           "cognee")


def _cases() -> list[tuple[str, dict[str, Any]]]:
    return [(s, c) for s in SYSTEMS for c in chk.load(DATA, s)["cases"]]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("round2")
    return {s: chk.open_copy(DATA, s, base) for s in SYSTEMS}


@pytest.mark.parametrize(("system", "case"), _cases(), ids=lambda x: x if isinstance(x, str)
                         else x["name"])
def test_each_preset_equals_the_package(stores: dict[str, Any], system: str,
                                        case: dict[str, Any]) -> None:
    assert chk.differs(stores[system], chk.load(DATA, system), case) is None


def test_the_recordings_hold_the_quirks_the_presets_exist_for() -> None:
    agno = {c["name"]: c for c in chk.load(DATA, "agno")["cases"]}
    # equal BM25 scores (four permutations of one text) in LanceDB's own order, not by row
    tied = [r["id"] for r in agno["keyword_q5_l10_all_none"]["results"]][:4]
    assert sorted(tied) == ["t0", "t1", "t2", "t3"] and tied != sorted(tied)
    # the meta_data post-filter after the cut starves; two stored copies fold into one
    assert len(agno["vector_q1_l3_all_deploy"]["results"]) < 3
    assert any(len({r["text"] for r in c["results"]}) == len(c["results"]) and
               {"m00", "d0"} & {r["id"] for r in c["results"]} for c in agno.values())
    lc = {c["name"]: c for c in chk.load(DATA, "langchain2")["cases"]}
    # by vector: the filter is dropped (the unfiltered rows come back)
    assert lc["byvecrel_q0_k4_u1"]["results"] == lc["byvecrel_q0_k4_none"]["results"]
    assert lc["score_q0_k4_u1"]["results"] != lc["score_q0_k4_none"]["results"]
    mem0 = {c["name"]: c for c in chk.load(DATA, "mem0")["cases"]}
    assert mem0["q0_k5_u1"]["results"] == mem0["q0_k5_all"]["results"]
    assert all(r["mem0_id"] is None for r in mem0["q0_k5_u1"]["results"])
    li = chk.load(DATA, "llamaindex2")["cases"]
    assert any(c["results"] and c["results"][-1]["score"] == 0.0 for c in li)  # linspace
    ivf = {c["name"]: c for c in chk.load(DATA, "llamaindex_ivf")["cases"]}
    moved = [n for n in ivf if "_n8_r1" in n and ivf[n]["results"] !=
             ivf[n.replace("_n8_r1", "_n20_rNone")]["results"]]
    assert len(moved) >= 10  # refine_factor re-ranks the IVF_PQ candidates exactly
    cg = {c["name"]: c for c in chk.load(DATA, "cognee")["cases"]}
    assert len(cg["q0_lNone_none"]["results"]) > 15  # limit=None: every row
    either, both = (len(cg[f"q0_lNone_u1_{op}_deploy"]["results"]) for op in ("or", "and"))
    assert either > both > 0  # array_has_any against array_has_all
    assert all(r["score"] >= 0 for r in cg["q0_l3_none"]["results"])  # a distance


def _ask(store: Any, preset: str, query: str, doc: dict[str, Any], **kw: Any) -> Any:
    from inspector.core.engine.flow.question import Question, answer

    q = Question(store=store.uri, preset=preset, text=query, vector=doc["vectors"][query], **kw)
    return answer(q, store)


def test_the_by_vector_call_drops_the_filter_and_says_so(stores: dict[str, Any]) -> None:
    doc = chk.load(DATA, "langchain2")
    q = doc["cases"][0]["query"]
    got = _ask(stores["langchain2"], "langchain-lancedb-by-vector", q, doc, limit=4,
               set={"where": "metadata.user_id = 'u1'"})
    plain = _ask(stores["langchain2"], "langchain-lancedb-by-vector", q, doc, limit=4)
    assert got.trace.final.ids == plain.trace.final.ids
    assert any("similarity_search_by_vector_with_relevance_scores" in w and "dropped" in w
               for w in got.trace.warnings)
    assert not plain.trace.warnings


def test_agnos_meta_data_post_filter_starves_and_gets_search_deeper(
        stores: dict[str, Any]) -> None:
    """The filter after the limit cut is a stage that starves like any other: the diagnosis
    names it and offers 'search deeper' and 'filter inside the search', each run."""
    doc = chk.load(DATA, "agno")
    case = next(c for c in doc["cases"] if c["name"] == "vector_q1_l3_all_deploy")
    a = _ask(stores["agno"], "agno", case["query"], doc, limit=3, set=case["sets"])
    d = a.diagnosis
    assert (d.code, d.stage) == ("filter_after_cut", "filter")
    labels = [f.label for f in d.fixes]
    assert any("search deeper" in x for x in labels), labels
    assert any("filter inside the search" in x for x in labels), labels
    assert all(f.kind == "what_if" for f in d.fixes)
    deeper = next(f for f in d.fixes if "search deeper" in f.label)
    assert deeper.full and deeper.change.argv()[0] == "--widen"


def test_mmrs_fetch_k_is_langchains_own_depth(stores: dict[str, Any]) -> None:
    """A post-filter that starves MMR's fetch: raising fetch_k (the system's own parameter)
    comes first, and prefilter (dropped by the call) is only a what-if."""
    doc = chk.load(DATA, "langchain2")
    q = doc["cases"][0]["query"]
    a = _ask(stores["langchain2"], "langchain-lancedb-mmr", q, doc, limit=4,
             set={"where": "metadata.user_id = 'u3'"})
    fixes = a.diagnosis.fixes
    assert fixes and fixes[0].kind == "own" and "fetch.depth_extra" in fixes[0].label
    assert all(f.kind == "what_if" for f in fixes if "prefilter" in f.label)


def test_a_preset_whose_column_is_missing_names_it_and_the_mapping(
        stores: dict[str, Any]) -> None:
    from inspector.core.errors import InspectorError

    doc = chk.load(DATA, "langchain2")
    q = doc["cases"][0]["query"]
    with pytest.raises(InspectorError, match=r"payload.*--column text=COLUMN"):
        _ask(stores["langchain2"], "agno-keyword", q, doc, limit=3)


def test_pipeline_list_json_names_system_version_and_entry_point(
        capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli.main import main

    capsys.readouterr()
    assert main(["pipeline", "list", "--json"]) == 0
    got = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    for name in ("agno", "agno-keyword", "agno-hybrid", "langchain-lancedb",
                 "langchain-lancedb-score", "langchain-lancedb-by-vector",
                 "langchain-lancedb-mmr", "langchain-lancedb-fts", "llamaindex-lancedb",
                 "llamaindex-lancedb-fts", "llamaindex-lancedb-hybrid",
                 "mem0-langchain-lancedb", "cognee", "crewai-memory", "crewai-memory-deep"):
        p = got[name]
        assert p["system"] and p["version"] and p["entry_point"], name
        assert p["checked_against"], name


# each live recorder runs in the interpreter that holds its packages: crewai pins pydantic
# below the others, so CrewAI's slices are recorded with round one's interpreter
LIVE = {"INSPECTOR_ROUND2_PYTHON": SYSTEMS[:-2], "INSPECTOR_FRAMEWORKS_PYTHON": ("crewai2",)}
PACKAGES = {"INSPECTOR_ROUND2_PYTHON": "agno, langchain-community, "
                                       "llama-index-vector-stores-lancedb and mem0ai",
            "INSPECTOR_FRAMEWORKS_PYTHON": "crewai"}


@pytest.mark.parametrize("var", list(LIVE))
def test_the_live_packages_still_return_what_was_recorded(var: str, tmp_path: Path) -> None:
    """With INSPECTOR_ROUND2_PYTHON (agno, langchain-community, llama-index-vector-stores-lancedb,
    mem0ai) or INSPECTOR_FRAMEWORKS_PYTHON (crewai) set, the recorder re-records its systems
    into a temporary folder: every preset equals what the packages answered there, and they
    answered as recorded (but on the IVF_PQ table, whose index trains anew)."""
    py = os.environ.get(var)
    if not py:
        pytest.skip(f"set {var} to an interpreter with {PACKAGES[var]} (scripts/dev heldout)")
    subprocess.run([py, str(Path(__file__).with_name("record_round2.py")), "--out",
                    str(tmp_path), "--only", ",".join(LIVE[var])], check=True, timeout=1200,
                   stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": ""})
    for system in LIVE[var]:
        doc = chk.load(tmp_path, system)
        store = chk.open_copy(tmp_path, system, tmp_path / "copies")
        assert [(c["name"], chk.differs(store, doc, c)) for c in doc["cases"]] == \
            [(c["name"], None) for c in doc["cases"]]  # the presets on the fresh store
        if system != "llamaindex_ivf":  # its IVF_PQ training is unseeded: another index
            kept = chk.load(DATA, system)["cases"]
            assert [(c["name"], c["results"]) for c in doc["cases"]] == \
                [(c["name"], c["results"]) for c in kept]


@pytest.mark.skipif(not os.environ.get("INSPECTOR_COGNEE_PYTHON"),
                    reason="set INSPECTOR_COGNEE_PYTHON to an interpreter with cognee 1.6.5")
def test_cognees_adapter_still_returns_what_was_recorded(tmp_path: Path) -> None:
    subprocess.run([os.environ["INSPECTOR_COGNEE_PYTHON"],
                    str(Path(__file__).with_name("record_cognee.py")), "--out", str(tmp_path)],
                   check=True, timeout=900, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": ""})
    fresh, kept = chk.load(tmp_path, "cognee")["cases"], chk.load(DATA, "cognee")["cases"]
    assert [(c["name"], [(r["rid"], r["score"]) for r in c["results"]]) for c in fresh] == \
        [(c["name"], [(r["rid"], r["score"]) for r in c["results"]]) for c in kept]


@pytest.mark.parametrize(("system", "name", "preset", "where_text"),
                         [("agno", "agno", "agno", "payload.content"),
                          ("cognee", "cognee", "cognee", "payload.text"),
                          ("mem0", "mem0", "mem0-langchain-lancedb", "'data'")])
def test_inspector_tables_names_agno_cognee_and_mem0_stores(
        system: str, name: str, preset: str, where_text: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The system, the preset that reproduces it, and where its text lives in the payload."""
    from inspector.cli.main import main

    capsys.readouterr()
    assert main(["tables", str(DATA / system / "store"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)[0]["system"]
    assert (got["name"], got["preset"]) == (name, preset)
    assert any(where_text in n for n in got["notes"])


def test_a_column_given_with_column_is_where_lancedb_search_reads_it(
        stores: dict[str, Any]) -> None:
    """--column text=... names the text of a lancedb_search stage (here Agno's keyword search
    run on a LangChain table, its full-text column set too)."""
    from inspector.core.engine.flow.question import Question, answer

    q = Question(store=stores["langchain2"].uri, preset="agno-keyword", text="deploy",
                 limit=3, columns={"text": "text"}, set={"fetch.fts_column": "text"})
    got = answer(q, stores["langchain2"])
    assert len(got.trace.final.rows) == 3
    assert all("deploy" in s.row.text for s in got.trace.final.rows)


def test_llamaindexs_nprobes_and_refine_factor_reach_the_index_facet(
        stores: dict[str, Any]) -> None:
    """On the IVF_PQ table LlamaIndex wrote, the preset's answer carries the index facet: the
    exact search beside the system's, with LlamaIndex's own knobs as the fixes."""
    doc = chk.load(DATA, "llamaindex_ivf")
    case = next(c for c in doc["cases"] if c["name"] == "vector_q0_k10_n20_rNone")
    a = _ask(stores["llamaindex_ivf"], "llamaindex-lancedb", case["query"], doc, limit=10,
             set=case["sets"])
    assert a.facet is not None and a.facet.index_type == "IVF_PQ" and a.facet.legs
    lost = [n for n in (c["name"] for c in doc["cases"]) if n.endswith("_n20_rNone")
            and n.startswith("vector_")]
    found = 0
    for name in lost:
        c = next(x for x in doc["cases"] if x["name"] == name)
        got = _ask(stores["llamaindex_ivf"], "llamaindex-lancedb", c["query"], doc,
                   limit=c["limit"], set=c["sets"])
        if got.facet.lost_final:
            found += 1
            assert got.diagnosis.code == "lost_to_index"
            own = [f for f in got.diagnosis.fixes if f.kind == "own"]
            assert own and any("refine_factor" in f.label or "nprobes" in f.label for f in own)
    assert found  # the recorded queries include some the index loses rows on


def test_crewais_long_query_is_exact_when_its_llm_fails_and_inexact_otherwise(
        stores: dict[str, Any]) -> None:
    """A deep recall of a query of 200+ characters: with a working LLM its analysis is not
    reproducible (inexact); when the LLM call fails CrewAI searches the raw query in the first
    five child scopes, or '/' when the scope has none, and the preset equals it exactly (the
    recording: a leaf scope's long query returns rows of other scopes)."""
    doc = chk.load(DATA, "crewai2")
    case = next(c for c in doc["cases"] if c["name"] == "deep_q5_l10_/team-a/alice")
    assert len(case["query"]) >= 200 and chk.differs(stores["crewai2"], doc, case) is None
    scopes = {r["id"][:1] for r in case["results"]}
    assert scopes  # rows came back
    from inspector.core.engine.flow.question import Question, ask, parse_now

    q = Question(store=stores["crewai2"].uri, preset="crewai-memory-deep", text=case["text"],
                 vector=doc["vectors"][case["query"]], limit=10, scopes=case["scopes"],
                 now=parse_now(doc["now"]))
    trace, _ = ask(q, stores["crewai2"])
    assert trace.inexact and "llm=fails" in trace.inexact[0]
    scoped = [s.row.columns["scope"] for s in trace.final.rows]
    assert any(not sc.startswith("/team-a/alice") for sc in scoped)


def test_a_crewai_slice_merges_overlapping_scopes_once(stores: dict[str, Any]) -> None:
    doc = chk.load(DATA, "crewai2")
    case = next(c for c in doc["cases"] if c["name"] == "slice_q0_l10_deep_s2")
    assert case["scopes"] == ["/team", "/team-a"]
    ids = [r["id"] for r in case["results"]]
    assert len(ids) == len(set(ids)) == 10
    assert chk.differs(stores["crewai2"], doc, case) is None


def test_the_held_out_check_diagnoses_starved_cases_and_applies_their_fixes(
        tmp_path: Path) -> None:
    """check_recorded.py --fixes (run by scripts/dev heldout on a held-out store): each case
    LangChain answered short because its filter runs after the cut gets a fix returning more
    rows, and the fixes' argv, applied by `inspector query`, return what they said; here on
    the recorded store's first starved cases."""
    doc = chk.load(DATA, "langchain2")
    starved = [c for c in doc["cases"] if len(c["results"]) < c["limit"]][:12]
    store = chk.open_copy(DATA, "langchain2", tmp_path)
    counts, failed = chk.starved_fixes(store, {**doc, "cases": starved})
    assert failed == []
    assert counts.get("filter_after_cut", 0) >= 2 and counts.get("argv applied", 0) >= 1
