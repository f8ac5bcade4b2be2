"""`inspector pipeline ...` and `inspector query` over pipeline files, as a user types them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from tests.core.engine.flow.fixtures import fixture_copy
from tests.storekit import snapshot


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("mlp-cli"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def pg(fx: Path, *extra: str) -> list[str]:
    return ["query", str(fx / "store"), "--preset", "memory-lancedb-pro", "--vector",
            f"@{fx / 'q_pg.json'}", "--text", "postgres connection pool size", "--limit", "5",
            "--now", "1796113042582", *extra]


def as_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_pipeline_list_and_show_name_every_stage(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "pipeline", "list")
    assert code == 0 and "memory-lancedb-pro " in out and "memory-lancedb-pro-cli" in out
    code, out, _ = cli(capsys, "pipeline", "show", "memory-lancedb-pro-cli")
    assert code == 0
    for stage in ("vector_leg", "bm25_leg", "fused", "rerank_window", "recency_boost",
                  "importance_weight", "time_decay", "hard_min_score", "noise_filter", "mmr"):
        assert f". {stage} [" in out
    assert "route tag (when tag_query)" in out


def test_pipeline_show_json_holds_every_effective_parameter(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "pipeline", "show", "memory-lancedb-pro", "--json")
    data = json.loads(out)
    hybrid = next(r for r in data["routes"] if r["name"] == "hybrid")
    mmr = next(s for s in hybrid["stages"] if s["name"] == "mmr")
    assert mmr["effective"] == {"threshold": 0.85} and mmr["role"] == "diversity"
    assert any(d["name"] == "threshold" and d["live"] for d in mmr["declared"])


def test_question_schema_is_published(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "pipeline", "schema", "question")
    schema = json.loads(out)
    assert code == 0 and {"store", "scopes", "now", "set", "expect"} <= set(schema["properties"])


def test_repeated_scope_and_scope_list_agree(fx: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    a = as_json(capsys, pg(fx, "--scope", "global", "--scope", "agent:main"))
    b = as_json(capsys, pg(fx, "--scope-list", '["global", "agent:main"]'))
    assert a["stages"][-1]["candidates"] == b["stages"][-1]["candidates"]
    assert a["params"]["scopes"] == ["global", "agent:main"]


def test_now_takes_iso_time_as_well_as_epoch_ms(fx: Path, capsys: pytest.CaptureFixture[str]
                                                ) -> None:
    a = as_json(capsys, pg(fx))
    iso = a["params"]["now_iso"]
    argv = pg(fx)
    argv[argv.index("--now") + 1] = iso
    b = as_json(capsys, argv)
    assert b["params"]["now"] == a["params"]["now"]
    assert a["stages"][-1] == b["stages"][-1]


def test_set_changes_one_stage_parameter(fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = as_json(capsys, pg(fx))
    wide = as_json(capsys, pg(fx, "--set", "rerank_window.per_limit=4"))
    count = {s["name"]: s["count"] for s in wide["stages"]}
    assert count["rerank_window"] == 20 and base["counters"]["rerank_window"] == 10
    assert wide["params"]["stages"]["rerank_window"]["per_limit"] == 4


@pytest.mark.parametrize(("extra", "says"), [
    (["--set", "nosuch.x=1"], "has no stage nosuch"),
    (["--set", "mmr.threshold=2"], "mmr.threshold must be a finite number in"),
    (["--set", "mmr.treshold=0.5"], "has no parameter treshold"),
    (["--scope-list", "agent:main"], "--scope-list takes a JSON array"),
    (["--mode", "vector"], "--set STAGE.PARAM=VALUE"),
    (["--now", "yesterday"], "--now takes epoch milliseconds"),
])
def test_bad_pipeline_input_is_one_line_exit_2(fx: Path, capsys: pytest.CaptureFixture[str],
                                               extra: list[str], says: str) -> None:
    code, out, err = cli(capsys, *pg(fx, *extra))
    assert code == 2 and out == "" and says in err and len(err.strip().splitlines()) == 1


def test_every_command_refuses_what_query_refuses(
        fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """sweep and report ask a pipeline preset the question query asks, and refuse what query
    refuses, in the same sentence."""
    ask = [str(fx / "store"), "--preset", "memory-lancedb-pro", "--vector-of", "a1"]
    code, _, err = cli(capsys, "query", *ask)
    assert code == 2 and "full-text leg needs query text" in err
    for command in (["sweep", *ask], ["report", *ask, "--out", str(fx / "r")]):
        assert cli(capsys, *command)[:3:2] == (2, err), command
    code, _, err = cli(capsys, "query", str(fx / "store"), "--preset", "memory-plugin",
                       "--vector-of", "a1", "--scope", "a", "--scope", "b")
    assert code == 2 and "takes one scope" in err


def test_shot_refuses_what_query_refuses(fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """shot asks a pipeline of stages what query asks it, and refuses what query refuses."""
    code, _, err = cli(capsys, "shot", str(fx / "store"), "--preset", "memory-lancedb-pro",
                       "--vector-of", "a1", "--out", "x.png")
    assert code == 2 and "full-text leg needs query text" in err
    assert cli(capsys, "query", str(fx / "store"), "--preset", "memory-lancedb-pro",
               "--vector-of", "a1")[2] == err


def test_system_config_keys_are_accounted_for(fx: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(json.dumps({"plugins": {"entries": {"memory-lancedb-pro": {"config": {
        "embedding": {"model": "x"},
        "retrieval": {"hardMinScore": 0.5, "rerankApiKey": "k", "recencyWeight": 0.3,
                      "madeUpKnob": 1}}}}}}))
    out = as_json(capsys, pg(fx, "--system-config", str(cfg)))
    assert out["params"]["stages"]["hard_min_score"]["min"] == 0.5
    assert not out["exact"] and "cross-encoder" in out["inexact"][0]
    warnings = " ".join(out["warnings"])
    assert "retrieval.recencyWeight" in warnings and "retrieval.madeUpKnob" in warnings
    assert "embedding" not in warnings


def test_expected_row_names_its_stage_and_smallest_fix(fx: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    out = as_json(capsys, pg(fx, "--scope-list", '["global", "agent:main", '
                                                 '"reflection:agent:main"]', "--expect", "a3"))
    e = out["expect"][0]
    assert e["dropped_at"] == "final" and e["reason"] == "past_limit"
    fix = e["fix"]
    assert fix is not None and "a3" not in fix["lost"] and fix["rank"] <= 5
    # the fix, applied, returns the row
    key = f"{fix['stage']}.{fix['param']}" if fix["stage"] else None
    argv = pg(fx, "--scope-list", '["global", "agent:main", "reflection:agent:main"]')
    if key:
        argv += ["--set", f"{key}={json.dumps(fix['to'])}"]
    else:
        argv[argv.index("--limit") + 1] = str(fix["to"])
    again = as_json(capsys, argv)
    assert "a3" in [c["id"] for c in again["stages"][-1]["candidates"]]


def test_a_pipeline_file_of_ones_own_runs(fx: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('extends = "memory-lancedb-pro"\nname = "mine"\ntitle = "no MMR"\n'
                    '[[routes]]\nname = "v"\n[[routes.stages]]\nname = "vector_leg"\n'
                    'kind = "lancedb_vector"\n[[routes.stages]]\nname = "final"\n'
                    'kind = "limit"\n')
    argv = pg(fx)
    argv[argv.index("--preset"):argv.index("--preset") + 2] = ["--pipeline", str(mine)]
    out = as_json(capsys, argv)
    assert [s["name"] for s in out["stages"]] == ["vector_leg", "final"]
    assert out["pipeline"]["name"] == "mine" and out["counters"]["final"] == 5


def test_querying_writes_nothing_into_the_store(fx: Path, capsys: pytest.CaptureFixture[str]
                                                ) -> None:
    before = snapshot(fx / "store")
    as_json(capsys, pg(fx, "--expect", "b1"))
    assert snapshot(fx / "store") == before


def demo_query(demo: Path, *extra: str) -> list[str]:
    return ["query", str(demo), "--scope", "vault-agent", "--text",
            "how do I rotate the signing keys for service tokens", "--now", "1796113042582",
            *extra]


def test_classic_presets_are_pipeline_files_that_set_and_pipeline_reach(
        demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--set on a classic preset equals the matching option; a copy of its file given as
    --pipeline equals the preset; `pipeline show` lists its stages as any pipeline's."""
    from inspector.core.engine.flow.shipped import shipped_dir

    by_option = as_json(capsys, demo_query(demo_path, "--preset", "docs-before-fix",
                                           "--overfetch", "2.5"))
    by_set = as_json(capsys, demo_query(demo_path, "--preset", "docs-before-fix", "--set",
                                        "fetch.overfetch=2.5"))
    assert by_set["stages"] == by_option["stages"] and by_set["params"] == by_option["params"]
    copy = tmp_path / "docs.toml"
    copy.write_text(shipped_dir().joinpath("docs-before-fix.toml").read_text())
    by_file = as_json(capsys, demo_query(demo_path, "--pipeline", str(copy)))
    by_name = as_json(capsys, demo_query(demo_path, "--preset", "docs-before-fix"))
    assert by_file["stages"] == by_name["stages"]
    code, out, _ = cli(capsys, "pipeline", "show", "docs-before-fix")
    assert code == 0
    for stage in ("scope_rule [scope_rule", "fetch [lancedb_pool", "scope [scope_filter",
                  "blend [importance_blend", "min_score [min_score", "final [limit"):
        assert stage in out


def test_the_bm25_leg_falls_back_to_a_substring_scan_when_the_index_finds_nothing(
        fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lue-gree` is no token of any row, so the index returns nothing; the plugin then scans
    the scoped rows for the whole query: c1 holds it, scoring min(0.95, 0.72 + 0.02 * 8)."""
    argv = ["query", str(fx / "store"), "--preset", "memory-lancedb-pro", "--vector",
            f"@{fx / 'q_atlas.json'}", "--text", "lue-gree", "--now", "1796113042582",
            "--scope-list", '["global", "agent:main"]']
    out = as_json(capsys, argv)
    leg = next(s for s in out["stages"] if s["name"] == "bm25_leg")
    assert "lexical fallback" in leg["note"]
    assert [(c["id"], c["score"]) for c in leg["candidates"]] == [("c1", pytest.approx(0.88))]


def test_checks_run_questions_over_pipelines_of_stages(fx: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """A checks file may hold the question model itself: CI guards a memory-lancedb-pro
    configuration with stage counts, the diagnosis and expected rows."""
    vec = json.loads((fx / "q_pg.json").read_text())
    q = {"preset": "memory-lancedb-pro", "text": "postgres connection pool size",
         "vector": vec, "limit": 5, "now": 1796113042582,
         "scopes": ["global", "agent:main", "reflection:agent:main"]}
    checks = tmp_path / "checks.json"
    checks.write_text(json.dumps({"store": str(fx / "store"), "checks": [
        {"name": "pg", "question": q,
         "assert": ["returned == 5", "hard_min_score >= 9", "diagnosis == ok",
                    "id a1 in top 2"]},
        {"name": "a3 is recalled", "question": q, "assert": ["id a3 in top 5"]},
        {"name": "deny", "question": {**q, "scopes": []},
         "assert": ["diagnosis == scope_denies_all"]},
        {"name": "truth", "question": q, "assert": ["scoped_recall@5 >= 0.6"]}]}))
    code, out, _ = cli(capsys, "check", str(checks))
    assert code == 1
    assert "PASS  pg" in out and "PASS  deny" in out and "PASS  truth" in out
    assert "FAIL  a3 is recalled" in out and "dropped at final (past_limit)" in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"store": str(fx / "store"), "checks": [
        {"question": q, "assert": ["recall@5 >= 1"]}]}))
    code, _, err = cli(capsys, "check", str(bad))
    assert code == 2 and "needs judgments for this query" in err


def test_report_over_a_pipeline_leads_with_the_verdict(fx: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    argv = pg(fx, "--scope-list", '["global", "agent:main", "reflection:agent:main"]')
    argv[0] = "report"
    code, out, err = cli(capsys, *argv, "--against", "fused.bm25_floor=0.97",
                         "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert "before: memory-lancedb-pro: 5 of 5 returned [ok]" in out
    receipt = json.loads((tmp_path / "r.json").read_text())
    v = receipt["verdict"]
    assert v["before"]["ids"] == [c["id"] for c in receipt["before"]["stages"][-1]["candidates"]]
    assert "a3" in v["gained"] and v["after"]["label"].endswith("fused.bm25_floor=0.97")
    page = (tmp_path / "r.html").read_text()
    assert page.index("Verdict") < page.index("What changed") < page.index("Stage by stage") \
        < page.index("Every parameter")
    assert "False" not in page.split("<script")[0] and "{'" not in page


def test_a_pipeline_sweep_cell_equals_the_query_with_those_settings(
        fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.core.analysis import grid
    from inspector.core.analysis.sweep import Case, sweep_case
    from inspector.core.engine.flow.question import Question, resolve
    from inspector.core.stores.opening import open_store

    scopes = '["global", "agent:main", "reflection:agent:main"]'
    argv = pg(fx, "--scope-list", scopes, "--expect", "a3")
    argv[0] = "sweep"
    items = ["fused.bm25_floor=0.9,0.97", "rerank_window.per_limit=1,2"]
    res = as_json(capsys, [*argv, *(x for i in items for x in ("--grid", i))])
    assert len(res["cells"]) == 4 and len(res["queries"]) == 1
    best = next(c for c in res["cells"] if c["at"] == res["best"]["pick"])
    q = Question.model_validate(res["question"])
    qs = sweep_case(open_store(str(fx / "store")), Case("pg", q),
                    grid.parse_grid(resolve(q)[0], items))
    for i, cell in enumerate(res["cells"]):
        sets = [x for k, v in cell["at"].items() for x in ("--set", f"{k}={v}")]
        one = as_json(capsys, pg(fx, "--scope-list", scopes, *sets))
        ids = [c["id"] for c in one["stages"][-1]["candidates"]]
        assert qs.final_ids(i) == ids and res["queries"][0]["returned"][i] == len(ids)
        assert cell["expected_found"] == int("a3" in ids)
    assert any(c["expected_found"] for c in res["cells"]) and best["returned"] == 5
    code, _, err = cli(capsys, *argv, "--grid", "fused.nosuch=1,2")
    assert code == 2 and "STAGE.PARAM=SPEC" in err
    code, _, err = cli(capsys, *argv, "--grid-blend", "0,1")
    assert code == 2 and "--grid-blend: pipeline memory-lancedb-pro has no stage" in err


def test_a_table_without_a_full_text_index_takes_the_vector_route(
        make_store: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """As the plugin does when its store has no FTS index (retriever.ts: hasFtsSupport)."""
    import numpy as np

    vecs = np.eye(4, dtype=np.float32)
    path = make_store({"id": ["a", "b", "c", "d"], "text": ["one", "two", "three", "four"],
                       "vector": vecs, "scope": ["global"] * 4, "importance": [0.7] * 4,
                       "timestamp": [1.79e12] * 4, "metadata": ["{}"] * 4})
    out = as_json(capsys, ["query", str(path), "--preset", "memory-lancedb-pro", "--vector",
                           "[1, 0, 0, 0]", "--text", "one", "--now", "1796113042582"])
    assert out["pipeline"]["route"] == "vector"
    assert [s["name"] for s in out["stages"]][0] == "vector_search"


def test_a_pipeline_receipt_with_non_finite_scores_is_strict_json(capsys, demo_path, tmp_path):
    """`report --preset langchain-lancedb` failed unexpectedly on the demo store ("Out of
    range float values are not JSON compliant"): the receipt holds a non-finite value, and
    it was written with an encoder that refuses them instead of jsonio's (null)."""
    out = tmp_path / "r"
    assert main(["report", str(demo_path), "--text", "sleep gym", "--preset",
                 "langchain-lancedb", "--out", str(out)]) == 0, capsys.readouterr().err
    text = out.with_suffix(".json").read_text(encoding="utf-8")
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in a receipt"))
    assert out.with_suffix(".html").exists()


@pytest.mark.parametrize("content", [
    'name = "p"\n[[routes]]\nstages = 7\n', 'name = "p"\nroutes = 7\n',
    'name = "p"\n[[routes]]\nname = "r"\nstages = [7]\n',
    'name = "p"\ndefs = 3\n[[routes]]\nname = "r"\nstages = [{name = "s", kind = "k", '
    'params = 5}]\n'])
def test_a_pipeline_file_of_the_wrong_shape_is_one_line(capsys, demo_path, tmp_path, content):
    """Found by the fuzz suite: `stages = 7` in a pipeline file "failed unexpectedly"
    (TypeError while expanding [defs]); the schema now names what is wrong."""
    f = tmp_path / "p.toml"
    f.write_text(content)
    code = main(["query", str(demo_path), "--text", "x", "--pipeline", str(f)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and f"The pipeline file {f}" in err, err
    assert "failed unexpectedly" not in err


def test_pipeline_json_with_non_finite_values_is_strict_json(capsys, demo_path):
    """`query --json` and `sweep --json` over langchain-lancedb on the demo store failed
    unexpectedly ("... not JSON compliant: nan", half an object already printed), and so did
    the Python API: every pipeline JSON goes through jsonio.dumps (NaN and inf as null)."""
    import inspector

    strict = {"parse_constant": lambda c: pytest.fail(f"{c} in strict JSON")}
    ask = [str(demo_path), "--text", "sleep gym", "--preset", "langchain-lancedb"]
    for argv in (["query", *ask, "--json"],
                 ["sweep", *ask, "--grid", "fetch.depth_factor=1,2", "--json"]):
        code = main(argv)
        out = capsys.readouterr()
        assert code == 0, out.err
        json.loads(out.out, **strict)
    r = inspector.query(str(demo_path), text="sleep gym", preset="langchain-lancedb")
    assert r.final_ids
