"""openclaw-mem's pipelines equal its real plugin and CLI on every case of
tests/data/fixtures/openclaw-mem, through the command line: the same rows in the same order with
the same scores (float for float), the same counters (rawCandidates, scopedCandidates,
filteredByScope), the CLI's pool, the pushed-down repos, the snippets and the error.

Each case is what the real docsColdLane.js (38d2596, ef614f4, 7a3a848) returned driving the
real `openclaw-mem docs search` (ef614f4, 7a3a848) on docs.sqlite, or the 7a3a848 CLI alone.
No case is left out and nothing is compared approximately."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from tests.core.engine.flow.fixtures import fixture_copy, fixture_file

PRESET = {"before-fix": "openclaw-mem-before-fix", "overfetch": "openclaw-mem-overfetch",
          "pushdown": "openclaw-mem-pushdown", "cli-direct": "openclaw-mem-cli"}
PLUGIN_KEYS = ("rows", "rawCandidates", "scopedCandidates", "filteredByScope", "pool",
               "pushdownRepos", "error", "snippets")


def _cases() -> list[dict[str, Any]]:
    data = json.loads(fixture_file("openclaw-mem", "cases.json").read_text("utf-8"))
    return data["cases"]


CASES = {c["case"]["id"]: c for c in _cases()}


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("openclaw-mem", tmp_path_factory.mktemp("ocm"))


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module: the docs file's working copy is built once, not per case."""
    return tmp_path_factory.mktemp("ocm-cache")


@pytest.fixture
def cache(shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(shared_cache))
    return shared_cache


def run_cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def argv_of(fx: Path, case: dict[str, Any], tmp_path: Path) -> list[str]:
    """The case as the inspector is asked it: the caller's query, scope and limit; the
    plugin's docsColdLane config as --system-config; the CLI's own flags as --set."""
    vectors = json.loads((fx / "query_vectors.json").read_text("utf-8"))
    (tmp_path / "q.json").write_text(json.dumps(vectors[case["query"]]))
    argv = ["query", str(fx / "docs.sqlite"), "--preset", PRESET[case["preset"]],
            "--text", case["query"], "--vector", f"@{tmp_path / 'q.json'}",
            "--limit", str(case["limit"]), "--json"]
    if case["preset"] == "cli-direct":
        argv += ["--set", f"request.fts_k={case['ftsK']}", "--set",
                 f"request.vec_k={case['vecK']}", "--set", f"request.k={case['rrfK']}"]
        return argv + (["--scope", case["scope"]] if case["scope"] else [])
    lane: dict[str, Any] = {"searchFtsK": case["ftsK"], "searchVecK": case["vecK"],
                            "searchRrfK": case["rrfK"], "scopeMappingStrategy": case["strategy"]}
    if case["map"]:
        lane["scopeMap"] = json.loads((fx / "scope_map.json").read_text("utf-8"))
    (tmp_path / "config.json").write_text(json.dumps({"docsColdLane": lane}))
    return argv + ["--system-config", str(tmp_path / "config.json"), "--scope", case["scope"]]


def observed(out: dict[str, Any]) -> dict[str, Any]:
    """What the run says, in the real code's terms."""
    st = {s["name"]: s for s in out["stages"]}
    rows = [[int(c["id"]), c["score"]] for c in out["stages"][-1]["candidates"]]
    if "scope_filter" not in st:  # the CLI alone: its results are the pool
        return {"rows": rows, "pool": [r[0] for r in rows], "rawCandidates": len(rows),
                "scopedCandidates": len(rows), "filteredByScope": 0,
                "pushdownRepos": st["request"]["facts"]["pushdown_repos"]}
    counters = st["scope_filter"]["facts"]
    assert counters["rawCandidates"] == out["counters"]["cli_results"]
    assert counters["scopedCandidates"] == out["counters"]["scope_filter"]
    return {"rows": rows, "pool": [int(c["id"]) for c in st["cli_results"]["candidates"]],
            "rawCandidates": counters["rawCandidates"],
            "scopedCandidates": counters["scopedCandidates"],
            "filteredByScope": counters["filteredByScope"],
            "pushdownRepos": st["request"]["facts"]["pushdownRepos"],
            "error": st["snippets"]["facts"]["error"],
            "snippets": st["snippets"]["facts"]["snippets"]}


@pytest.mark.parametrize("case_id", sorted(CASES), ids=lambda i: f"{i}-"
                         f"{CASES[i]['case']['group']}-{CASES[i]['case']['preset']}")
def test_every_case_equals_the_real_plugin_and_cli(fx: Path, cache: Path, case_id: str,
                                                   tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    case, real = CASES[case_id]["case"], CASES[case_id]["real"]
    out = run_cli(capsys, argv_of(fx, case, tmp_path))
    got = observed(out)
    assert set(real) <= set(got), sorted(set(real) - set(got))
    for key in real:  # every key the real code reported, compared exactly
        assert got[key] == real[key], f"{case_id} {key}:\n mine {got[key]}\n real {real[key]}"
    assert out["exact"], out["inexact"]
    assert out["pipeline"]["name"] == PRESET[case["preset"]]


def test_the_fixture_holds_every_preset_and_group() -> None:
    """The comparison above runs all of them (a third of the real runs, 276 cases)."""
    assert len(CASES) == 276
    assert {c["case"]["preset"] for c in CASES.values()} == set(PRESET)
    assert all(set(PLUGIN_KEYS) <= set(c["real"]) for c in CASES.values()
               if c["case"]["preset"] != "cli-direct")


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_the_docs_file_is_only_read(tmp_path_factory: pytest.TempPathFactory, cache: Path,
                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every leg (FTS5 with a syntax error and its phrase retry, the CJK fallback, pushdown,
    the cosine scan) on a read-only folder: nothing in it is created or changed."""
    fx = fixture_copy("openclaw-mem", tmp_path_factory.mktemp("ocm-ro"))
    for p in fx.iterdir():
        p.chmod(stat.S_IRUSR | stat.S_IRGRP)
    fx.chmod(stat.S_IRUSR | stat.S_IXUSR)
    before = _digest(fx)
    try:
        for cid in ("c0795", "c0813", "c0768", "c0672", "c0816"):
            out = run_cli(capsys, argv_of(fx, CASES[cid]["case"], tmp_path))
            assert observed(out)["rows"] == CASES[cid]["real"]["rows"]
        assert _digest(fx) == before
    finally:
        fx.chmod(stat.S_IRWXU)


def test_the_plugin_config_is_resolved_as_the_plugin_resolves_it() -> None:
    """docsColdLane values the plugin would clamp or replace by its default, a scope map whose
    keys hold dots, keys that change nothing here and a misspelt one."""
    from inspector.core.engine.flow.spec import load_shipped
    from inspector.core.engine.flow.sysconfig import from_config

    spec = load_shipped("openclaw-mem-pushdown")
    cfg = {"plugins": {"entries": {"openclaw-mem-engine": {"config": {"docsColdLane": {
        "searchFtsK": 500, "searchVecK": "30", "searchRrfK": 0.5, "maxItems": 9.7,
        "maxSnippetChars": 10, "scopeMappingStrategy": "prefix",
        "scopeMap": {"docs.specs": ["docs"], "a": ["b"]}, "minHotItems": 2,
        "serchFtsK": 5}}}}}}
    got = from_config(spec, cfg)
    assert got.assignments == {
        "request.search_fts_k": 100, "request.search_vec_k": 20, "request.search_rrf_k": 1,
        "request.max_items": 5, "snippets.max_snippet_chars": 80,
        "request.strategy": "repo_prefix",
        "request.scope_map": {"docs.specs": ["docs"], "a": ["b"]}}
    assert got.unknown == ("docsColdLane.serchFtsK",)
    assert any("minHotItems" in n for n in got.notes) and not got.inexact


def test_a_live_change_of_the_plugin_config_searches_again(fx: Path, cache: Path) -> None:
    """The request's depths are part of each fetch's cache key: a live change of
    searchFtsK/searchVecK gives the real rows of that configuration, not cached legs."""
    from inspector.core.engine.flow.live import LiveFlow
    from inspector.core.engine.flow.question import Question
    from inspector.core.stores.opening import open_store

    case, real = CASES["c0756"]["case"], CASES["c0756"]["real"]  # ftsK 40, vecK 10
    vec = json.loads((fx / "query_vectors.json").read_text("utf-8"))[case["query"]]
    q = Question(store=str(fx / "docs.sqlite"), preset="openclaw-mem-overfetch",
                 text=case["query"], vector=vec, scopes=[case["scope"]], limit=case["limit"])
    live = LiveFlow(open_store(str(fx / "docs.sqlite")), q, 0.0)
    before = live.answer()
    assert before.stage("cli_results").ids != [str(i) for i in real["pool"]]
    live.set("request.search_fts_k", 40)
    after = live.set("request.search_vec_k", 10)
    assert after.stage("cli_results").ids == [str(i) for i in real["pool"]]
    assert [[int(s.id), s.score] for s in after.final.rows] == real["rows"]
    # 20/20 and 40/20 search each leg; 40/10 asks the CLI for the same depths as 40/20
    # (max(5L, 40, 10) = 40 for both legs), so its legs come from the cache
    assert (live.cache.misses, live.cache.hits) == (4, 2)


def test_the_pipelines_refuse_a_lancedb_store(make_store: Any, cache: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = make_store({"id": ["a"], "text": ["t"], "vector": [[0.1, 0.2]]})
    capsys.readouterr()
    assert main(["query", str(path), "--preset", "openclaw-mem-cli", "--text", "t",
                 "--vector", "[0.1, 0.2]"]) == 2
    assert "SQLite file" in capsys.readouterr().err


def test_the_source_connection_runs_selects_only(fx: Path, cache: Path) -> None:
    from inspector.core.errors import InspectorError
    from inspector.core.stores.opening import open_store

    store = open_store(str(fx / "docs.sqlite"))
    assert store.source_rows("SELECT count(*) FROM docs_chunks") == [(409,)]
    with pytest.raises(InspectorError, match="Only SELECT"):
        store.source_rows("DELETE FROM docs_chunks")


@pytest.mark.parametrize("preset", ["pushdown", "before-fix", "cli-direct"])
def test_rrf_k_on_the_command_line_is_the_systems_own_rrf_constant(
        fx: Path, cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        preset: str) -> None:
    """`--rrf-k K` is the plugin's searchRrfK (as --system-config gives it) or the CLI's
    --k: the same answer, row for row, and not the answer at the default 60."""
    case = next(c["case"] for c in CASES.values() if c["case"]["preset"] == preset
                and (c["case"]["scope"] or preset == "cli-direct")
                and len(c["real"].get("rows", [])) >= 2)
    argv = argv_of(fx, {**case, "rrfK": 7}, tmp_path)
    configured = run_cli(capsys, argv)
    plain = argv_of(fx, case, tmp_path)
    if preset == "cli-direct":  # without its --set request.k=60
        at = plain.index("request.k=60")
        del plain[at - 1:at + 1]
    flagged = run_cli(capsys, [*plain, "--rrf-k", "7"])
    assert flagged["stages"] == configured["stages"]
    default = run_cli(capsys, argv_of(fx, case, tmp_path))
    top = [c["score"] for c in flagged["stages"][-1]["candidates"]]
    assert top != [c["score"] for c in default["stages"][-1]["candidates"]]
    assert max(top) <= 2 / 8 and max(top) > 2 / 61


def test_the_api_takes_rrf_k_for_the_docs_cli_as_the_command_line_does(
        fx: Path, cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import inspector

    case = next(c["case"] for c in CASES.values() if c["case"]["preset"] == "cli-direct")
    argv = argv_of(fx, {**case, "rrfK": 9}, tmp_path)
    cli = run_cli(capsys, argv)
    vec = json.loads((fx / "query_vectors.json").read_text("utf-8"))[case["query"]]
    r = inspector.open(fx / "docs.sqlite").query(
        text=case["query"], vector=vec, preset="openclaw-mem-cli", limit=case["limit"],
        rrf_k=9, scopes=[case["scope"]] if case["scope"] else None,
        set={"request.fts_k": case["ftsK"], "request.vec_k": case["vecK"]})
    assert r.to_json()["stages"] == cli["stages"]
