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
    assert doc["schema"] == 3
    assert doc["store"] == {"uri": str(demo_path), "table": "memories", "version": 2,
                            "rows": 3024, "index": None}
    assert [s["name"] for s in doc["stages"]] == ["scope_rule", "fetch", "scope", "blend",
                                                  "min_score", "final"]
    params = doc["params"]
    assert params["stages"]["fetch"]["mode"] == "hybrid"
    assert params["stages"]["scope_rule"]["pushdown"] is False
    assert params["settings"]["tie_rule"] == "id"  # the docs engine's fusion: ties by id
    assert all({"stage", "ids", "score", "at_cut"} <= set(g) for g in doc["ties"])
    fetch = doc["stages"][1]
    assert {k: fetch["facts"][k] for k in ("depth", "vec_k", "fts_k")} == \
        {"depth": 10, "vec_k": 20, "fts_k": 20}
    raw = fetch["candidates"]
    assert len(raw) == 10 and [c["rank"] for c in raw] == list(range(1, 11))
    assert {"id", "rank", "score", "inputs", "scope", "importance"} <= set(raw[0])
    assert {"vec_rank", "distance", "vector", "fused"} <= set(raw[0]["inputs"])
    assert doc["stages"][2]["facts"] == {"rawCandidates": 10, "scopedCandidates": 0,
                                         "filteredByScope": 10}
    assert doc["counters"] == {"fetch": 10, "scope": 0, "blend": 0, "min_score": 0,
                               "final": 0, "returned": 0}
    d = doc["diagnosis"]
    assert d["code"] == "filter_after_cut" and d["stage"] == "scope" and d["first_at"] == 25
    assert ["--set", "scope_rule.pushdown=true"] in [f["argv"] for f in d["fixes"]]
    (e,) = doc["expect"]
    # another repo's row: outside the asked scope by the rule the scope filter applies, so
    # no change is searched (none returns it)
    assert e["id"] == "agent-memory-theme-far" and e["reason"] == "out_of_scope"
    assert e["dropped_at"] == "scope" and e["tried"] == 0
    assert e["detail"] == {"rule": "repo 'agent-memory' != 'vault-agent'",
                           "scope": "agent-memory"}
    assert e["fix"] is None and "no change" in e["no_fix"]


def test_json_scores_are_the_formula_values_unrounded(capsys, demo_path):
    code, out, _ = _run(capsys, "query", str(demo_path), "--text", "editor theme",
                        "--blend", "0.5", "--limit", "3", "--json")
    assert code == 0
    blend = next(s for s in json.loads(out)["stages"] if s["name"] == "blend")
    for c in blend["candidates"]:
        inputs = c["inputs"]
        assert inputs["vector"] == 1 / (1 + inputs["distance"])
        imp = 0.7 if c["importance"] is None else min(1.0, max(0.0, c["importance"]))
        assert inputs["multiplier"] == 0.5 + 0.5 * imp
        assert c["score"] == inputs["vector"] * inputs["multiplier"]


def test_text_output_shows_every_stage(capsys, demo_path):
    code, out, _ = _run(capsys, "query", str(demo_path), "--text", SCOPE_QUERY, "--scope",
                        "vault-agent", "--overfetch", "3")
    assert code == 0
    for title in ("== fetch (lancedb_pool) · 30 row(s)", "== scope (scope_filter) · 4 row(s)",
                  "== blend (importance_blend)", "== final (limit) · 4 row(s)",
                  "diagnosis: filter_after_cut: 4 results of limit 10",
                  "fix: fetch.cap 50 → 134, fetch.overfetch 3 → 13.4"):
        assert title in out, title


def test_a_tie_at_the_cut_says_who_orders_it(capsys, demo_path):
    """The tie story: two rows at one distance across a limit of 1. LanceDB's flat vector
    search orders them by row id (not at random); the text says so, as the JSON does."""
    args = ("query", str(demo_path), "--preset", "memory-plugin", "--limit", "1", "--text",
            "what timezone is the user in")
    code, out, _ = _run(capsys, *args)
    line = next(x for x in out.splitlines() if x.startswith("tie at the cut"))
    assert "keeps 1 of 2 rows" in line and "arbitrary" not in line
    (tie,) = [t for t in json.loads(_run(capsys, *args, "--json")[1])["ties"] if t["at_cut"]]
    assert not tie["arbitrary"] and line.endswith(f"order: {tie['order']}")
    assert tie["order"] == "row id (LanceDB's flat vector search)"


@pytest.mark.parametrize("args,message", [
    (["query", "/nonexistent/store", "--text", "x"], "does not exist"),
    (["query", "{demo}", "--vector", "[1, 2]"],
     "has 2 dimensions but the store's vectors have 256"),
    (["query", "{demo}", "--vector", "[1, oops]"], "JSON array"),
    (["query", "{demo}", "--text", "x", "--table", "nope"], "tables: memories"),
    (["query", "{demo}", "--text", "x", "--blend", "2"],
     "blend.weight must be a finite number in [0, 1]"),
    (["query", "{demo}", "--text", "x", "--overfetch", "0.5"],
     "fetch.overfetch must be a finite number in [1, 1,000,000]"),
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
