"""Judgments: the window's add/remove/save API and the JSON and CSV files the CLI reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.analysis.judgments import Judgments, load_judgments, save_judgments
from inspector.core.errors import InspectorError


def _sample() -> Judgments:
    return (Judgments().add("rotate keys", "vault-agent", "a", 2).add("rotate keys", "vault-agent",
                                                                      "b")
            .add("rotate keys", None, "z", 1).with_query("theme", None, name="blend story"))


def test_add_replaces_a_grade_and_remove_keeps_the_query() -> None:
    j = _sample().add("rotate keys", "vault-agent", "a", 3)
    assert j.grades_for("rotate keys", "vault-agent") == {"a": 3.0, "b": 1.0}
    j = j.remove("rotate keys", "vault-agent", "a")
    assert j.grades_for("rotate keys", "vault-agent") == {"b": 1.0}
    assert j.grades_for("rotate keys") == {"z": 1.0}  # another scope is another query
    assert len(j.queries) == 3


def test_empty_scope_and_none_are_the_same_key() -> None:
    j = Judgments().add("q", "", "x")
    assert j.grades_for("q", None) == {"x": 1.0}


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_judgments_round_trip_through_json_and_csv(tmp_path: Path, suffix: str) -> None:
    j = _sample()
    path = save_judgments(j, tmp_path / f"j{suffix}")
    back = load_judgments(path)
    assert [(q.text, q.scope, q.grades) for q in back.queries] == \
        [(q.text, q.scope, q.grades) for q in j.queries]
    assert back.find("theme").name == "blend story"


def test_csv_rows_without_id_declare_queries(tmp_path: Path) -> None:
    f = tmp_path / "q.csv"
    f.write_text("query,scope,id,grade\nfirst q,s1,,\nfirst q,s1,r1,\nsecond q,,,\n")
    j = load_judgments(f)
    assert [q.text for q in j.queries] == ["first q", "second q"]
    assert j.grades_for("first q", "s1") == {"r1": 1.0}  # an empty grade means 1


def test_json_accepts_a_list_of_relevant_ids(tmp_path: Path) -> None:
    f = tmp_path / "j.json"
    f.write_text('{"queries": [{"query": "q", "scope": "s", "relevant": ["a", "b"]}]}')
    assert load_judgments(f).grades_for("q", "s") == {"a": 1.0, "b": 1.0}


@pytest.mark.parametrize("content, message", [
    ('{"queries": [{"query": "q", "judgments": {"a": -1}}]}', "must be a number >= 0"),
    ('{"queries": [{"scope": "s"}]}', "needs a \"query\" text"),
    ("[1, 2", "not valid JSON"),
])
def test_bad_judgment_files_say_what_is_wrong(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content)
    with pytest.raises(InspectorError, match=message):
        load_judgments(f)


def test_missing_file_and_bad_csv_header(tmp_path: Path) -> None:
    with pytest.raises(InspectorError, match="does not exist"):
        load_judgments(tmp_path / "nope.csv")
    f = tmp_path / "h.csv"
    f.write_text("q,s\nx,y\n")
    with pytest.raises(InspectorError, match="missing id, query"):
        load_judgments(f)
