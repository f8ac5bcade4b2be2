"""`openclaw` is OpenClaw's memory_recall tool as its code runs today, on the store the
plugin's own MemoryDB wrote: its former name `openclaw-tool` still works wherever a user may
have written it, and the fixed preset once called `openclaw` is reachable by its new name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from tests.storekit import snapshot

DATA = Path(__file__).resolve().parents[1] / "frameworks" / "data" / "openclaw"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    dest = tmp_path_factory.mktemp("openclaw-names") / "store"
    shutil.copytree(DATA / "store", dest)
    return dest, json.loads((DATA / "cases.json").read_text(encoding="utf-8"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _query(capsys: pytest.CaptureFixture[str], store: Path, preset: str, vec: Path,
           case: dict[str, Any]) -> dict[str, Any]:
    code, out, err = cli(capsys, "query", str(store), "--table", "memories", "--preset", preset,
                         "--vector", f"@{vec}", "--limit", str(case["limit"]), "--scope",
                         case["agent"], "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("index", [0, 17, 60, 111])
def test_openclaw_is_the_tool_today_and_openclaw_tool_is_the_same_pipeline(
        recorded: tuple[Path, dict[str, Any]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], index: int) -> None:
    store, data = recorded
    case = data["cases"][index]
    vec = tmp_path / "q.json"
    vec.write_text(json.dumps(data["vectors"][case["query"]]))
    before = snapshot(store)
    now = _query(capsys, store, "openclaw", vec, case)
    final = now["stages"][-1]["candidates"]
    assert [(r["id"], r["score"]) for r in final] == [(r["id"], r["score"])
                                                      for r in case["tool"]]
    old = _query(capsys, store, "openclaw-tool", vec, case)
    assert old["stages"] == now["stages"]
    assert snapshot(store) == before


def test_a_file_that_extends_the_former_name_still_runs(recorded: tuple[Path, dict[str, Any]],
                                                        tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    store, data = recorded
    case = data["cases"][5]
    vec = tmp_path / "q.json"
    vec.write_text(json.dumps(data["vectors"][case["query"]]))
    mine = tmp_path / "mine.toml"
    mine.write_text('schema = 1\nextends = "openclaw-tool"\nname = "mine"\ntitle = "mine"\n')
    code, out, err = cli(capsys, "query", str(store), "--table", "memories", "--pipeline",
                         str(mine), "--vector", f"@{vec}", "--limit", str(case["limit"]),
                         "--scope", case["agent"], "--json")
    assert code == 0, err
    assert [r["id"] for r in json.loads(out)["stages"][-1]["candidates"]] == \
        [r["id"] for r in case["tool"]]
    code, out, _ = cli(capsys, "pipeline", "list")
    assert code == 0 and "openclaw-tool" in out and "the former name of openclaw" in out


def test_the_first_reading_is_named_and_the_old_fixed_name_says_where_it_went(
        recorded: tuple[Path, dict[str, Any]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    store, _ = recorded
    checks = tmp_path / "checks.json"
    entry = {"name": "old", "preset": "openclaw", "params": {"min_score": 0.0},
             "vector_of": "m00", "assert": ["returned >= 1"]}
    checks.write_text(json.dumps({"store": str(store), "table": "memories",
                                  "checks": [entry]}))
    code, _, err = cli(capsys, "check", str(checks))
    assert code == 2 and "the fixed preset it named is openclaw-search-defaults" in err
    code, _, err = cli(capsys, "sweep", str(store), "--table", "memories", "--preset",
                       "openclaw", "--vector-of", "m00")
    assert code == 2 and len(err.strip().splitlines()) == 1
    code, out, err = cli(capsys, "presets")
    assert code == 0
    block = out[out.index("openclaw-search-defaults "):]
    assert "REFERENCE.md" in block.split("\n\n")[0]
