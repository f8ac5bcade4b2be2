"""memory-lancedb-pro's two presets equal the plugin itself, stage by stage, on the store it
wrote (tests/data/fixtures/memory-lancedb-pro): every query and configuration it was run with.

The one allowed difference is LanceDB's: rows tied on BM25 are ordered (and, at a leg's cut,
chosen) arbitrarily by its clients; the inspector must report each such group as arbitrary,
and every row outside the groups must agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from tests.core.engine.flow.fixtures import fixture_copy, fixture_file

PRESET = {"plugin_default": "memory-lancedb-pro",
          "cli_search_no_decay_engine": "memory-lancedb-pro-cli",
          "ablation_vector_importance": "memory-lancedb-pro-cli"}
TOL = 1e-6


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("mlp"))


@pytest.fixture(scope="module")
def real(fx: Path) -> dict[str, Any]:
    return json.loads((fx / "real_results.json").read_text(encoding="utf-8"))


def cases() -> list[tuple[str, str]]:
    data = json.loads(fixture_file("memory-lancedb-pro", "real_results.json").read_text())
    return [(q["name"], prof) for q in data["queries"] for prof in q["runs"]]


def run_cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def ask(fx: Path, real: dict[str, Any], name: str, profile: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    q = next(x for x in real["queries"] if x["name"] == name)
    run = q["runs"][profile]
    prof = real["profiles"][profile]
    config = {"retrieval": prof["retrieval"]}
    if prof["decayEngine"]:
        config["decay"] = prof["decayEngine"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    argv = ["query", str(fx / "store"), "--table", "memories", "--preset", PRESET[profile],
            "--system-config", str(tmp_path / "config.json"),
            "--vector", f"@{fx / (q['vector'] + '.json')}", "--text", q["text"],
            "--limit", str(q["limit"]), "--now", str(run["started_at"]), "--json"]
    if q.get("scopeFilter") is not None:
        argv += ["--scope-list", json.dumps(q["scopeFilter"])]
    return run_cli(capsys, argv), run


def tie_groups(out: dict[str, Any]) -> tuple[list[set[str]], set[str]]:
    """(groups whose order is arbitrary, rows whose very presence is: ties at a cut)."""
    groups = [set(t["members"] or t["ids"]) for t in out["ties"] if t["arbitrary"]]
    at_cut = {i for t in out["ties"] if t["arbitrary"] and t["at_cut"] for i in t["members"]}
    return groups, at_cut


def canonical(ids: list[str], groups: list[set[str]], skip: set[str]) -> list[str]:
    """Rows of one arbitrary group that stand next to each other, sorted by id; rows whose
    presence is arbitrary removed."""
    gid = {i: n for n, g in enumerate(groups) for i in g}
    out: list[str] = []
    run: list[str] = []
    cur: int | None = None
    for i in [x for x in ids if x not in skip]:
        g = gid.get(i)
        if g is not None and g == cur:
            run.append(i)
            continue
        out += sorted(run)
        run, cur = [i], g
    return out + sorted(run)


def same_list(mine: list[dict[str, Any]], theirs: list[dict[str, Any]], groups: list[set[str]],
              skip: set[str], what: str) -> None:
    a = canonical([c["id"] for c in mine], groups, skip)
    b = canonical([c["id"] for c in theirs], groups, skip)
    assert a == b, f"{what}: ids differ\n mine   {a}\n plugin {b}"
    theirs_score = {c["id"]: c["score"] for c in theirs}
    for c in mine:
        if c["id"] not in skip:
            assert abs(c["score"] - theirs_score[c["id"]]) <= TOL, (what, c["id"])


@pytest.mark.parametrize(("name", "profile"), cases())
def test_preset_equals_the_plugin_stage_by_stage(fx: Path, real: dict[str, Any], name: str,
                                                 profile: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out, run = ask(fx, real, name, profile, tmp_path, capsys)
    groups, at_cut = tie_groups(out)
    stages = {s["name"]: s for s in out["stages"]}
    for want in run.get("replay", {}).get("stages", []):
        assert want["name"] in stages, f"stage {want['name']} missing"
        same_list(stages[want["name"]]["candidates"], want["candidates"], groups, at_cut,
                  f"{name}/{profile}/{want['name']}")
    same_list(out["stages"][-1]["candidates"], run["results"], groups, at_cut,
              f"{name}/{profile}/final")
    assert out["exact"], out["inexact"]


@pytest.mark.parametrize(("name", "profile"), cases())
def test_per_source_scores_equal_the_plugin(fx: Path, real: dict[str, Any], name: str,
                                            profile: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Each returned row's vector, BM25, fused and cosine-rerank scores are the plugin's."""
    out, run = ask(fx, real, name, profile, tmp_path, capsys)
    _, at_cut = tie_groups(out)
    mine = {c["id"]: c["inputs"] for c in out["stages"][-1]["candidates"]}
    keys = {"vector": "vector", "bm25": "bm25", "fused": "fused", "reranked": "cosine"}
    for r in run["results"]:
        if r["id"] in at_cut:
            continue
        for src, key in keys.items():
            if src in r["sources"]:
                assert abs(mine[r["id"]][key] - r["sources"][src]["score"]) <= TOL, \
                    (name, profile, r["id"], src)


@pytest.mark.parametrize("profile", ["plugin_default", "cli_search_no_decay_engine"])
def test_stage_counts_equal_the_plugins_own_diagnostics(fx: Path, real: dict[str, Any],
                                                        profile: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    for q in real["queries"]:
        if not q["runs"][profile].get("replay"):
            continue
        out, run = ask(fx, real, q["name"], profile, tmp_path, capsys)
        c, diag = out["counters"], run["diagnostics"]
        assert c["vector_leg"] == diag["vectorResultCount"]
        assert c["bm25_leg"] == diag["bm25ResultCount"]
        if not tie_groups(out)[1]:  # which tied rows a leg kept decides the union's size
            assert c["fused"] == diag["fusedResultCount"]
            assert c["min_score_and_unexpired"] == diag["stageCounts"]["afterMinScore"]
        assert c["rerank_window"] == diag["stageCounts"]["rerankInput"]
        assert c["hard_min_score"] == diag["stageCounts"]["afterHardMinScore"]
        assert c["noise_filter"] == diag["stageCounts"]["afterNoiseFilter"]
        assert c["mmr"] == diag["stageCounts"]["afterDiversity"]
        assert c["returned"] == diag["finalResultCount"]


def test_the_kafka_tie_at_the_cut_is_reported_as_arbitrary(fx: Path, real: dict[str, Any],
                                                           tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    """240 rows of agent:ops share one BM25 score and the leg asks for 200: LanceDB keeps an
    arbitrary subset, which the trace says, with every tied row it saw."""
    out, _ = ask(fx, real, "kafka_agent_ops", "plugin_default", tmp_path, capsys)
    cut = [t for t in out["ties"] if t["at_cut"]]
    assert len(cut) == 1 and cut[0]["stage"] == "bm25_leg" and cut[0]["arbitrary"]
    assert cut[0]["cut"] == 200 and len(cut[0]["members"]) == 240
    assert cut[0]["beyond"] == 240 - len(cut[0]["ids"])


def test_deny_all_searches_nothing(fx: Path, real: dict[str, Any], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = ask(fx, real, "deny_all", "plugin_default", tmp_path, capsys)
    assert out["diagnosis"]["code"] == "scope_denies_all"
    assert all(s["count"] == 0 for s in out["stages"] if s["role"] == "fetch")


def test_the_plugins_store_is_recognised_and_its_preset_proposed(fx: Path) -> None:
    from inspector.core.stores.opening import open_store
    from inspector.core.stores.shapes import detect_shape

    shape = detect_shape(open_store(str(fx / "store"), "memories"))
    assert shape.preset == "memory-lancedb-pro" and "memory-lancedb-pro" in shape.title
