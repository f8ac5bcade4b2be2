"""The command line as other tools will call it: JSON contract, exit codes, read-only stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.stores.demo import SCOPE_QUERY, build_demo
from tests.storekit import snapshot


@pytest.fixture(scope="module")
def demo_path(tmp_path_factory) -> Path:
    return build_demo(tmp_path_factory.mktemp("cli") / "demo")


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_query_json_follows_the_contract(capsys, demo_path):
    code, out, err = _run(capsys, "query", str(demo_path), "--text", SCOPE_QUERY, "--preset",
                          "docs-before-fix", "--scope", "vault-agent", "--expect",
                          "agent-memory-theme-far", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == 1
    assert doc["store"] == {"uri": str(demo_path), "table": "memories", "version": 2,
                            "rows": 3024}
    assert [s["name"] for s in doc["stages"]] == ["raw", "scoped", "blended", "final"]
    params = doc["params"]
    assert params["mode"] == "hybrid" and params["filter"] == "post"
    assert params["tie_rule"] == "id"  # the docs engine's fusion: ties by id ascending
    assert all({"stage", "ids", "score", "at_cut"} <= set(g) for g in doc["ties"])
    assert params["depths"] == {"pool": 10, "vec_k": 20, "fts_k": 20}
    raw = doc["stages"][0]["candidates"]
    assert len(raw) == 10 and [c["rank"] for c in raw] == list(range(1, 11))
    need = {"id", "rank", "distance", "vector_score", "fts_score", "base_score", "importance",
            "multiplier", "score", "in_scope"}
    assert need <= set(raw[0])
    assert doc["counters"] == {"rawCandidates": 10, "scopedCandidates": 0,
                               "filteredByScope": 10, "belowMinScore": 0, "returned": 0}
    assert doc["diagnosis"]["code"] == "scope_starvation"
    (e,) = doc["expect"]
    assert set(e) >= {"id", "exhaustive_rank", "dropped_at", "min_depth", "min_overfetch"}
    assert e["id"] == "agent-memory-theme-far" and e["dropped_at"] == "raw"
    assert e["min_depth"] is None and "out of scope" in e["reason"]


def test_json_scores_are_the_formula_values_unrounded(capsys, demo_path):
    code, out, _ = _run(capsys, "query", str(demo_path), "--text", "editor theme",
                        "--blend", "0.5", "--limit", "3", "--json")
    assert code == 0
    for c in json.loads(out)["stages"][3]["candidates"]:
        assert c["vector_score"] == 1 / (1 + c["distance"])
        imp = 0.7 if c["importance"] is None else min(1.0, max(0.0, c["importance"]))
        assert c["multiplier"] == 0.5 + 0.5 * imp
        assert c["score"] == c["vector_score"] * c["multiplier"]


def test_text_output_shows_every_stage(capsys, demo_path):
    code, out, _ = _run(capsys, "query", str(demo_path), "--text", SCOPE_QUERY, "--scope",
                        "vault-agent", "--overfetch", "3")
    assert code == 0
    for title in ("raw candidates (30)", "scoped candidates (", "importance-blended (",
                  "final results (", "diagnosis [scope_dominated]"):
        assert title in out


@pytest.mark.parametrize("args,message", [
    (["query", "/nonexistent/store", "--text", "x"], "does not exist"),
    (["query", "{demo}", "--vector", "[1, 2]"],
     "has 2 dimensions but the store's vectors have 256"),
    (["query", "{demo}", "--vector", "[1, oops]"], "JSON array"),
    (["query", "{demo}", "--text", "x", "--table", "nope"], "tables: memories"),
    (["query", "{demo}", "--text", "x", "--blend", "2"], "between 0 and 1"),
    (["query", "{demo}", "--text", "x", "--overfetch", "0.5"], "Over-fetch must be"),
    (["query", "{demo}", "--text", "x", "--preset", "nope"], "invalid choice"),
    (["query", "{demo}"], "Give a query"),
    (["query", "{demo}", "--text", "x", "--scope-strategy", "map", "--scope", "a"],
     "needs a scope map"),
    (["query", "{demo}", "--text", "x", "--scope-map", "/nonexistent.json"], "does not exist"),
    (["query", "{demo}", "--vector-of", "nope"], "No row with id = 'nope'"),
    (["query", "{demo}", "--text", "x", "--embedder", "nope"], "Unknown embedder"),
    (["tables", "/nonexistent"], "does not exist"),
    (["demo", "{demo}"], "already exists and is not empty"),
])
def test_bad_input_exits_2_with_one_line(capsys, demo_path, args, message):
    args = [a.replace("{demo}", str(demo_path)) for a in args]
    code, out, err = _run(capsys, *args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("inspector: ")
    assert message in err
    assert "Traceback" not in err


def test_the_version_and_a_usage_error_say_inspector_once(capsys):
    from inspector import __version__

    assert _run(capsys, "--version") == (0, f"inspector {__version__}\n", "")
    code, _out, err = _run(capsys, "query", "/x", "--preset", "nope")  # the subcommand's
    assert code == 2 and err.startswith("inspector: query: argument --preset: invalid"), err
    for args in (("query", "/x", "--no-such-option"), ("/x", "--no-such-option")):
        code, _out, err = _run(capsys, *args)
        assert code == 2 and err.startswith("inspector: unrecognized arguments"), err


def test_malformed_scope_map_is_one_line(capsys, demo_path, tmp_path):
    bad = tmp_path / "map.json"
    bad.write_text('{"a": [1, 2]}')
    code, _, err = _run(capsys, "query", str(demo_path), "--text", "x", "--scope-map", str(bad),
                        "--scope-strategy", "map", "--scope", "a")
    assert code == 2 and "must map to a list of strings" in err


def test_every_command_leaves_the_store_byte_identical(capsys, random_store, tmp_path):
    path = random_store(n=120)  # no full-text index: fts/hybrid build a private one elsewhere
    vec = json.dumps([0.1] * 8)
    smap = tmp_path / "map.json"
    smap.write_text(json.dumps({"team": ["repo1", "repo2/docs"]}))
    checks = tmp_path / "checks.json"
    checks.write_text(json.dumps({"format": "inspector-checks", "version": 1,
                                  "store": str(path), "checks": [
                                      {"name": "c", "vector_of": "m0003", "scope": "repo1",
                                       "assert": ["rawCandidates > 0"]}]}))
    before = snapshot(path)
    commands = [
        ["tables", str(path)], ["tables", str(path), "--json"],
        ["query", str(path), "--vector", vec],
        ["query", str(path), "--vector", vec, "--text", "keys", "--mode", "hybrid", "--json"],
        ["query", str(path), "--text", "tokens", "--mode", "fts", "--scope", "repo1",
         "--filter", "pushdown"],
        ["query", str(path), "--vector-of", "m0003", "--scope", "team", "--scope-strategy",
         "map", "--scope-map", str(smap), "--filter", "pushdown", "--expect", "m0007"],
        ["query", str(path), "--vector", vec, "--distance", "cosine", "--preset",
         "other-plugin", "--scope", "x", "--scope-column", "repo"],
        ["versions", str(path)],
        ["diff-versions", str(path), "--from", "1", "--vector", vec],
        ["sweep", str(path), "--vector", vec, "--scope", "repo1", "--grid-overfetch", "1,2",
         "--grid-blend", "0,0.5", "--json"],
        ["report", str(path), "--vector", vec, "--text", "keys", "--scope", "repo1",
         "--against", "filter=pushdown", "--out", str(tmp_path / "out" / "r")],
        ["check", str(checks)],
        ["shot", str(path), "--vector-of", "m0003", "--out", str(tmp_path / "shot.png"),
         "--size", "800x600"],
    ]
    for cmd in commands:
        code, _, err = _run(capsys, *cmd)
        assert code == 0, (cmd, err)
    assert snapshot(path) == before
    cache = Path(os.environ["INSPECTOR_CACHE_DIR"])
    assert any(cache.rglob("*.lance"))  # the full-text index went to the app's cache
    settings = Path(os.environ["XDG_CONFIG_HOME"])  # redirected by tests/conftest.py
    assert not [p for p in settings.rglob("*") if p.is_file()]  # `shot` saved no settings


def test_presets_and_tables_commands(capsys, demo_path):
    code, out, _ = _run(capsys, "presets")
    assert code == 0 and "min(limit*3, 50)" in out and "docs-pushdown" in out
    code, out, _ = _run(capsys, "tables", str(demo_path), "--json")
    t, ix = json.loads(out)
    assert t["name"] == "memories" and t["rows"] == 3024 and t["roles"]["importance"] == \
        "importance"
    assert t["vector_indexes"] == [] and ix["vector_indexes"][0]["type"] == "IVF_PQ"


def test_demo_command_and_python_dash_m(tmp_path, capsys):
    target = tmp_path / "fresh"
    env = {**os.environ, "INSPECTOR_CACHE_DIR": str(tmp_path / "c")}
    done = subprocess.run([sys.executable, "-m", "inspector", "demo", str(target)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (target / "memories.lance").is_dir()
    capsys.readouterr()
    assert main(["query", str(target), "--text", SCOPE_QUERY, "--json"]) == 0  # in-process
    out = capsys.readouterr()
    assert json.loads(out.out)["counters"]["returned"] == 10 and out.err == ""


def test_demo_without_a_path_writes_then_reuses_the_data_folder_store(tmp_path, capsys,
                                                                       monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(data))
    code, out, err = _run(capsys, "demo")
    assert code == 0, err
    store = data / "demo-store-v2"
    assert f"demo store written to {store}\n" in out and (store / "memories.lance").is_dir()
    assert "INSPECTOR_DATA_DIR" in out
    before = snapshot(store)
    code, out, err = _run(capsys, "demo")
    assert code == 0 and f"demo store already in {store}\n" in out, err
    assert snapshot(store) == before  # opened, not written again
    line = [x for x in out.splitlines() if x.strip().startswith("inspector query")][0]
    import shlex

    assert main(shlex.split(line.strip())[1:] + ["--json"]) == 0  # the suggested command runs
    assert json.loads(capsys.readouterr().out)["counters"]["returned"] == 0  # the scoped miss
