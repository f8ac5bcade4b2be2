"""`inspector mcp`, driven by the MCP SDK's own client over stdio against a real subprocess on
a copy of a real system's store: every tool answers what the command line answers for the
same question, errors come back as tool errors, and the store is left byte for byte."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from inspector.cli.main import main
from tests.core.engine.flow.fixtures import fixture_copy
from tests.storekit import snapshot

pytest.importorskip("mcp.server.mcpserver", reason="the optional extra 'mcp' is not installed")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

NOW = 1796113038032
PG = {"text": "postgres connection pool size", "vector_of": "a1", "scopes": ["agent:main"],
      "now": NOW, "preset": "memory-lancedb-pro"}
PG_ARGS = ["--text", "postgres connection pool size", "--vector-of", "a1", "--scope",
           "agent:main", "--now", str(NOW), "--preset", "memory-lancedb-pro"]
# a classic preset whose scope post-filter starves the query; the options set its stages
CLASSIC = {"preset": "memory-plugin", "vector_of": "a1", "limit": 3, "now": NOW,
           "scopes": ["global"], "params": {"scope_strategy": "column",
                                            "scope_column": "scope", "filter": "post"}}
CLASSIC_ARGS = ["--preset", "memory-plugin", "--vector-of", "a1", "--limit", "3", "--now",
                str(NOW), "--scope", "global", "--scope-strategy", "column", "--scope-column",
                "scope", "--filter", "post"]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _server() -> StdioServerParameters:
    exe = Path(sys.executable).with_name("inspector")
    command, args = (str(exe), ["mcp"]) if exe.exists() else \
        (sys.executable, ["-m", "inspector", "mcp"])
    env = {k: os.environ[k] for k in ("INSPECTOR_CACHE_DIR", "INSPECTOR_DATA_DIR",
                                      "XDG_CONFIG_HOME")}  # the suite's private folders
    return StdioServerParameters(command=command, args=args,
                                 env={**env, "LANCEDB_LOG": "error"})


def _calls(calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[Any]]:
    """Start `inspector mcp`, list its tools, make each call; (tool names, results)."""
    async def go() -> tuple[list[str], list[Any]]:
        async with Client(_server(), read_timeout_seconds=300) as client:
            tools = await client.list_tools()
            names = sorted(t.name for t in tools.tools)
            assert all(t.annotations.read_only_hint for t in tools.tools)
            return names, [await client.call_tool(n, a) for n, a in calls]

    return anyio.run(go)


def test_the_tools_answer_what_the_command_line_answers(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fx = fixture_copy("memory-lancedb-pro", tmp_path)
    store = str(fx / "store")
    before = snapshot(fx / "store")
    names, (opened, full, short, fixed, why, audited) = _calls([
        ("open_store", {"store": store}),
        ("query", {"store": store, **PG, "max_rows": 1000}),
        ("query", {"store": store, **PG, "max_rows": 2}),
        ("query", {"store": store, **CLASSIC, "max_rows": 1000}),
        ("explain", {"store": store, "id": "a4", **PG}),
        ("audit", {"store": store, "kind": "recall", "preset": "memory-lancedb-pro",
                   "sample": 5, "now": NOW}),
    ])
    assert names == ["audit", "explain", "open_store", "query"]
    results = (opened, full, short, fixed, why, audited)
    assert not any(r.is_error for r in results), [r.content for r in results if r.is_error]

    assert opened.structured_content["tables"] == cli(capsys, "tables", store, "--json")
    assert "memory-lancedb-pro" in opened.structured_content["presets"]

    want = cli(capsys, "query", store, *PG_ARGS, "--json")
    got = dict(full.structured_content)
    assert got.pop("final") == [{"rank": c["rank"], "id": c["id"], "score": c["score"]}
                                for c in want["stages"][-1]["candidates"]]
    assert got == want
    cut = short.structured_content
    assert cut["final"] == full.structured_content["final"]
    for st, w in zip(cut["stages"], want["stages"], strict=True):
        assert st["count"] == w["count"] and st["candidates"] == w["candidates"][:2]
        assert st["dropped"] == w["dropped"][:2]

    plain = cli(capsys, "query", store, *CLASSIC_ARGS, "--json")
    fixed_got = dict(fixed.structured_content)
    fixed_got.pop("final")
    assert fixed_got == plain and plain["diagnosis"]["code"] == "filter_after_cut"

    expect = cli(capsys, "query", store, *PG_ARGS, "--expect", "a4", "--json")
    assert why.structured_content["expect"] == expect["expect"]
    assert why.structured_content["diagnosis"] == expect["diagnosis"]
    assert why.structured_content["final"] == [c["id"] for c in
                                               expect["stages"][-1]["candidates"]]

    assert audited.structured_content == cli(capsys, "audit", "recall", store, "--preset",
                                             "memory-lancedb-pro", "--sample", "5", "--now",
                                             str(NOW), "--json")
    assert snapshot(fx / "store") == before


def test_each_fix_passed_back_returns_what_it_says(tmp_path: Path) -> None:
    """A classic preset starved by its scope post-filter: every fix the query tool lists
    (the system's own parameters and the what-ifs), passed back as set, widen and exact,
    returns the rows it said it returns."""
    fx = fixture_copy("memory-lancedb-pro", tmp_path)
    store = str(fx / "store")
    _, (first,) = _calls([("query", {"store": store, **CLASSIC})])
    fixes = first.structured_content["diagnosis"]["fixes"]
    assert {f["kind"] for f in fixes} == {"own", "what_if"}
    _, applied = _calls([("query", {"store": store, **CLASSIC, "set": f["changes"],
                                    "widen": f["widen"], "exact": f["exact"]})
                         for f in fixes])
    for f, got in zip(fixes, applied, strict=True):
        assert len(got.structured_content["final"]) == f["returns"]["count"], f["label"]
        assert [c["id"] for c in got.structured_content["final"]] == f["returns"]["ids"]


def test_bad_requests_come_back_as_tool_errors(tmp_path: Path) -> None:
    fx = fixture_copy("memory-lancedb-pro", tmp_path)
    store = str(fx / "store")
    _, results = _calls([
        ("query", {"store": str(tmp_path / "nowhere"), "preset": "memory-lancedb-pro",
                   "text": "x"}),
        ("audit", {"store": store, "preset": "memory-lancedb-pro", "sample": 0}),
        ("query", {"store": store, "preset": "memory-lancedb-pro"}),
        ("open_store", {"store": store, "table": "nope"}),
    ])
    said = [r.content[0].text for r in results]
    assert all(r.is_error for r in results), said
    for text, words in zip(said, ("No store at", "sample takes", "Give a query",
                                  "no table 'nope'"), strict=True):
        assert words in text, text


def test_without_the_extra_it_says_how_to_install_it(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "mcp.server.mcpserver", raising=False)
    monkeypatch.delitem(sys.modules, "mcp.server", raising=False)
    capsys.readouterr()
    assert main(["mcp"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "the optional extra `mcp`" in err and "pip install -e '" in err  # this clone


def test_the_install_hint_gives_the_command_for_how_it_was_installed(tmp_path: Path) -> None:
    """pipx has no `pip install` for its tools: its users are told `pipx inject`; a clone the
    editable install of itself; a wheel in an environment of the user's its pip (issue 32)."""
    from inspector.cli.serve import install_hint

    pkg = tmp_path / "site-packages" / "inspector"
    pkg.mkdir(parents=True)
    pipx = install_hint("/home/u/.local/share/pipx/venvs/memory-store-inspector", str(pkg))
    assert "pipx inject memory-store-inspector 'mcp>=2.3,<3'" in pipx and "pip install" not in pipx
    wheel = install_hint(str(tmp_path / "venv"), str(pkg))
    assert "pip install 'mcp>=2.3,<3' into the same environment" in wheel
    clone = tmp_path / "clone"
    (clone / "inspector").mkdir(parents=True)
    (clone / "pyproject.toml").write_text("[project]\n")
    here = install_hint(str(tmp_path / "venv"), str(clone / "inspector"))
    assert f"pip install -e '{clone}[mcp]'" in here
