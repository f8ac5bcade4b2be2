"""A pipeline's settings are declared once (spec.SETTINGS): a setting no stage reads, a value
outside its choices or of the wrong type, a `where` that could widen the scope, or half a
character is refused in one line naming it, before the store opens (they used to pass
silently: `--set mode=banana` ran the hybrid route)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main

MISSING = "/nonexistent/store"  # every refusal here comes before the store opens


@pytest.mark.parametrize(("preset", "assignment", "said"), [
    ("memory-lancedb-pro", "mode=banana", "mode must be one of hybrid, vector, not 'banana'"),
    ("memory-lancedb-pro", "source=nobody", "source must be one of manual, auto-recall, cli"),
    ("memory-lancedb-pro", "tag_prefixes=proj", "tag_prefixes must be a list of texts"),
    ("memory-lancedb-pro", "tag_prefixes=[1, 2]", "tag_prefixes must be a list of texts"),
    ("memory-lancedb-pro-cli", "mode=[]", "mode must be text"),
    ("docs-overfetch", "tie_rule=random", "tie_rule must be one of lancedb, id"),
    ("langchain-lancedb", "where=1", "setting.where must be text, not 1"),
    ("langchain-lancedb", "where=1=1) OR (1=1", "closes a ')' it did not open"),
    ("llamaindex-lancedb", "where=a = 1 -- x", "holds a comment"),
    ("langchain-lancedb", 'where="\\udc80"', "half a character"),
])
def test_a_setting_outside_its_declaration_is_one_line(
        capsys: pytest.CaptureFixture[str], preset: str, assignment: str, said: str) -> None:
    code = main(["query", MISSING, "--preset", preset, "--vector-of", "x", "--set",
                 assignment])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and said in err[0], err


def test_a_pipeline_file_naming_an_undeclared_setting_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "mine.toml"
    f.write_text('extends = "langchain-lancedb"\nname = "mine"\ntitle = "mine"\n'
                 '[settings]\nwhere = ""\nwehre = "x = 1"\n')
    assert main(["query", MISSING, "--pipeline", str(f), "--vector-of", "x"]) == 2
    err = capsys.readouterr().err
    assert "setting 'wehre', which no stage reads" in err and "where, mode" in err
    j = tmp_path / "mine.json"
    j.write_text(json.dumps({"extends": "langchain-lancedb", "name": "mine", "title": "mine",
                             "settings": {"where": "a = '\udc80'"}}))
    assert main(["query", MISSING, "--pipeline", str(j), "--vector-of", "x"]) == 2
    assert "half a character" in capsys.readouterr().err
