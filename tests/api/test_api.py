"""The Python API (`import inspector`): the same engine as the command line, answer for answer.
Every query here is also run as `inspector query ... --json` and the two objects must be equal;
audits likewise against `inspector audit KIND --json`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import inspector
from inspector.core.errors import InspectorError
from tests.clikit import cli_json
from tests.core.engine.flow.fixtures import fixture_copy

NOW = "1796113038032"


cli = cli_json


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("api"))


@pytest.fixture(scope="module")
def pro(fx: Path) -> inspector.Store:
    return inspector.open(str(fx / "store"), table="memories")


@pytest.fixture(scope="module")
def demo(demo_path: Path) -> inspector.Store:
    return inspector.open(str(demo_path))


def test_import_is_cheap_and_never_loads_qt(demo_path: Path) -> None:
    code = ("import sys, inspector\n"
            "heavy = ('lancedb', 'pyarrow', 'numpy', 'PySide6', 'inspector.api')\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in heavy or m in heavy]\n"
            "r = inspector.query(sys.argv[1], text='deploy', preset='memory-plugin', limit=3)\n"
            "assert 'lancedb' in sys.modules and r.final_ids is not None\n"
            "qt = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'pyqtgraph', 'superqt') or m.startswith('inspector.qt')]\n"
            "assert not qt, qt\n")
    r = subprocess.run([sys.executable, "-c", code, str(demo_path)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(inspector.__all__) == sorted(["__version__", "open", "query", "audit",
                                                "tables", "Store", "Result", "AuditResult"])


# Each case: API keywords and the same query as command-line options.
DEMO_CASES = [
    ({"text": "how do I rotate the signing keys for service tokens", "preset": "docs-before-fix",
      "scope": "vault-agent", "limit": 10},
     ["--text", "how do I rotate the signing keys for service tokens", "--preset",
      "docs-before-fix", "--scope", "vault-agent", "--limit", "10"]),
    ({"text": "which editor theme does the user prefer", "preset": "importance-blend",
      "limit": 5, "min_score": 0.0, "blend": 0.0, "expect": ["agent-memory-theme-far"]},
     ["--text", "which editor theme does the user prefer", "--preset", "importance-blend",
      "--limit", "5", "--min-score", "0", "--blend", "0", "--expect", "agent-memory-theme-far"]),
    ({"text": "what timezone is the user in", "preset": "memory-plugin", "limit": 1,
      "set": {"fetch.overfetch": 3}},
     ["--text", "what timezone is the user in", "--preset", "memory-plugin", "--limit", "1",
      "--set", "fetch.overfetch=3"]),
    ({"vector_of": "agent-memory-timezone-2", "mode": "vector", "overfetch": 2.5, "limit": 4,
      "filter": "pushdown", "scope": "vault-agent"},
     ["--vector-of", "agent-memory-timezone-2", "--mode", "vector", "--overfetch", "2.5",
      "--limit", "4", "--filter", "pushdown", "--scope", "vault-agent"]),
]


@pytest.mark.parametrize("kw,argv", DEMO_CASES)
def test_fixed_pipeline_equals_the_command_line(demo: inspector.Store, demo_path: Path,
                                                kw: dict[str, Any], argv: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    r = demo.query(**kw)
    assert r.engine == "fixed"
    want = cli(capsys, "query", str(demo_path), *argv, "--json")
    assert r.to_json() == want
    assert r.stages == ["raw", "scoped", "blended", "final"]
    assert r.final_ids == [c["id"] for c in want["stages"][-1]["candidates"]]
    assert r.counts == {s["name"]: s["count"] for s in want["stages"]}
    for s in want["stages"]:
        t = r.table(s["name"])
        assert t.num_rows == s["count"]
        assert t.column("id").to_pylist() == [c["id"] for c in s["candidates"]]
        assert t.column("rank").to_pylist() == [c["rank"] for c in s["candidates"]]


def test_module_level_query_is_open_then_query(demo_path: Path, demo: inspector.Store) -> None:
    kw = {"text": "what timezone is the user in", "preset": "memory-plugin", "limit": 2}
    assert inspector.query(demo_path, **kw).to_json() == demo.query(**kw).to_json()
    assert inspector.query(demo, **kw).to_json() == demo.query(**kw).to_json()


def _pro_case(fx: Path) -> tuple[dict[str, Any], list[str]]:
    real = json.loads((fx / "real_results.json").read_text(encoding="utf-8"))
    q = next(x for x in real["queries"] if x.get("scopeFilter"))
    vec = json.loads((fx / f"{q['vector']}.json").read_text(encoding="utf-8"))
    kw = {"text": q["text"], "vector": vec, "limit": q["limit"], "now": int(NOW),
          "scopes": q["scopeFilter"]}
    argv = ["--text", q["text"], "--vector", f"@{fx / (q['vector'] + '.json')}", "--limit",
            str(q["limit"]), "--now", NOW, "--scope-list", json.dumps(q["scopeFilter"])]
    return kw, argv


@pytest.mark.parametrize("preset,extra_kw,extra_argv", [
    ("memory-lancedb-pro", {}, []),
    ("memory-lancedb-pro-cli", {"set": {"source": "auto-recall"}}, ["--set", "source=auto-recall"]),
    ("memory-lancedb-pro", {"expect": ["a6"]}, ["--expect", "a6"]),
])
def test_pipeline_of_stages_equals_the_command_line(
        fx: Path, pro: inspector.Store, preset: str, extra_kw: dict[str, Any],
        extra_argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    kw, argv = _pro_case(fx)
    r = pro.query(preset=preset, **kw, **extra_kw)
    assert r.engine == "flow"
    want = cli(capsys, "query", str(fx / "store"), "--table", "memories", "--preset", preset,
               *argv, *extra_argv, "--json")
    assert r.to_json() == want
    assert r.stages == [s["name"] for s in want["stages"]]
    assert r.final_ids == [c["id"] for c in want["stages"][-1]["candidates"]]
    for s in want["stages"]:
        t = r.table(s["name"])
        assert t.num_rows == s["count"]
        assert t.column("id").to_pylist() == [c["id"] for c in s["candidates"]]
        assert r.dropped(s["name"]).num_rows == len(s["dropped"])
    html = r._repr_html_()
    assert f"<b>{len(r.final_ids)} of {r.limit}</b>" in html
    assert want["diagnosis"]["code"] in html


def test_system_config_and_iso_clock(fx: Path, pro: inspector.Store, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    import datetime as dt

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"retrieval": {"minScore": 0.2}}))
    kw, argv = _pro_case(fx)
    kw["now"] = dt.datetime.fromtimestamp(int(NOW) / 1000, dt.UTC)
    r = pro.query(preset="memory-lancedb-pro", system_config=config, **kw)
    want = cli(capsys, "query", str(fx / "store"), "--table", "memories", "--preset",
               "memory-lancedb-pro", "--system-config", str(config), *argv, "--json")
    assert r.to_json() == want


@pytest.mark.parametrize("kind,kw,argv", [
    ("recall", {"sample": 12, "limit": 5}, ["--sample", "12", "--limit", "5"]),
    ("scopes", {"per_scope": 2}, ["--per-scope", "2"]),
    ("change", {"sample": 12, "set": {"min_score_and_unexpired.min": 0.6}},
     ["--sample", "12", "--set", "min_score_and_unexpired.min=0.6"]),
])
def test_audits_equal_the_command_line(fx: Path, pro: inspector.Store, kind: str,
                                       kw: dict[str, Any], argv: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    res = pro.audit(kind, preset="memory-lancedb-pro", now=NOW, **kw)
    want = cli(capsys, "audit", kind, str(fx / "store"), "--table", "memories", "--preset",
               "memory-lancedb-pro", "--now", NOW, *argv, "--json")
    assert res.to_json() == want
    assert res.table().num_rows == len(want[{"recall": "never_recallable", "scopes": "scopes",
                                             "change": "improved_ids"}[kind]])
    assert "<table>" in res._repr_html_()


def test_to_pandas_says_what_is_missing(demo: inspector.Store,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    r = demo.query(text="what timezone is the user in", preset="memory-plugin", limit=2)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(InspectorError, match=r"pip install 'memory-store-inspector\[pandas\]'"):
        r.to_pandas("raw")


def test_to_pandas_when_installed(demo: inspector.Store) -> None:
    """pandas is in the test extra: this runs, it never skips."""
    import pandas  # noqa: F401 - a missing pandas is a failure here, not a skip

    r = demo.query(text="what timezone is the user in", preset="memory-plugin", limit=2)
    assert list(r.to_pandas("raw")["id"]) == r.table("raw").column("id").to_pylist()


@pytest.mark.parametrize("kw,message", [
    ({"text": "x", "bogus": 1}, "Unknown query option 'bogus'"),
    ({"text": "x", "preset": "nope"}, "Unknown preset 'nope'"),
    ({"text": "x", "preset": "memory-plugin", "now": 5}, "pipelines of stages"),
    ({"text": "x", "preset": "memory-plugin", "scopes": ["a", "b"]}, "one scope"),
    ({"text": "x", "preset": "memory-plugin", "scopes": []}, "one scope"),
    ({"vector": [1.0], "vector_of": "a"}, "either vector or vector_of"),
    ({"text": "x", "scope": "a", "scopes": ["a"]}, "not both"),
    ({"text": "x", "preset": "memory-lancedb-pro", "overfetch": 2}, "overfetch set the fixed"),
    ({"vector": [1e39, 0.0]}, "float32"),
])
def test_bad_input_is_one_sentence(demo: inspector.Store, kw: dict[str, Any],
                                   message: str) -> None:
    with pytest.raises(InspectorError, match=message) as exc:
        demo.query(**kw)
    assert "\n" not in str(exc.value)


def test_unknown_stage_and_audit_errors(demo: inspector.Store) -> None:
    r = demo.query(text="what timezone is the user in", preset="memory-plugin", limit=2)
    with pytest.raises(InspectorError, match="no stage 'nope'; the stages are raw"):
        r.table("nope")
    with pytest.raises(InspectorError, match="takes one scope"):
        demo.audit("recall", preset="memory-plugin", scopes=["main", "ops"])
    with pytest.raises(InspectorError, match="kind is one of"):
        demo.audit("everything", preset="memory-lancedb-pro")


def test_html_escapes_every_field() -> None:
    evil = "<script>alert(1)</script>"
    data = {"store": {"uri": evil, "table": evil}, "params": {"limit": 3},
            "diagnosis": {"code": evil, "message": evil}, "warnings": [evil],
            "stages": [{"name": evil, "count": 1, "candidates": [
                {"id": evil, "rank": 1, "score": 0.5}]}]}
    html = inspector.Result(data, "fixed", label=evil)._repr_html_()
    assert "<script" not in html
    assert html.count("&lt;script&gt;") >= 7
    assert "<b>1 of 3</b>" in html


def test_a_fixed_preset_audit_equals_the_command_line(demo: inspector.Store, demo_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    res = demo.audit("recall", preset="memory-plugin", limit=1, sample=40, seed=2)
    want = cli(capsys, "audit", "recall", str(demo_path), "--preset", "memory-plugin",
               "--limit", "1", "--sample", "40", "--seed", "2", "--json")
    assert res.to_json() == want and want["engine"] == "fixed" and want["probes"] == 40
