"""The answer's JSON Schema (`inspector pipeline schema answer`) fits every answer the engine
gives, as a user gets it: `inspector query --json` for every pipeline (the classic presets in
every mode, pushdown, a starved scope with its fixes, an indexed table with its exact
comparison, expected rows found and lost, a denied scope list, the real systems' own stores)
and answer.json of an export: one shape, schema 3. And it is not a schema that takes
anything: each kind of drift (a key it does not know, a key missing, a wrong type, a drop or
diagnosis code no stage writes, a fix without its arguments) is refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from inspector.cli.main import main
from inspector.core.evidence.answer_schema import answer_schema
from tests.clikit import cli_json
from tests.core.engine.flow.fixtures import fixture_copy

TEXT = "how do I rotate the signing keys for service tokens"
NOW = "1796113038032"
FRAMEWORKS = Path(__file__).resolve().parents[2] / "frameworks" / "data"
VALIDATOR = jsonschema.Draft202012Validator(answer_schema())


def problems(doc: Any) -> list[str]:
    """Every reason the schema refuses doc, told by the shape its `schema` names."""
    if VALIDATOR.is_valid(doc):
        return []
    errors = VALIDATOR.iter_errors(doc)
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors] or ["invalid"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    return cli_json(capsys, "query", *argv, "--json")


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("answer-schema"))


@pytest.fixture(scope="module")
def crewai(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import shutil

    out = tmp_path_factory.mktemp("answer-crewai") / "store"
    shutil.copytree(FRAMEWORKS / "crewai" / "store", out)
    return out


def _indexed_id(demo: Path) -> str:
    import lancedb

    return lancedb.connect(str(demo)).open_table("memories_indexed").search().limit(1) \
        .select(["id"]).to_list()[0]["id"]


def classic_answers(capsys: pytest.CaptureFixture[str], demo: Path) -> dict[str, dict]:
    d = str(demo)
    fixed = run(capsys, d, "--preset", "docs-overfetch", "--scope", "vault-agent",
                "--text", TEXT)
    found = fixed["stages"][-1]["candidates"][0]["id"]  # lost before the fix (the story)
    return {
        "scoped hybrid, expected rows": run(
            capsys, d, "--preset", "docs-before-fix", "--scope", "vault-agent", "--text", TEXT,
            "--expect", found, "--expect", "no-such-id"),
        "pushdown": run(capsys, d, "--preset", "docs-pushdown", "--scope", "vault-agent",
                        "--text", TEXT),
        "full-text only": run(capsys, d, "--preset", "docs-before-fix", "--mode", "fts",
                              "--text", TEXT),
        "vector, blend, min score": run(capsys, d, "--preset", "importance-blend",
                                        "--text", TEXT, "--min-score", "0.2"),
        "indexed with its exact comparison": run(
            capsys, d, "--table", "memories_indexed", "--preset", "openclaw-search-defaults",
            "--vector-of", _indexed_id(demo), "--index-facet", "on", "--expect", "no-such-id"),
    }


def flow_answers(capsys: pytest.CaptureFixture[str], fx: Path, crewai: Path) -> dict[str, dict]:
    store, vec = str(fx / "store"), f"@{fx / 'q_pg.json'}"
    doc = json.loads((FRAMEWORKS / "crewai" / "cases.json").read_text("utf-8"))
    case = doc["cases"][0]
    qfile = fx.parent / "crewai_q.json"
    qfile.write_text(json.dumps(doc["vectors"][case["query"]]))
    ask = [store, "--preset", "memory-lancedb-pro", "--text", "postgres connection pool size",
           "--vector", vec, "--scope", "agent:main", "--now", NOW]
    first = run(capsys, *ask)
    dropped = [d["id"] for s in first["stages"] for d in s["dropped"]]
    kept = first["stages"][-1]["candidates"][0]["id"]
    return {
        "memory-lancedb-pro, scoped, expected": run(
            capsys, *ask, "--expect", dropped[0], "--expect", dropped[-1], "--expect", kept,
            "--expect", "no-such-id"),
        "memory-lancedb-pro-cli": run(
            capsys, store, "--preset", "memory-lancedb-pro-cli", "--text",
            "postgres connection pool size", "--vector", vec, "--now", NOW),
        "deny-all scope list": run(capsys, store, "--preset", "memory-lancedb-pro", "--text",
                                   "postgres", "--vector", vec, "--scope-list", "[]"),
        "crewai's own store": run(capsys, str(crewai), "--table", doc["table"], "--preset",
                                  "crewai-memory", "--vector", f"@{qfile}"),
    }


def test_every_answer_fits(capsys: pytest.CaptureFixture[str], demo_path: Path, fx: Path,
                           crewai: Path) -> None:
    answers = {**classic_answers(capsys, demo_path), **flow_answers(capsys, fx, crewai)}
    assert {a["schema"] for a in answers.values()} == {3}
    facet = answers["indexed with its exact comparison"]
    assert facet["index_facet"] is not None and facet["store"]["index"] is not None
    starved = answers["scoped hybrid, expected rows"]["diagnosis"]
    assert starved["code"] == "filter_after_cut" and starved["fixes"]
    assert all(f["argv"] for f in starved["fixes"])
    expected = answers["memory-lancedb-pro, scoped, expected"]
    assert any(s["dropped"] for s in expected["stages"])
    assert any(e["fix"] for e in expected["expect"]), expected["expect"]
    for name, doc in answers.items():
        assert doc["expect"] or "expected" not in name
        assert not problems(doc), (name, problems(doc)[:5])


def test_an_export_fits(tmp_path: Path, demo_path: Path, fx: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "export"
    assert main(["query", str(demo_path), "--preset", "docs-overfetch", "--scope",
                 "vault-agent", "--text", TEXT, "--export", str(out)]) == 0
    doc = json.loads((out / "answer.json").read_text("utf-8"))
    assert doc["schema"] == 3 and not problems(doc)


def test_the_command_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["pipeline", "schema", "answer"]) == 0
    assert json.loads(capsys.readouterr().out) == answer_schema()


def _drifts(classic: dict[str, Any], flow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each a real answer with one defect of a kind the schema must catch."""
    out: dict[str, dict[str, Any]] = {}

    def change(name: str, doc: dict[str, Any], edit: Any) -> None:
        doc = copy.deepcopy(doc)
        edit(doc)
        out[name] = doc

    change("an unknown top-level key", classic, lambda d: d.update(extra=1))
    change("stages missing", flow, lambda d: d.pop("stages"))
    change("no stage at all", classic, lambda d: d.update(stages=[]))
    change("a stage of no role", classic, lambda d: d["stages"][1].update(role="magic"))
    change("a score that is text", classic,
           lambda d: d["stages"][1]["candidates"][0].update(score="0.5"))
    change("a rank of 0", classic, lambda d: d["stages"][1]["candidates"][0].update(rank=0))
    change("a candidate key unknown", flow,
           lambda d: d["stages"][-1]["candidates"][0].update(boost=2))
    change("the fixed engine's candidate", classic,
           lambda d: d["stages"][1]["candidates"][0].update(vector_score=0.5))
    change("a drop code no stage writes", flow,
           lambda d: next(s for s in d["stages"] if s["dropped"])["dropped"][0]
           .update(code="vanished"))
    change("a parameter section unknown", classic, lambda d: d["params"].update(warp=3))
    change("a version no engine writes", flow, lambda d: d.update(schema=2))
    change("the fixed engine's version", classic, lambda d: d.update(schema=1))
    change("a diagnosis code unknown", flow, lambda d: d["diagnosis"].update(code="fine"))
    change("a fix without its arguments", classic,
           lambda d: d["diagnosis"]["fixes"][0].pop("argv"))
    change("a fix of no kind", classic,
           lambda d: d["diagnosis"]["fixes"][0].update(kind="maybe"))
    change("scopes as text", flow, lambda d: d["params"].update(scopes="agent:main"))
    return out


def test_each_kind_of_drift_is_refused(capsys: pytest.CaptureFixture[str], demo_path: Path,
                                       fx: Path) -> None:
    classic = run(capsys, str(demo_path), "--preset", "docs-before-fix", "--scope",
                  "vault-agent", "--text", TEXT)
    flow = run(capsys, str(fx / "store"), "--preset", "memory-lancedb-pro", "--text",
               "postgres connection pool size", "--vector", f"@{fx / 'q_pg.json'}",
               "--scope", "agent:main", "--now", NOW)
    assert not problems(classic) and not problems(flow)
    assert classic["diagnosis"]["fixes"]
    for name, doc in _drifts(classic, flow).items():
        assert problems(doc), f"the schema took {name}"
