"""Detect which column of a memory table plays which role (id, text, vector, importance, ...)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.stores.safety.filters import quoted_name, quoted_value

META_KEY = b"inspector"  # schema metadata written by `inspector demo`: embedder, suggested queries

# Candidate column names per role, most specific first; matched case-insensitively.
_NAMES: dict[str, tuple[str, ...]] = {
    "id": ("id", "uuid", "memory_id", "chunk_id", "row_id", "key"),
    "text": ("text", "content", "chunk", "body", "memory", "document"),
    "vector": ("vector", "embedding", "embeddings", "vec", "emb"),
    "importance": ("importance", "salience", "weight", "priority"),
    "category": ("category", "kind", "doc_kind", "type"),
    "created": ("createdat", "created_at", "timestamp", "created", "ts", "updated_at", "ts_hint"),
    "scope": ("scope",),
    "agent": ("agentid", "agent_id", "agent"),
    "repo": ("repo", "repository", "project"),
    "path": ("path", "file", "source_path"),
}


@dataclass(frozen=True)
class Roles:
    """Column name per role; None where the table has no such column."""

    id: str | None = None
    text: str | None = None
    vector: str | None = None
    importance: str | None = None
    category: str | None = None
    created: str | None = None
    scope: str | None = None
    agent: str | None = None
    repo: str | None = None
    path: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        # a query asks it several times; the roles never change (frozen): made once, kept in
        # the object's own dict outside its fields, and copied (a caller may change its copy)
        got = self.__dict__.get("_as_dict")
        if got is None:
            got = self.__dict__["_as_dict"] = {f.name: getattr(self, f.name)
                                                 for f in fields(self)}
        return dict(got)

    def attribute_columns(self) -> list[str]:
        """Every detected non-vector column, in role order, without duplicates."""
        out: list[str] = []
        for name, col in self.as_dict().items():
            if col and name != "vector" and col not in out:
                out.append(col)
        return out


ROLE_NAMES = tuple(f.name for f in fields(Roles))


def _is_vector(t: pa.DataType) -> bool:
    return pa.types.is_fixed_size_list(t) and pa.types.is_floating(t.value_type)


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_number(t: pa.DataType) -> bool:
    return pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_decimal(t)


def _fits(role: str, t: pa.DataType) -> bool:
    if role == "vector":
        return _is_vector(t)
    if role == "importance":
        return _is_number(t)  # text (even numeric text) is refused by name: ignored_columns
    if role == "created":
        return _is_number(t) or pa.types.is_timestamp(t) or pa.types.is_date(t) or _is_string(t)
    if role == "id":
        return _is_string(t) or pa.types.is_integer(t)
    if role == "scope" and _is_list(t) and not pa.types.is_fixed_size_list(t):
        return _is_string(t.value_type)  # list membership (a stage's scope_rule contains)
    return _is_string(t)


def detect_roles(schema: pa.Schema, overrides: dict[str, str] | None = None) -> Roles:
    """Pick a column per role by name and type; explicit overrides win and are checked."""
    by_lower = {f.name.lower(): f for f in schema}
    found: dict[str, str | None] = {}
    for role, names in _NAMES.items():
        found[role] = None
        for name in names:
            f = by_lower.get(name)
            if f is not None and _fits(role, f.type):
                found[role] = f.name
                break
    vectors = [f.name for f in schema if _is_vector(f.type)]
    if found["vector"] is None and len(vectors) == 1:
        found["vector"] = vectors[0]
    for role, col in (overrides or {}).items():
        if role not in found:
            raise InspectorError(f"Unknown column role '{role}'; roles are "
                                 f"{', '.join(ROLE_NAMES)}.")
        if col is None:
            continue
        if col not in schema.names and "." in col:
            check_nested(schema, role, col)
        elif col not in schema.names:
            raise InspectorError(f"Column '{col}' given for {role} is not in the table; "
                                 f"columns: {', '.join(schema.names)}.")
        elif not _fits(role, schema.field(col).type):
            raise InspectorError(
                f"Column '{col}' has type {schema.field(col).type}, which cannot serve as {role}."
            )
        found[role] = col
    if found["vector"] is None and len(vectors) > 1:
        raise InspectorError(
            f"The table has {len(vectors)} vector columns ({', '.join(vectors)}); "
            "name the one to search with --column vector=COLUMN."
        )
    return Roles(**found)


# ---- a role inside a struct or JSON-text column: `COLUMN.KEY` ----
# A struct field is read by LanceDB itself (`select(["metadata.user_id"])`, and SQL
# `metadata.user_id = 'u1'` filters on it); a key of JSON text is parsed here from the fetched
# rows, so LanceDB can neither filter on it nor push it down.

NESTED_ROLES = ("importance", "category", "created", "scope", "agent", "repo", "path")


def split_nested(path: str) -> tuple[str, str] | None:
    """("metadata", "user_id") for "metadata.user_id"; None for a plain column name."""
    column, dot, key = path.partition(".")
    return (column, key) if dot and column and key else None


def nested_kind(schema: pa.Schema, path: str) -> str:
    """"column" (a top-level column), "struct" (a struct field) or "json" (a JSON-text key)."""
    parts = None if path in schema.names else split_nested(path)
    if parts is None or parts[0] not in schema.names:
        return "column"
    return "struct" if pa.types.is_struct(schema.field(parts[0]).type) else "json"


def check_nested(schema: pa.Schema, role: str, path: str) -> None:
    """A dotted role path names a field of a struct column or a key of a JSON-text column."""
    parts = split_nested(path)
    if parts is None or parts[0] not in schema.names:
        raise InspectorError(f"Column '{path}' given for {role} is not in the table; columns: "
                             f"{', '.join(schema.names)} (a field inside one is COLUMN.KEY).")
    if role not in NESTED_ROLES:
        raise InspectorError(f"The {role} must be a column of its own, not a field inside "
                             f"{parts[0]}; fields serve as {', '.join(NESTED_ROLES)}.")
    column, key = parts
    t = schema.field(column).type
    if pa.types.is_struct(t):
        names = [t.field(i).name for i in range(t.num_fields)]
        if key not in names:
            raise InspectorError(f"The struct column {column} has no field '{key}'; its "
                                 f"fields: {', '.join(names)}.")
        if not _fits(role, t.field(key).type):
            raise InspectorError(f"Field '{path}' has type {t.field(key).type}, which cannot "
                                 f"serve as {role}.")
    elif not _is_string(t):
        raise InspectorError(f"Column '{column}' ({t}) is neither a struct nor JSON text, so "
                             f"'{path}' names nothing inside it.")


def lance_columns(schema: pa.Schema, cols: list[str]) -> list[str]:
    """What to ask LanceDB to select for these role columns: a struct field as itself, a
    JSON-text key as its whole column (parsed afterwards by `with_nested`)."""
    out: list[str] = []
    for c in cols:
        parts = split_nested(c)
        want = parts[0] if parts and nested_kind(schema, c) == "json" else c
        if want not in out:
            out.append(want)
    return out


def with_nested(tbl: pa.Table, schema: pa.Schema, cols: list[str]) -> pa.Table:
    """`tbl` with a column named for each JSON-text key among `cols`, parsed from its rows."""
    have = None
    for c in cols:
        if "." not in c:  # a plain column: never a JSON key (most calls have none)
            continue
        have = set(tbl.column_names) if have is None else have
        if c in have or nested_kind(schema, c) != "json":
            continue
        column, key = split_nested(c) or (c, "")
        values = [json_key(v, key) for v in tbl.column(column).to_pylist()]
        tbl = tbl.append_column(c, _json_array(values))
    return tbl


def json_key(text: Any, key: str) -> Any:
    """The value under `key` in a JSON object held as text (None when absent or unreadable)."""
    if not isinstance(text, str):
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return obj.get(key) if isinstance(obj, dict) else None


def _json_array(values: list[Any]) -> pa.Array:
    """JSON scalars as one Arrow column: numbers stay numbers, anything else is text."""
    if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
           for v in values):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    return pa.array([v if v is None or isinstance(v, str) else json.dumps(v)
                     for v in values], pa.string())


# a column or struct field, and a value, as LanceDB SQL (one place: safety.filters)
sql_ref = quoted_name
sql_value = quoted_value


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def vector_refusal(schema: pa.Schema) -> str | None:
    """Why no column can serve as the vector, naming the column, when one looks like it was
    meant to (a variable-length list, or a list of non-floats); None otherwise."""
    for f in schema:
        if not _is_list(f.type) or _is_vector(f.type):
            continue
        if pa.types.is_fixed_size_list(f.type):
            return (f"Column '{f.name}' holds lists of {f.type.value_type}, not floats, so it "
                    "cannot be searched as vectors.")
        return (f"Column '{f.name}' is a variable-length list ({f.type}); LanceDB searches only "
                "fixed-size lists of floats, so this table cannot be searched by vector.")
    return None


def ignored_columns(schema: pa.Schema, roles: Roles) -> list[str]:
    """A note for each column whose name suggests a role but whose type cannot serve it, so a
    silently ignored column (e.g. a struct `importance`) is visible."""
    used = set(roles.as_dict().values())
    notes = []
    for role, names in _NAMES.items():
        if getattr(roles, role) is not None:
            continue
        for f in schema:
            if f.name.lower() in names and f.name not in used and not _fits(role, f.type):
                notes.append(f"column '{f.name}' ({f.type}) looks like the {role} but its type "
                             f"cannot serve as {role}, so it is ignored")
                break
    return notes


def with_override(roles: Roles, **cols: str | None) -> Roles:
    return replace(roles, **cols)


# Stored importance of any numeric type (float, integer, decimal) as the engine computes with
# it; an unreadable value counts as missing and is counted so the caller can warn.

def _number(v: Any) -> float | None:
    """The number a stored value stands for, or None when it stands for none."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float, Decimal, np.number)):
        try:
            return float(v)
        except (OverflowError, ValueError):
            return None
    if isinstance(v, str):
        try:
            x = float(v.strip())
        except ValueError:
            return None
        return x if not math.isinf(x) else None
    return None


def importance_values(values: list[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """(importance as float64, which rows have none, how many non-null values were unreadable).
    NULL and unreadable values are missing (the default applies); a stored NaN stays NaN."""
    if all(v is None or type(v) is float for v in values):  # a float column: no per-row work
        none = np.fromiter((v is None for v in values), bool, len(values))
        return np.array(values, np.float64), none, 0
    out = np.full(len(values), np.nan)
    missing = np.ones(len(values), bool)
    unreadable = 0
    for i, v in enumerate(values):
        x = _number(v)
        if x is None:
            unreadable += v is not None
            continue
        out[i] = x
        missing[i] = False
    return out, missing, unreadable


def read_meta(schema: pa.Schema) -> dict[str, Any]:
    """The `inspector` schema metadata, keeping only well-formed parts: an `embedder` object
    and `suggested_queries` objects with a text (anything else is ignored, never a crash)."""
    raw = (schema.metadata or {}).get(META_KEY)
    if not raw:
        return {}
    try:
        meta = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(meta, dict):
        return {}
    out = dict(meta)
    emb = meta.get("embedder")
    if emb is not None and not (isinstance(emb, dict)
                                and all(isinstance(v, (str, int)) for v in emb.values())):
        out.pop("embedder")
    queries = meta.get("suggested_queries")
    if queries is not None:
        out["suggested_queries"] = [q for q in queries if _plain_query(q)] \
            if isinstance(queries, list) else []
    return out


_SCALAR = (str, int, float, type(None))


def _plain_query(q: Any) -> bool:
    """A suggested query: an object with a text, whose values are scalars or lists of them."""
    return isinstance(q, dict) and isinstance(q.get("text"), str) and all(
        isinstance(v, _SCALAR) or (isinstance(v, list) and all(isinstance(x, _SCALAR) for x in v))
        for v in q.values())


def _typed_id(column: str, value: str, dtype: pa.DataType) -> Any:
    if not pa.types.is_integer(dtype):
        return str(value)
    try:
        number = int(value)
        if not -2**63 <= number < 2**63:
            raise ValueError
        return number
    except ValueError:
        raise InspectorError(f"Row id {value!r} is not an integer like the {column} column.") \
            from None


def eq_predicate(column: str, value: str, dtype: pa.DataType) -> Any:
    """`column == value` built structurally, the value typed like the column (an id)."""
    from lancedb.expr import col, lit

    return col(column) == lit(_typed_id(column, value, dtype))


def in_predicate(column: str, values: Sequence[str], dtype: pa.DataType) -> Any:
    """`column IN (values)` built structurally, each value typed like the column (ids)."""
    from lancedb.expr import col, lit

    return col(column).isin([lit(_typed_id(column, v, dtype)) for v in values])
