"""safety.filters: a user's filter is accepted only when LanceDB reads it as the checker does,
so joined with a scope it can only narrow it; names are names and texts are texts."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pyarrow as pa
import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.safety.filters import (
    checked_filter,
    column_ref,
    narrowed,
    quoted_name,
    quoted_value,
)

GOOD = ["metadata.topic = 'it''s' AND year >= 2020", "array_has(tags, 'x')",
        "name LIKE 'a%' OR name IN ('b', 'c')", "`Weird Col` = 'x'", "user = '张三 (main)'",
        "NOT (a = 1) AND b <> 2", "\"Mixed\" = 'x'", "x = '-- not a comment; /* */ ('"]
BAD = {"1=1) OR (1=1": "closes", "(((": "leaves a '(' open", "a = 'x": "quote open",
       "a = 1 -- x": "comment", "a = 1 /* x */": "comment", "a = 1; b = 2": "';'",
       "a = 'x\\' OR 1=1 OR a = ''": "backslash", "ａ = 1": "U+FF41",
       "a = 1 ）OR（1=1": "U+FF09", "a = \u2018x\u2019": "U+2018", "a = $$x$$": "'$'",
       "a[1] = 1)": "closes", "`a = 1": "quote open", "a = 1\x00": "control",
       "a = ?": "'?'"}


@pytest.mark.parametrize("text", GOOD)
def test_filters_over_columns_pass_as_given(text: str) -> None:
    assert checked_filter(text) == text


@pytest.mark.parametrize(("text", "why"), sorted(BAD.items()))
def test_a_filter_that_could_reach_past_its_parentheses_is_one_sentence(text: str,
                                                                        why: str) -> None:
    with pytest.raises(InspectorError) as err:
        checked_filter(text, "--where")
    msg = str(err.value)
    assert msg.startswith("--where ") and why in msg and len(msg.splitlines()) == 1


def test_no_filter_and_filters_that_are_not_text() -> None:
    assert checked_filter(None) == checked_filter("  ") == ""
    with pytest.raises(InspectorError, match="is SQL text, not int"):
        checked_filter(1)
    assert narrowed(None, "a = 1") == "a = 1"
    assert narrowed("a = 1", "b = 2") == "(a = 1) AND (b = 2)"


def test_names_and_values_as_lancedb_reads_them(tmp_path: Path) -> None:
    """Quoted names and values select exactly the rows they name, whatever they hold."""
    tbl = lancedb.connect(str(tmp_path)).create_table("t", pa.table({
        "id": ["a", "b", "c"], "Mixed": ["x", "y", "x"], "sp ace": ["x", "y", "y"],
        "metadata": [{"user_id": "u1"}, {"user_id": "o'k"}, {"user_id": "u1"}],
        "vector": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]}))

    def ids(where: str) -> list[str]:
        got = tbl.search([1.0, 0.0]).where(where, prefilter=True).limit(10).to_arrow()
        return sorted(got.column("id").to_pylist())

    assert column_ref("metadata.user_id") == "metadata.user_id"  # as the systems write it
    assert column_ref("1=1) OR (1") == quoted_name("1=1) OR (1") == "`1=1) OR (1`"
    for path, value, want in (("Mixed", "x", ["a", "c"]), ("sp ace", "y", ["b", "c"]),
                              ("metadata.user_id", "o'k", ["b"]),
                              ("metadata.user_id", "u1') OR ('1'='1", [])):
        assert ids(f"{column_ref(path)} = {quoted_value(value)}") == want, path
        assert ids(f"{quoted_name(path)} = {quoted_value(value)}") == want, path
