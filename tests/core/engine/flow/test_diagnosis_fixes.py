"""The one diagnosis, for any pipeline: the stage that starved the answer and why, where the
first row that would pass sits, and fixes that were run before they are offered: the
system's own parameters first, then what-ifs named as such, each with the command-line
arguments that apply it (`argv`) and what it returns. Checked on the stores the real
packages wrote (LangChain, CrewAI, openclaw-mem), on the demo's scoped miss, and at a
threshold's boundary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.frameworks.check_recorded import cli_rows

FRAMEWORKS = Path(__file__).resolve().parents[3] / "frameworks" / "data"


def _cases(system: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = json.loads((FRAMEWORKS / system / "cases.json").read_text(encoding="utf-8"))
    return doc, doc["cases"]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from inspector.core.stores.opening import open_store

    base = tmp_path_factory.mktemp("diag")
    out = {}
    for system in ("langchain", "crewai"):
        shutil.copytree(FRAMEWORKS / system / "store", base / system)
        out[system] = open_store(str(base / system), _cases(system)[0]["table"])
    return out


def _question(system: str, store: Any, case: dict[str, Any]) -> Any:
    from inspector.core.engine.flow.question import Question, parse_now

    doc, _ = _cases(system)
    if system == "langchain":
        sets: dict[str, Any] = {"where": case["filter"] or ""}
        if case["prefilter"]:
            sets["fetch.prefilter"] = True
        return Question(store=store.uri, preset="langchain-lancedb", limit=case["k"],
                        vector=doc["vectors"][case["query"]], set=sets)
    sets = {}
    if case.get("categories"):
        sets["search.categories"] = case["categories"]
    return Question(store=store.uri, preset="crewai-memory", limit=case["limit"],
                    vector=doc["vectors"][case["query"]], set=sets,
                    scopes=None if case.get("scope") is None else [case["scope"]],
                    now=parse_now(doc["now"]))


def _starved(system: str) -> list[dict[str, Any]]:
    _, cases = _cases(system)
    if system == "langchain":
        return [c for c in cases if len(c["results"]) < c["k"]]
    return [c for c in cases if len(c["results"]) < c["limit"] and c["depth"] == "shallow"
            and not c.get("include_private") and not c.get("source")]


@pytest.mark.parametrize("system", ["langchain", "crewai"])
def test_every_starved_query_gets_fixes_that_were_run(stores: dict[str, Any], system: str
                                                      ) -> None:
    """Each query the package answered with fewer rows than asked: where rows a deeper or
    prefiltered search would return exist, a fix returns more rows, and its argv, applied by
    `inspector query`, returns exactly what the fix says; where none exist (the filter
    matches fewer rows), the diagnosis says so and offers no fix that claims more."""
    from inspector.core.engine.flow.question import answer

    store = stores[system]
    codes: dict[str, int] = {}
    full = 0
    for i, case in enumerate(_starved(system)):
        q = _question(system, store, case)
        got = answer(q, store)
        d = got.diagnosis
        codes[d.code] = codes.get(d.code, 0) + 1
        n = len(got.trace.final.rows)
        assert n == len(case["results"]), case["name"]
        assert d.code in ("filter_after_cut", "few_matches"), (case["name"], d.code)
        if d.code == "filter_after_cut":
            better = [f for f in d.fixes if f.returns > n]
            assert better, case["name"]
            full += any(f.full for f in d.fixes)
            if i % 4 == 0:  # the CLI applies a sample of them, as a script would
                for f in better[:2]:
                    assert cli_rows(store, q, f.to_json()["argv"]) == f.returns
        for f in d.fixes:
            assert f.kind == "what_if" or not f.change.what_if
            assert f.kind != "what_if" or f.label.startswith("What-if: ")
    assert codes.get("filter_after_cut", 0) >= 8 and full >= 1, codes


def test_langchain_prefilter_is_its_own_fix_and_a_deeper_search_a_what_if(
        stores: dict[str, Any]) -> None:
    """LangChain passes prefilter=False on purpose and has no over-fetch: its own kwarg
    prefilter=True is the fix; asking LanceDB for more rows is a what-if."""
    from inspector.core.engine.flow.question import answer

    case = next(c for c in _starved("langchain") if not c["results"] and c["k"] == 4)
    d = answer(_question("langchain", stores["langchain"], case),
               stores["langchain"]).diagnosis
    assert d.code == "filter_after_cut" and d.stage == "fetch"
    own = [f for f in d.fixes if f.kind == "own"]
    assert own and own[0].to_json()["argv"] == ["--set", "fetch.prefilter=true"]
    assert "prefilter=True" in own[0].label and own[0].full
    deeper = [f for f in d.fixes if f.kind == "what_if"]
    assert deeper and all(f.label.startswith("What-if: ") for f in deeper)
    assert d.first_at is not None and d.page_at is not None and d.first_at <= d.page_at


def test_the_demo_scoped_miss_names_where_the_rows_sit_and_its_own_fixes(demo_path: Path
                                                                        ) -> None:
    from inspector.core.engine.flow.question import Question, answer
    from inspector.core.stores.demo import SCOPE_QUERY
    from inspector.core.stores.opening import open_store

    store = open_store(str(demo_path), None)
    q = Question(store=store.uri, preset="docs-before-fix", text=SCOPE_QUERY,
                 scopes=["vault-agent"])
    got = answer(q, store)
    d = got.diagnosis
    assert not got.trace.final.rows
    assert (d.code, d.stage, d.first_at, d.page_at) == ("filter_after_cut", "scope", 25, 56)
    argvs = [f.to_json()["argv"] for f in d.fixes]
    assert argvs[0] == ["--set", "scope_rule.pushdown=true"]
    assert ["--set", "fetch.cap=56", "--set", "fetch.overfetch=5.6"] in argvs
    assert ["--widen", "fetch=56"] in argvs
    assert all(f.full and f.returns == 10 for f in d.fixes)
    assert [f.kind for f in d.fixes[:2]] == ["own", "own"]
    assert "depth 25" in d.message and "depth 56" in d.message


def test_openclaw_mem_before_its_fix_is_offered_its_own_later_fixes(
        tmp_path: Path) -> None:
    """The plugin before its fix starves a scoped query; its repo pushdown (a flag of the
    request stage, plugin 8ed98cd) is its own fix; its over-fetch (ef614f4) needs its
    constants raised here, so that change is a what-if."""
    from inspector.core.engine.flow.question import Question, answer
    from inspector.core.stores.opening import open_store
    from tests.core.engine.flow.fixtures import fixture_copy

    fx = fixture_copy("openclaw-mem", tmp_path)
    vecs = json.loads((fx / "query_vectors.json").read_text())
    store = open_store(str(fx / "docs.sqlite"), None)
    q = Question(store=store.uri, preset="openclaw-mem-before-fix", text="playbook",
                 vector=vecs["playbook"], limit=5, scopes=["ops-runbooks"])
    d = answer(q, store).diagnosis
    assert d.code == "filter_after_cut" and d.stage == "scope_filter"
    first = d.fixes[0]
    assert first.kind == "own" and first.full and "8ed98cd" in first.label
    assert first.to_json()["argv"] == ["--set", "request.pushdown=true"]
    over = next(f for f in d.fixes if "request.overfetch=true" in f.to_json()["argv"])
    assert over.kind == "what_if" and over.full


def test_a_row_at_exactly_the_min_score_is_kept_and_the_threshold_fix_is_the_largest(
        tmp_path: Path) -> None:
    """min_score keeps score >= min: a row scoring exactly the threshold stays (the sibling
    of the >= / > mutant); the fix lowers the threshold to the largest step that keeps a full
    page, and says so."""
    import lancedb

    from inspector.core.engine.flow.question import Question, answer
    from inspector.core.stores.opening import open_store
    from tests.storekit import rows_at_distance

    path = tmp_path / "store"
    # scores 1 / (1 + d), exact in float32: 1, 0.8, 0.5 (the min score), 0.2
    lancedb.connect(str(path)).create_table(
        "memories", rows_at_distance(["a", "b", "c", "d"], [0.0, 0.25, 1.0, 4.0]))
    store = open_store(str(path), None)
    q = Question(store=store.uri, preset="memory-plugin", vector=[1.0, 0.0, 0.0, 0.0],
                 limit=4, set={"scope_rule.strategy": "none"})
    got = answer(q, store)
    assert got.trace.final.ids == ["a", "b", "c"]  # c scores exactly 0.5, the min score
    d = got.diagnosis
    assert d.code == "threshold" and d.stage == "min_score"
    fix = d.fixes[0]
    assert fix.to_json()["argv"] == ["--set", "min_score.min=0.2"] and fix.full


def test_a_what_if_answer_says_it_is_one(demo_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli.main import main
    from inspector.core.stores.demo import SCOPE_QUERY

    base = ["query", str(demo_path), "--preset", "docs-before-fix", "--scope", "vault-agent",
            "--text", SCOPE_QUERY, "--fixes", "off"]
    capsys.readouterr()
    assert main([*base, "--widen", "fetch=56", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["what_if"] == {"widen": {"fetch": 56}, "exact": False}
    assert len(out["stages"][-1]["candidates"]) == 10
    assert main([*base, "--widen", "fetch=56"]) == 0
    assert "what-if (not the system's behaviour): fetch keeps at least 56 rows" in \
        capsys.readouterr().out
    assert main([*base, "--widen", "nostage=5"]) == 2
    assert "has no stage nostage" in capsys.readouterr().err


def test_a_full_page_is_ok_even_when_a_threshold_dropped_rows(tmp_path: Path) -> None:
    """A min score that drops rows past a full page starves nothing: the diagnosis is ok and
    offers no fix (the min-score diagnosis on a full page was a surviving mutant)."""
    import lancedb

    from inspector.core.engine.flow.question import Question, answer
    from inspector.core.stores.opening import open_store
    from tests.storekit import rows_at_distance

    path = tmp_path / "store"
    lancedb.connect(str(path)).create_table(
        "memories", rows_at_distance(["a", "b", "c", "d"], [0.0, 0.25, 1.0, 4.0]))
    store = open_store(str(path), None)
    q = Question(store=store.uri, preset="memory-plugin", vector=[1.0, 0.0, 0.0, 0.0],
                 limit=3, set={"scope_rule.strategy": "none", "fetch.overfetch": 2.0})
    got = answer(q, store)
    assert got.trace.final.ids == ["a", "b", "c"] and got.trace.stage("min_score").dropped
    assert got.diagnosis.code == "ok" and not got.diagnosis.fixes


def test_an_expected_row_gets_the_smallest_change_that_returns_it(demo_path: Path) -> None:
    """The expected row's fix is the smallest value of the parameter, not merely one that
    works: one step less does not return it (the fix tried largest first was a mutant)."""
    from inspector.core.engine.flow.question import Question, answer
    from inspector.core.stores.demo import SCOPE_QUERY
    from inspector.core.stores.opening import open_store

    store = open_store(str(demo_path), None)
    q = Question(store=store.uri, preset="docs-before-fix", text=SCOPE_QUERY,
                 scopes=["vault-agent"], set={"scope_rule.pushdown": True})
    first = answer(q, store, fixes=False)
    target = first.trace.stage("scope").rows[0].id  # in scope, returned with pushdown
    plain = q.model_copy(update={"set": {}, "expect": [target]})
    got = answer(plain, store, fixes=False).expected[0]
    fix = got["fix"]
    assert got["reason"] in ("out_of_scope", "not_fetched") and fix is not None
    assert fix["kind"] == "own" and fix["argv"] == ["--set", "scope_rule.pushdown=true"]
    depth = next(f for f in [fix, *got["alternatives"]] if f["param"] == "overfetch")
    less = round(depth["to"] - 0.1, 10)
    sets = {"fetch.overfetch": less, "fetch.cap": 0}
    again = answer(plain.model_copy(update={"set": sets, "expect": []}), store, fixes=False)
    assert target not in again.trace.final.ids
    sets["fetch.overfetch"] = depth["to"]
    again = answer(plain.model_copy(update={"set": sets, "expect": []}), store, fixes=False)
    assert target in again.trace.final.ids
