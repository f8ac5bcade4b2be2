"""`inspector audit` over the classic presets (pipelines of the classic stages), on the demo
store and the store memory-lancedb-pro wrote: each audit finds what the store was built to
hide (the near-duplicate saved twice, the small repos starved by a global cut and the pushdown
or over-fetch that ends it, the scope crowded by the kafka rows of another agent), and every
probe's verdict, and every fix it lists, is what one
`inspector query --vector-of ID --text TEXT --scope S --expect ID` gives."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from inspector.core.stores.vectorscan import kernels as LM
from tests.core.engine.flow.fixtures import fixture_copy
from tests.storekit import snapshot


def cli(*argv: str) -> dict[str, Any]:
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code == 0, err.getvalue()
    return json.loads(buf.getvalue())


def texts(store: Path, table: str = "memories") -> dict[str, dict[str, Any]]:
    from inspector.core.stores.opening import open_store

    rows = open_store(str(store), table).table.to_arrow().drop(["vector"]).to_pylist()
    return {str(r["id"]): r for r in rows}


def single(store: Path, preset: str, rid: str, text: str | None, scope: Any, limit: int,
           *extra: str) -> dict[str, Any]:
    argv = ["query", str(store), "--preset", preset, "--vector-of", rid, "--limit", str(limit),
            "--expect", rid, "--json", *extra]
    if text:
        argv += ["--text", text]
    if scope is not None:
        argv += ["--scope", str(scope)]
    return cli(*argv)


def crowd_of(out: dict[str, Any], rows: dict[str, dict[str, Any]], column: str
             ) -> dict[str, int]:
    """The rows the query's scope filter removed, counted by their own scope value."""
    crowd: dict[str, int] = {}
    for st in out["stages"]:
        for d in st["dropped"]:
            if d["code"] == "out_of_scope":
                crowd[rows[d["id"]][column]] = crowd.get(rows[d["id"]][column], 0) + 1
    return crowd


@pytest.fixture(scope="module")
def blend_audit(demo_path: Path) -> dict[str, Any]:
    before = snapshot(demo_path)
    res = cli("audit", "recall", str(demo_path), "--preset", "importance-blend", "--sample",
              "300", "--seed", "0", "--fixes", "10", "--json")
    assert snapshot(demo_path) == before  # the audit writes nothing to the store
    return res


def test_the_copy_saved_twice_is_shadowed_by_its_twin(demo_path: Path) -> None:
    res = cli("audit", "recall", str(demo_path), "--preset", "memory-plugin", "--limit", "1",
              "--json")
    never = {r["id"]: r for r in res["never_recallable"]}
    assert res["probes"] == 3024 and res["counts"]["found"] == 3024 - len(never)
    twin = never["agent-memory-timezone-2"]
    assert twin["class"] == "shadowed" and twin["detail"]["by"] == "agent-memory-timezone-1"
    assert twin["detail"]["cosine"] == pytest.approx(1.0)
    assert res["scan"]["batched"] and res["scan"]["per_query"] == 0
    out = single(demo_path, "memory-plugin", "agent-memory-timezone-2", None, "main", 1)
    assert [c["id"] for c in out["stages"][-1]["candidates"]] == ["agent-memory-timezone-1"]
    assert out["expect"][0]["dropped_at"] == twin["stage"] == "fetch"
    assert twin["code"] == out["expect"][0]["reason"] == "not_fetched"


def test_each_fixed_probe_agrees_with_a_single_query(demo_path: Path,
                                                     blend_audit: dict[str, Any]) -> None:
    rows = texts(demo_path)
    never = blend_audit["never_recallable"]
    assert {"shadowed", "crowded_out"} <= {r["class"] for r in never}
    for p in never + blend_audit["found"][::40]:
        row = rows[p["id"]]
        out = single(demo_path, "importance-blend", p["id"], row["text"], row["agentId"], 10)
        ids = [c["id"] for c in out["stages"][-1]["candidates"]]
        e = out["expect"][0]
        if p["class"] == "found":
            assert ids.index(p["id"]) + 1 == p["rank"] and e["dropped_at"] is None
            continue
        assert p["id"] not in ids and e["dropped_at"] == p["stage"]
        assert e["reason"] == p["code"]
        fix = p["detail"]["fix"]  # the query's smallest change and alternatives, each run
        assert (fix["fix"], fix["alternatives"]) == (e["fix"], e["alternatives"])
        assert fix["fix"] is not None and p["id"] in single(
            demo_path, "importance-blend", p["id"], row["text"], row["agentId"], 10,
            *fix["fix"]["argv"])["stages"][-1]["candidates"][fix["fix"]["rank"] - 1]["id"]
        if p["class"] == "shadowed":
            assert p["detail"]["by"] in ids and p["detail"]["cosine"] > 0.85
        stage = next(s for s in out["stages"] if s["name"] == p["stage"])
        drop = next(d for d in stage["dropped"] if d["id"] == p["id"])
        assert (drop["code"], drop["rank"]) == (p["code"], p["detail"]["rank"])


def test_the_batched_scan_gives_what_per_probe_searches_give(demo_path: Path,
                                                             blend_audit: dict[str, Any]
                                                             ) -> None:
    slow = cli("audit", "recall", str(demo_path), "--preset", "importance-blend", "--sample",
               "300", "--seed", "0", "--fixes", "10", "--no-scan", "--json")
    how = blend_audit["scan"]  # each probe in its own agent's scope: most found by the
    assert how["batched"] and how["shortcut"] > 250  # outrank shortcut, the others scanned
    assert how["scanned"] + how["shortcut"] == 300 and not how["per_query"]
    assert not slow["scan"]["batched"] and "turned off" in slow["method"]
    assert blend_audit["fixes"] == 6  # every never-recalled memory's fix: from one deep scan
    for key in ("counts", "by_scope", "never_recallable", "found"):  # and its own searches
        assert blend_audit[key] == slow[key], key


def test_a_post_filter_starves_small_repos_and_pushdown_ends_it(demo_path: Path) -> None:
    res = cli("audit", "scopes", str(demo_path), "--preset", "docs-before-fix", "--per-scope",
              "4", "--fixes", "16", "--json")  # one example of each of the 16 repos
    scopes = {s["scope"]: s for s in res["scopes"]}
    vault = scopes["vault-agent"]
    assert res["pushdown_available"] and res["leak_total"] == 0
    assert vault["probes"] == 4 and vault["short"] >= 3
    assert vault["ended_by_pushdown"] == vault["short"]
    assert vault["examples"][0]["fixes"][0] == "scope_rule.pushdown false → true: returns " \
        "10 of 10"  # the system's own flag first
    rows = texts(demo_path)
    for e in vault["examples"]:
        row = rows[e["id"]]
        out = single(demo_path, "docs-before-fix", e["id"], row["text"], "vault-agent", 10)
        assert out["counters"]["returned"] == e["returned"] < 10
        assert crowd_of(out, rows, "repo") == e["crowded_by"]
        if e["fixes"] is not None:  # the first short example of each scope gets the fixes
            assert [f["label"] for f in out["diagnosis"]["fixes"]] == e["fixes"]
        pushed = single(demo_path, "docs-before-fix", e["id"], row["text"], "vault-agent", 10,
                        "--filter", "pushdown")
        assert pushed["counters"]["returned"] == e["with_pushdown"] == 10
    fixed = cli("audit", "scopes", str(demo_path), "--preset", "docs-pushdown", "--per-scope",
                "4", "--json")
    assert not fixed["pushdown_available"]
    assert {s["scope"]: s["short"] for s in fixed["scopes"]}["vault-agent"] == 0


def test_the_kafka_crowd_starves_the_main_agent_under_a_global_cut(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """On the plugin's own store, other-plugin filters `scope` after its cut: agent:main's
    kafka memories come back alone, the pool full of agent:ops's 240 kafka rows."""
    fx = fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("kafka")) / "store"
    res = cli("audit", "scopes", str(fx), "--preset", "other-plugin", "--limit", "5",
              "--per-scope", "300", "--json")
    main_ = next(s for s in res["scopes"] if s["scope"] == "agent:main")
    assert main_["short"] > 0 and main_["ended_by_pushdown"] == main_["short"]
    rows = texts(fx)
    assert main_["examples"][0]["fixes"] is not None  # the second most starved scope
    for e in main_["examples"]:
        assert max(e["crowded_by"], key=e["crowded_by"].get) == "agent:ops"
        if e["fixes"] is None:  # past the first --fixes N examples, one a scope first
            continue
        assert any("fetch.overfetch" in f for f in e["fixes"])  # its own over-fetch
        out = single(fx, "other-plugin", e["id"], rows[e["id"]]["text"], "agent:main", 5)
        assert out["counters"]["returned"] == e["returned"]
        scope = next(s for s in out["stages"] if s["name"] == "scope")
        assert scope["facts"]["filteredByScope"] == sum(e["crowded_by"].values())
        assert [f["label"] for f in out["diagnosis"]["fixes"]] == e["fixes"]


def test_the_small_repo_a_global_cut_crowds_out_on_the_docs_store_openclaw_mem_wrote(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The real docs store (SQLite, 6 repos): before the fix the plugin cut the global top 10
    and filtered the repo afterwards, so steamer-card-engine (9 chunks) starves; pushing the
    repo into the search ends it. Every short probe is what `inspector query` returns."""
    fx = fixture_copy("openclaw-mem", tmp_path_factory.mktemp("docs")) / "docs.sqlite"
    before = snapshot(fx.parent)
    res = cli("audit", "scopes", str(fx), "--preset", "docs-before-fix", "--per-scope", "9",
              "--json")
    assert snapshot(fx.parent) == before
    scopes = {s["scope"]: s for s in res["scopes"]}
    small = scopes["steamer-card-engine"]
    assert small["memories"] == small["probes"] == 9
    assert small["short"] >= 5 and small["ended_by_pushdown"] == small["short"]
    assert max(scopes, key=lambda s: scopes[s]["short"] / scopes[s]["probes"]) == \
        "steamer-card-engine"  # the most starved repo is the small one
    assert res["leak_total"] == 0
    rows = texts(fx, "docs_chunks")
    for short in small["short_ids"]:
        rid = short["id"]
        out = single(fx, "docs-before-fix", rid, rows[rid]["text"], "steamer-card-engine", 10)
        assert out["counters"]["returned"] == short["returned"] < 10
        pushed = single(fx, "docs-before-fix", rid, rows[rid]["text"], "steamer-card-engine",
                        10, "--filter", "pushdown")
        assert pushed["counters"]["returned"] > short["returned"]
    for e in small["examples"]:
        out = single(fx, "docs-before-fix", e["id"], rows[e["id"]]["text"],
                     "steamer-card-engine", 10)
        assert crowd_of(out, rows, "repo") == e["crowded_by"]
        assert [f["label"] for f in out["diagnosis"]["fixes"]] == e["fixes"]


def test_the_readme_shows_what_the_audit_prints_on_the_demo_store(demo_path: Path) -> None:
    import shlex

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("inspector audit recall STORE"))
    assert lines[at + 1:at + 3] == ["```", "```"]
    end = lines.index("```", at + 3)
    shown = lines[at + 3:end]
    argv = [str(demo_path) if a == "STORE" else a for a in shlex.split(lines[at])[1:]]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    assert buf.getvalue().splitlines() == shown
    assert any("agent-memory-timezone-2" in x and "shadowed" in x for x in shown)


def test_an_indexed_table_is_searched_per_probe_and_says_why(demo_path: Path) -> None:
    res = cli("audit", "recall", str(demo_path), "--table", "memories_indexed", "--preset",
              "memory-plugin", "--sample", "20", "--json")
    assert not res["scan"]["batched"] and res["scan"]["per_query"] == 20
    assert "vector index" in res["method"]


def test_batched_and_per_probe_audits_agree_on_a_cosine_scope_column(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """other-plugin: cosine, the scope column post-filtered, pool and diagnosis probe from
    one deep search."""
    store = fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("shapes")) / "store"
    argv = ["audit", "recall", str(store), "--preset", "other-plugin", "--limit", "5",
            "--json"]
    fast, slow = cli(*argv), cli(*argv, "--no-scan")
    if LM.reproduced("cosine"):
        assert fast["scan"]["batched"] and fast["scan"]["per_query"] == 0
    else:  # cosine is not scanned on this processor (no AVX-512F): each probe searched
        assert fast["scan"]["scanned"] == 0 and fast["scan"]["per_query"] > 0
    assert slow["scan"]["scanned"] == 0
    for key in ("counts", "never_recallable", "found"):
        assert fast[key] == slow[key], key


def test_hybrid_probes_get_the_same_answer_from_the_scan(demo_path: Path) -> None:
    """docs-before-fix (hybrid, post-filtered): every probe's whole answer, the returned list
    included, is the same with its vector leg from the scan as from its own search."""
    from inspector.core.analysis.audit import Prober
    from inspector.core.engine.flow.spec import load_shipped
    from inspector.core.stores.opening import open_store

    store = open_store(str(demo_path), "memories")
    fast, slow = (Prober(store, load_shipped("docs-before-fix"), 10, 0.0, scan=s)
                  for s in (True, False))
    mem = fast.read(40, 5)
    scopes = [(str(mem.scopes[i]),) for i in mem.picked]
    fast.prepare(mem, mem.picked, scopes)
    slow.prepare(mem, mem.picked, scopes)
    for i, s in zip(mem.picked, scopes, strict=True):
        assert fast.ask(mem, i, s) == slow.ask(mem, i, s)
    assert fast.method()["scanned"] == 40 and slow.method()["per_query"] == 40
