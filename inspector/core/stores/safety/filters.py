"""LanceDB SQL filters that cannot change their meaning: identifiers and texts quoted, and a
filter a user types checked before it is joined with a scope.

LanceDB reads a filter with DataFusion's SQL parser in its own dialect: backticks are the one
delimited-identifier quote (`metadata`.`user_id` is a field of a struct column; unquoted
names are lower-cased), texts are single-quoted with `''` for a quote and a backslash taken
literally, and it honours `--` and `/* */` comments and stops at a `;` (what follows is
ignored). A user's filter (`--where`, the setting `where`) joined as `(WHERE) AND (SCOPE)`
could therefore reopen the parenthesis (`1=1) OR (1=1`), comment the scope out (`x --`) or
leave a quote open. `checked_filter` accepts only a filter it reads exactly as that parser
does, so that joined with the scope it can only narrow it: quotes closed, parentheses and
brackets balanced, no comment, no `;`, no backslash, and outside quoted texts only ASCII
letters, digits, spaces and SQL's operator characters (a lookalike such as a full-width
parenthesis is refused by name). Anything else is one sentence naming the filter.
"""

from __future__ import annotations

import re
import string
from typing import Any

from inspector.core.errors import InspectorError

QUOTES = "'\"`"
# outside quoted texts: what a filter over columns needs, and nothing that starts a comment,
# a string form the checker does not read ($$, E'') or a placeholder
_STRUCTURE = set(string.ascii_letters + string.digits + " \t\r\n_.,()[]=<>!+-*/%|&^~:")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PAIRS = {")": "(", "]": "["}
MAX_FILTER = 10_000  # characters


def quoted_name(path: str) -> str:
    """A column, or a struct column's field (`COLUMN.FIELD`), as a LanceDB SQL identifier:
    each part back-quoted, backticks doubled (`metadata`.`user_id`)."""
    column, dot, field = path.partition(".")
    parts = (column, field) if dot and column and field else (path,)
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def column_ref(path: str) -> str:
    """A column or struct field as a system writes it into its SQL: bare when every part is a
    plain identifier (`metadata.user_id`, `agentId`, as the systems paste them), else quoted
    (`quoted_name`): either way a name, never SQL of its own."""
    parts = path.split(".")
    if len(parts) <= 2 and all(_PLAIN.fullmatch(p) for p in parts):
        return path
    return quoted_name(path)


def quoted_value(v: Any) -> str:
    """A value as a LanceDB SQL literal: texts single-quoted with quotes doubled."""
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


def checked_filter(text: Any, what: str = "The filter") -> str:
    """The filter as given when it is one expression LanceDB reads as the checker does (see
    the module's docstring), "" for none (None or blank), else one sentence naming it and
    why."""
    if text is None or isinstance(text, str) and not text.strip():
        return ""
    if not isinstance(text, str):
        raise InspectorError(f"{what} is SQL text, not {type(text).__name__} {text!r}.")
    shown = text if len(text) <= 80 else text[:77] + "..."

    def refuse(why: str) -> InspectorError:
        return InspectorError(f"{what} {shown!r} {why}; a filter is one SQL expression over "
                              f"the table's columns, which can only narrow the scope.")

    if len(text) > MAX_FILTER:
        raise refuse(f"is longer than {MAX_FILTER:,} characters")
    if _CONTROL.search(text):
        raise refuse("holds a control character")
    if "\\" in text:
        raise refuse("holds a backslash (quote a quote by doubling it: 'it''s')")
    opened: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in QUOTES:
            i = _closing(text, i, refuse)
            continue
        pair = text[i:i + 2]
        if pair in ("--", "/*", "*/"):
            raise refuse(f"holds a comment ({pair})")
        if c == ";":
            raise refuse("holds a ';' (LanceDB ignores what follows it)")
        if c not in _STRUCTURE:
            raise refuse(f"holds {c!r} (U+{ord(c):04X}) outside a quoted text")
        if c in "([":
            opened.append(c)
        elif c in _PAIRS:
            if not opened or opened.pop() != _PAIRS[c]:
                raise refuse(f"closes a {c!r} it did not open")
        i += 1
    if opened:
        raise refuse(f"leaves a {opened[-1]!r} open")
    return text


def _closing(text: str, i: int, refuse: Any) -> int:
    """The index after the quoted text (or identifier) starting at i; a doubled quote stays
    inside it."""
    q = text[i]
    j = i + 1
    while True:
        j = text.find(q, j)
        if j < 0:
            raise refuse(f"leaves a {q} quote open")
        if text[j + 1:j + 2] == q:
            j += 2
            continue
        return j + 1


def narrowed(*parts: str | None) -> str | None:
    """The parts joined so each can only narrow the others: `(A) AND (B)`; None when none."""
    given = [p for p in parts if p]
    if not given:
        return None
    return given[0] if len(given) == 1 else " AND ".join(f"({p})" for p in given)
