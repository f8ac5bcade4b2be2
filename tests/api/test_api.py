"""The Python API (`import inspector`): the same engine as the command line, answer for answer.
Every query here is also run as `inspector query ... --json` and the two objects must be equal;
audits likewise against `inspector audit KIND --json`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import inspector
from inspector.core.errors import InspectorError
from tests.clikit import cli_json
from tests.conftest import ROOT
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


# Each case: API keywords and the same query as command-line options. Every preset runs in
# the one engine; no preset named is LanceDB's own search (pipeline lancedb).
TEXT = "how do I rotate the signing keys for service tokens"
DEMO_CASES = [
    ({"text": TEXT, "preset": "docs-before-fix", "scope": "vault-agent", "limit": 10},
     ["--text", TEXT, "--preset", "docs-before-fix", "--scope", "vault-agent", "--limit", "10"]),
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
    ({"text": TEXT, "preset": "docs-overfetch", "scope": "vault-agent", "limit": 10,
      "overfetch": 2.0, "cap": 30, "rrf_k": 20, "fixes": False},
     ["--text", TEXT, "--preset", "docs-overfetch", "--scope", "vault-agent", "--limit", "10",
      "--overfetch", "2", "--cap", "30", "--rrf-k", "20", "--fixes", "off"]),
    ({"text": TEXT, "preset": "docs-before-fix", "scope": "vault-agent", "limit": 10,
      "widen": {"fetch": 56}, "index_facet": "on"},
     ["--text", TEXT, "--preset", "docs-before-fix", "--scope", "vault-agent", "--limit", "10",
      "--widen", "fetch=56", "--index-facet", "on"]),
    ({"text": "what timezone is the user in", "limit": 3, "exact": True, "tie_rule": "id",
      "min_score": 0.2},
     ["--text", "what timezone is the user in", "--limit", "3", "--exact", "--tie-rule", "id",
      "--min-score", "0.2"]),
]


@pytest.mark.parametrize("kw,argv", DEMO_CASES)
def test_every_preset_answers_what_the_command_line_answers(
        demo: inspector.Store, demo_path: Path, kw: dict[str, Any], argv: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    r = demo.query(**kw, now=int(NOW))  # the clock is in the answer: the same on both sides
    want = cli(capsys, "query", str(demo_path), *argv, "--now", NOW, "--json")
    assert want["schema"] == 3
    assert r.to_json() == want
    assert r.pipeline == want["pipeline"]["name"]
    assert r.stages == [s["name"] for s in want["stages"]]
    assert r.final_ids == [c["id"] for c in want["stages"][-1]["candidates"]]
    assert r.counts == {s["name"]: s["count"] for s in want["stages"]}
    assert r.diagnosis.to_json() == want["diagnosis"]
    assert [f.argv for f in r.fixes] == [f["argv"] for f in want["diagnosis"]["fixes"]]
    assert r.expected == want["expect"]
    assert (r.index_facet.to_json() if r.index_facet else None) == want["index_facet"]
    for s in want["stages"]:
        t = r.table(s["name"])
        assert t.num_rows == s["count"]
        assert t.column("id").to_pylist() == [c["id"] for c in s["candidates"]]
        assert t.column("rank").to_pylist() == [c["rank"] for c in s["candidates"]]
        assert r.dropped(s["name"]).num_rows == len(s["dropped"])


def test_the_query_runs_the_pipeline_and_builds_nothing_else_until_asked(
        demo: inspector.Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows, the stage tables and the repr come from the run alone: no diagnosis, no fix
    search, no JSON on the query path (the former API built and re-parsed the JSON answer on
    every call); the diagnosis, its fixes and the JSON come when first read."""
    from inspector.core.engine.flow import answer as flow_answer
    from inspector.core.engine.flow.insight import diagnosis as flow_diagnosis

    def refused(*a: Any, **k: Any) -> Any:
        raise AssertionError("built on the query path")

    with monkeypatch.context() as m:
        m.setattr(flow_diagnosis, "diagnose", refused)
        m.setattr(flow_answer, "to_json", refused)
        r = demo.query(text=TEXT, preset="docs-before-fix", scope="vault-agent", limit=10)
        assert r.final_ids == [] and r.counts["fetch"] == 10
        assert r.table("fetch").num_rows == 10 and r.dropped("scope").num_rows == 10
        assert "0 of 10" in repr(r)
    assert r.answer.runs > 1  # the fix search's runs, made when the diagnosis was read
    assert r.diagnosis.code == "filter_after_cut" and r.fixes
    assert r.to_json()["runs"] == r.answer.runs


def test_each_fix_applied_returns_what_it_says_and_what_its_argv_returns(
        demo: inspector.Store, demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--text", TEXT, "--preset", "docs-before-fix", "--scope", "vault-agent",
            "--limit", "10", "--now", NOW]
    r = demo.query(text=TEXT, preset="docs-before-fix", scope="vault-agent", limit=10, now=NOW)
    kinds = {f.kind for f in r.fixes}
    assert kinds == {"own", "what_if"}, r.fixes
    for n, fix in enumerate(r.fixes):
        applied = r.apply(n)
        assert len(applied.final_ids) == fix.returns
        assert tuple(applied.final_ids[: r.limit]) == fix.ids
        want = cli(capsys, "query", str(demo_path), *argv, *fix.argv, "--fixes", "off",
                   "--json")
        assert applied.final_ids == [c["id"] for c in want["stages"][-1]["candidates"]]
        assert applied.to_json()["what_if"] == want["what_if"]
    with pytest.raises(InspectorError, match="fixes"):
        r.apply(len(r.fixes))


def test_module_level_query_is_open_then_query(demo_path: Path, demo: inspector.Store) -> None:
    kw = {"text": "what timezone is the user in", "preset": "memory-plugin", "limit": 2,
          "now": NOW}
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
        r.to_pandas("fetch")


def test_to_pandas_when_installed(demo: inspector.Store) -> None:
    """pandas is in the test extra: this runs, it never skips."""
    import pandas  # noqa: F401 - a missing pandas is a failure here, not a skip

    r = demo.query(text="what timezone is the user in", preset="memory-plugin", limit=2)
    assert list(r.to_pandas("fetch")["id"]) == r.table("fetch").column("id").to_pylist()
    assert list(r.to_pandas()["id"]) == r.final_ids


@pytest.mark.parametrize("kw,message", [
    ({"text": "x", "bogus": 1}, "Unknown query option 'bogus'; the options are mode"),
    ({"text": "x", "preset": "nope"}, "Unknown pipeline 'nope'"),
    ({"text": "x", "preset": "memory-plugin", "scopes": ["a", "b"]}, "one scope"),
    ({"text": "x", "preset": "memory-plugin", "scopes": []}, "one scope"),
    ({"vector": [1.0], "vector_of": "a"}, "either vector or vector_of"),
    ({"text": "x", "scope": "a", "scopes": ["a"]}, "not both"),
    ({"text": "x", "preset": "memory-lancedb-pro", "overfetch": 2},
     "overfetch: pipeline memory-lancedb-pro has no stage that takes it"),
    ({"text": "x", "preset": "memory-lancedb-pro", "overfetch": 2, "nprobes": 4},
     "overfetch, nprobes: pipeline memory-lancedb-pro has no stage that takes them"),
    ({"text": "x", "filter": "inside"}, "filter takes 'post' or 'pushdown'"),
    ({"text": "x", "widen": {"fetch": 0}}, "widen takes"),
    ({"text": "x", "widen": {"nope": 5}}, "has no stage nope"),
    ({"text": "x", "index_facet": "maybe"}, "index_facet is"),
    ({"text": "x", "fixes": "off"}, "fixes and exact take True or False"),
    ({"text": "x", "set": {"fetch.bogus": 1}}, "stage fetch .lancedb_pool. has no parameter"),
    ({"text": "x", "scope_map": {"a": 3}}, "scope 'a' must map to a list"),
    ({"text": "x", "expect": [3]}, "expect takes row ids"),
    ({"text": "x", "where": "1", "set": {"where": "2"}}, "not both"),
    ({}, "Give a query"),
    ({"vector": [1e39, 0.0]}, "float32"),
])
def test_bad_input_is_one_sentence(demo: inspector.Store, kw: dict[str, Any],
                                   message: str) -> None:
    with pytest.raises(InspectorError, match=message) as exc:
        demo.query(**kw)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("vector", [
    np.array([]), np.array([1.0, np.nan]), np.array([np.inf, 0.0], np.float32),
    np.array([1e39, 0.0]), np.ones((2, 2)), np.array(["1.0", "x"]), np.array([1, 2], np.int8)])
def test_an_array_vector_is_read_and_refused_as_its_list_is(demo: inspector.Store,
                                                           vector: np.ndarray) -> None:
    """A float array (what an embedder gives) is checked as an array, without a Python float
    per component: the same vector and the same sentence as the list of its values."""
    def outcome(v: Any) -> str:
        try:
            return repr(demo.query(vector=v, limit=3).question.vector)
        except InspectorError as exc:
            return str(exc)

    assert outcome(vector) == outcome(vector.tolist())


def test_a_float_array_vector_is_the_float32_values_of_its_list(
        demo: inspector.Store) -> None:
    v = np.random.default_rng(5).normal(size=256)
    got = demo.query(vector=v, limit=3).question.vector
    assert got == [float(x) for x in np.asarray(v.tolist(), np.float32)]
    assert got == demo.query(vector=v.astype(np.float32), limit=3).question.vector


def test_unknown_stage_and_audit_errors(demo: inspector.Store) -> None:
    r = demo.query(text="what timezone is the user in", preset="memory-plugin", limit=2)
    with pytest.raises(InspectorError, match="no stage 'nope'; the stages are scope_rule"):
        r.table("nope")
    with pytest.raises(InspectorError, match="takes one scope"):
        demo.audit("recall", preset="memory-plugin", scopes=["main", "ops"])
    with pytest.raises(InspectorError, match="kind is one of"):
        demo.audit("everything", preset="memory-lancedb-pro")


def test_html_escapes_every_field(tmp_path: Path) -> None:
    """The store's path, the row ids, the pipeline's and its stages' names reach the HTML
    (the head, the diagnosis, the fixes, the counts, the final list) escaped."""
    from tests.storekit import write_table

    evil = "<script>alert(1)</script>"
    store = write_table(tmp_path / evil, {
        "id": [f"{evil}{i}" for i in range(30)], "text": ["x"] * 30,
        "vector": np.array([[float(i), 1.0] for i in range(30)], np.float32),
        "repo": ["a", "b", "c"] * 10})
    pipe = tmp_path / "evil.toml"
    body = (ROOT / "resources" / "pipelines" / "lancedb.toml").read_text()
    pipe.write_text(body.replace('name = "lancedb"', f'name = "{evil}"')
                    .replace('name = "scope"\n', f'name = "{evil}"\n'))
    r = inspector.open(store).query(vector=[0.0, 1.0], pipeline=pipe, scope="a",
                                    scope_strategy="column", scope_column="repo")
    html = r._repr_html_()
    assert "<script" not in html
    assert html.count("&lt;script&gt;") >= 8
    assert r.fixes and f"<b>{len(r.final_ids)} of 10</b>" in html


def test_a_classic_preset_audit_equals_the_command_line(
        demo: inspector.Store, demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = demo.audit("recall", preset="memory-plugin", limit=1, sample=40, seed=2, now=NOW)
    want = cli(capsys, "audit", "recall", str(demo_path), "--preset", "memory-plugin",
               "--limit", "1", "--sample", "40", "--seed", "2", "--now", NOW, "--json")
    assert res.to_json() == want and want["probes"] == 40


def test_an_indexed_table_answers_with_its_index_facet_as_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On an IVF_PQ table the classic options reach the stage holding them (nprobes=1 is
    `--nprobes 1`: LanceDB searches one partition and loses rows), and the answer carries the
    index facet (the exact search beside it) and a lost_to_index diagnosis whose last fix,
    applied, returns the exact search's rows, as the command line's."""
    from tests import indexkit

    store = str(indexkit.build(tmp_path / "ivf", "IVF_PQ"))
    vec = indexkit.queries(1)[0]
    (tmp_path / "q.json").write_text(json.dumps([float(x) for x in vec]))
    r = inspector.open(store).query(vector=vec, limit=10, nprobes=1, now=NOW)
    assert r.question.set["fetch.nprobes"] == 1
    want = cli(capsys, "query", store, "--vector", f"@{tmp_path / 'q.json'}", "--limit", "10",
               "--nprobes", "1", "--now", NOW, "--json")
    assert r.to_json() == want
    facet = r.index_facet
    assert facet is not None and facet.index_type == "IVF_PQ" and facet.lost > 0
    assert facet.to_json() == want["index_facet"]
    assert r.diagnosis.code == "lost_to_index"
    assert r.fixes[-1].argv == ["--exact"]
    exact = r.apply(r.fixes[-1])
    assert exact.question.exact and exact.final_ids == list(facet.exact_final)


def test_a_query_parses_no_pipeline_file_once_its_pipeline_was_read(
        demo: inspector.Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shipped pipeline is parsed once per process (it was parsed two to four times per
    query: the options' stages, then the question's pipeline, each reading its TOML twice),
    and a question's --set never reaches the parsed file."""
    import tomllib

    from inspector.core.engine.flow import spec as flow_spec

    kw = {"text": TEXT, "preset": "docs-before-fix", "scope": "vault-agent", "now": NOW}
    demo.query(**kw, overfetch=3.0)
    calls: list[int] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda *a, **k: calls.append(1) or real(*a, **k))
    changed = demo.query(**kw, overfetch=5.0, set={"fetch.cap": 20})
    assert calls == []
    assert changed.trace.stage("fetch").params["cap"] == 20
    monkeypatch.undo()
    shipped = flow_spec.load_shipped("docs-before-fix")
    fresh = flow_spec.parse_pipeline(
        (flow_spec.shipped_dir() / "docs-before-fix.toml").read_text(encoding="utf-8"),
        "docs-before-fix.toml", "toml")
    assert shipped == fresh


def test_the_guide_s_first_example_runs_on_the_demo_store(
        demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = (ROOT / "docs" / "guide" / "python-api.md").read_text(encoding="utf-8")
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict[str, Any] = {}
    exec(compile(code.replace("path/to/store", str(demo_path)), "python-api.md", "exec"), scope)
    assert scope["d"].code == "filter_after_cut" and len(scope["after"].final_ids) == 10
    assert len(scope["better"].final_ids) == scope["r"].fixes[0].returns
    assert capsys.readouterr().out.count("--set") >= 1
