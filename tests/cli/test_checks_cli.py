"""`inspector check`, `sweep` and `report` from the command line: output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main  # noqa: E402
from inspector.core.stores.demo import SCOPE_QUERY  # noqa: E402


def _checks(tmp_path: Path, demo: Path, asserts: list[str], preset: str) -> Path:
    f = tmp_path / "checks.json"
    f.write_text(json.dumps({"store": str(demo), "checks": [
        {"name": "vault", "text": SCOPE_QUERY, "scope": "vault-agent", "preset": preset,
         "assert": asserts}]}))
    return f


def test_check_exits_0_when_all_pass(tmp_path: Path, demo_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    f = _checks(tmp_path, demo_path, ["scopedCandidates > 0"], "docs-pushdown")
    assert main(["check", str(f)]) == 0
    assert "PASS  vault" in capsys.readouterr().out


def test_check_exits_1_and_prints_what_failed(tmp_path: Path, demo_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    f = _checks(tmp_path, demo_path, ["scopedCandidates > 0", "returned >= 0"], "docs-before-fix")
    assert main(["check", str(f)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  vault" in out and "scopedCandidates > 0: got 0" in out
    assert "filters after the cut before it" in out  # the diagnosis says why
    assert "returned >= 0" not in out  # only failures are listed
    assert main(["check", str(f), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data[0]["passed"] is False and data[0]["assertions"][0]["actual"] == 0


def test_check_exits_2_on_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.json"
    f.write_text('{"checks": [{"text": "q", "assert": ["recall@5 >= 0.8"]}]}')
    assert main(["check", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs judgments" in err
    assert main(["check", str(tmp_path / "missing.json")]) == 2


def test_sweep_prints_a_grid_and_json(tmp_path: Path, demo_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    qs = tmp_path / "queries.csv"
    qs.write_text(f"query,scope,id,grade\n{SCOPE_QUERY},vault-agent,,\n"
                  "which editor theme does the user prefer,agent-memory,,\n")
    args = ["sweep", str(demo_path), "--mode", "vector", "--limit", "10", "--cap", "0",
            "--queries", str(qs), "--grid-overfetch", "1,2,4", "--grid-blend", "0,0.5"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "best cell" in out and "safe depth" in out and "scope vault-agent" in out
    assert "fetch.overfetch \\ blend.weight" in out
    assert main([*args, "--json", "--out", str(tmp_path / "s.json")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["key"] for a in data["axes"]] == ["fetch.overfetch", "blend.weight"]
    assert data["axes"][0]["values"] == [1.0, 2.0, 4.0] and len(data["queries"]) == 2
    assert len(data["cells"]) == 6 and data["cells"][0]["at"] == {"fetch.overfetch": 1.0,
                                                                  "blend.weight": 0.0}
    assert json.loads((tmp_path / "s.json").read_text()) == data
    assert main(["sweep", str(demo_path), "--grid-blend", "0:2:0.5", "--text", "x y"]) == 2
    assert "blend.weight must be a finite number in [0, 1]" in capsys.readouterr().err


def test_report_writes_json_and_html(tmp_path: Path, demo_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "receipt"
    code = main(["report", str(demo_path), "--preset", "docs-before-fix", "--scope",
                 "vault-agent", "--text", SCOPE_QUERY, "--against-preset", "docs-pushdown",
                 "--grid-overfetch", "1,3", "--grid-blend", "0", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "before: docs-before-fix: 0 of 10 returned [filter_after_cut]" in text
    assert "fix: scope_rule.pushdown false → true: returns 10 of 10" in text
    assert "after: docs-pushdown: 10 of 10 returned [ok]" in text and "receipt.html" in text
    data = json.loads((tmp_path / "receipt.json").read_text())
    assert data["evidence"]["comparison"]["b"]["label"] == "docs-pushdown"
    assert len(data["evidence"]["sweep"]["cells"]) == 2
    assert (tmp_path / "receipt.html").read_text().startswith("<!doctype html>")


def test_a_check_on_a_row_that_does_not_exist_fails_with_that_reason(
        tmp_path: Path, demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`{"id": "row-id-9", "not_in_top": 10}` must not pass for a row that is not there."""
    f = tmp_path / "checks.json"
    f.write_text(json.dumps({"store": str(demo_path), "checks": [
        {"name": "ghost", "text": SCOPE_QUERY, "scope": "vault-agent",
         "preset": "docs-pushdown", "assert": [{"id": "row-id-9", "not_in_top": 10}],
         "relevant": {"row-id-7": 2}}]}))
    assert main(["check", str(f)]) == 1
    out = capsys.readouterr().out
    assert "no row with id 'row-id-9' in table 'memories'" in out
    assert "warning: judged id 'row-id-7' matches no row" in out


def test_sweep_warns_about_judged_ids_that_match_nothing(
        tmp_path: Path, demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    j = tmp_path / "j.json"
    j.write_text(json.dumps({"format": "inspector-judgments", "version": 1, "queries": [
        {"query": SCOPE_QUERY, "scope": "vault-agent",
         "judgments": {"nope-1": 2, "nope-2": 1}}]}))
    assert main(["sweep", str(demo_path), "--queries", str(j), "--grid-overfetch", "1,2",
                 "--grid-blend", "0", "--json"]) == 0
    err = capsys.readouterr().err
    assert "warning: 2 judged id(s) match no row in table 'memories': 'nope-1', 'nope-2'" in err
