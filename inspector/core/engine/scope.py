"""Scope rules as the public engines apply them: the post-filter and the pushed-down predicate.

Post-filter rules compare lower-cased values; pushed-down predicates compare exactly, as the
real engine does. Predicates are built as LanceDB expressions, never by pasting strings, so no
scope name can change a predicate's structure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspector.core.engine import js
from inspector.core.errors import InspectorError
from inspector.core.stores.roles import Roles, nested_kind, split_nested, sql_ref, sql_value

STRATEGIES = ("repo_prefix", "path_prefix", "map", "column", "column_global", "agent_scope",
              "none")
COLUMN_STRATEGIES = ("column", "column_global", "agent_scope")  # exact compares, no lower-casing


# ---- the docs engine's scope rules, as its plugin runs them (openclaw-mem docsColdLane.js:
# normalizeScopeToken, shortScopeKey, the scope map's resolution, matchesScope,
# computeScopePushdownRepos): the one copy, which the classic docs presets and the
# openclaw-mem pipelines both read. Strings follow JavaScript (engine/js.py): trim, /\s/.

_SCOPE_PREFIX = re.compile(r"^\[?(iso|scope):", re.IGNORECASE | re.ASCII)
_LEADING_SLASHES = re.compile(r"^/+")
_TRAILING_BRACKETS = re.compile(r"\]+\Z")
# what a plain object answers for keys it does not own: [...value] then throws a TypeError
# (scopes are lower-cased first, so only constructor and __proto__ can be asked for)
_OBJECT_PROTO = frozenset((
    "constructor", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
    "__lookupSetter__", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
    "toLocaleString", "toString", "valueOf"))
_INDEX_KEY = re.compile(r"0|[1-9][0-9]*")
MAP_ENTRIES_MAX = 16  # the plugin keeps at most this many entries a scope


def normalize_scope(scope: str | None) -> str:
    """normalizeScopeToken: trim, lower-case, drop one leading `[iso:`/`iso:`/`[scope:`/
    `scope:`, leading '/'s and trailing ']'s, trim."""
    return _normalized(str(scope or ""))


@lru_cache(maxsize=4096)  # a pure function of a text the post-filter asks once a row
def _normalized(text: str) -> str:
    s = js.trim(text).lower()
    s = _SCOPE_PREFIX.sub("", s, count=1)
    s = _TRAILING_BRACKETS.sub("", _LEADING_SLASHES.sub("", s))
    return js.trim(s)


def scope_key(normalized: str) -> str:
    """shortScopeKey: the normalised scope up to its first '/' or ':' (the whole if that is
    empty)."""
    return _key(str(normalized or ""))


@lru_cache(maxsize=4096)
def _key(text: str) -> str:
    n = _normalized(text)
    if not n:
        return ""
    return re.split(r"[/:]", n)[0] or n


def is_global(scope: str | None) -> bool:
    return normalize_scope(scope) in ("", "global")


def _js_entries(obj: dict[str, Any]) -> list[tuple[str, Any]]:
    """Object.entries order: array-index keys ascending first, then the rest as inserted."""
    index = sorted((k for k in obj if _INDEX_KEY.fullmatch(k) and int(k) < 2**32 - 1), key=int)
    return [(k, obj[k]) for k in index] + [(k, v) for k, v in obj.items() if k not in index]


def normalize_scope_map(raw: Mapping[str, Any]) -> dict[str, list[str]]:
    """The plugin's config resolution of scopeMap: keys normalised (a later key wins a
    collision), string entries only, trimmed, leading '/' dropped, empty ones dropped, at
    most 16; keys left with no entry dropped."""
    out: dict[str, list[str]] = {}
    for k, v in _js_entries({str(k): v for k, v in raw.items()}):
        key = normalize_scope(k)
        if not key or not isinstance(v, (list, tuple)):
            continue
        entries = [_LEADING_SLASHES.sub("", js.trim(x)) for x in v if isinstance(x, str)]
        entries = [e for e in entries if e][:MAP_ENTRIES_MAX]
        if entries:
            out[key] = entries
    return out


def _lookup(scope_map: Mapping[str, Sequence[Any]], key: str) -> list[Any]:
    """`scopeMap?.[key] || []` spread into an array, as JavaScript does it."""
    if key in scope_map:
        return list(scope_map[key] or [])
    if key in _OBJECT_PROTO:
        raise InspectorError(f"The plugin throws here: scopeMap[{key!r}] is Object.prototype's "
                             f"{key}, which is not iterable (TypeError); it returns no result.")
    return []


def js_string(v: Any) -> str:
    """String(v || "") for the JSON values a scope map can hold."""
    if not v:
        return ""
    if isinstance(v, bool):
        return "true"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def map_prefixes(scope: str | None, scope_map: Mapping[str, Sequence[Any]]) -> list[str]:
    """The map's entries for a scope: the normalised scope's, then its key's, trimmed,
    leading '/' dropped, empty ones dropped (the post-filter lower-cases them)."""
    n = normalize_scope(scope)
    out = [_LEADING_SLASHES.sub("", js.trim(js_string(x)))
           for x in _lookup(scope_map, n) + _lookup(scope_map, scope_key(n))]
    return [x for x in out if x]


def pushdown_repos(scope: str | None, strategy: str,
                   scope_map: Mapping[str, Sequence[Any]]) -> list[str]:
    """computeScopePushdownRepos: repo_prefix -> [key]; map -> the entries of the scope and
    of its key without '/', de-duplicated case-insensitively with the first spelling kept;
    other strategies -> []."""
    n = normalize_scope(scope)
    if not n or n == "global":
        return []
    if strategy == "repo_prefix":
        key = scope_key(n)
        return [key] if key else []
    if strategy != "map":
        return []
    seen: set[str] = set()
    out: list[str] = []
    for cand in map_prefixes(n, scope_map):
        if "/" in cand or cand.lower() in seen:
            continue
        seen.add(cand.lower())
        out.append(cand)
    return out


def match_docs(strategy: str, scope: str | None, scope_map: Mapping[str, Sequence[Any]],
               repo: Any, path: Any) -> tuple[bool, str]:
    """matchesScope on lower-cased repo and path, and the words of the rule that decided:
    repo_prefix: repo == key or path under key/; path_prefix: path == p, under p/, or holding
    /p/ (':' read as '/'); map: repo == entry, path == entry or under entry/."""
    n = normalize_scope(scope)
    if not n or n == "global":
        return True, "global scope"
    r, d = _low(repo), _low(path)
    if strategy == "repo_prefix":
        key = scope_key(n)
        if not key:
            return True, "empty scope key"
        if r == key:
            return True, f"repo == {key!r}"
        if d.startswith(key + "/"):
            return True, f"path starts with {key + '/'!r}"
        return False, f"repo {r!r} != {key!r}"
    if strategy == "path_prefix":
        pre = n.replace(":", "/")
        if d == pre:
            return True, f"path == {pre!r}"
        if d.startswith(pre + "/"):
            return True, f"path starts with {pre + '/'!r}"
        if f"/{pre}/" in d:
            return True, f"path contains {'/' + pre + '/'!r}"
        return False, f"path {d!r} not under {pre!r}"
    if strategy == "map":
        prefixes = [x.lower() for x in map_prefixes(n, scope_map)]
        if not prefixes:
            return False, f"scope {scope!r} maps to no entries"
        for x in prefixes:
            if r == x:
                return True, f"map: repo == {x!r}"
            if d == x or d.startswith(x + "/"):
                return True, f"map: path under {x!r}"
        return False, f"map: repo {r!r} not in {prefixes!r}"
    return True, "no scope rule"


def load_scope_map(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Read a scope map file: a JSON object {scope: [prefix, ...]}."""
    from inspector.core.jsonio import read_json

    return parse_scope_map(read_json(path, "Scope map file"), str(path))


def parse_scope_map(data: Any, source: str = "scope map") -> dict[str, tuple[str, ...]]:
    if not isinstance(data, dict):
        raise InspectorError(f"The {source} must be a JSON object of scope -> list of prefixes.")
    out: dict[str, tuple[str, ...]] = {}
    for k, v in data.items():
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise InspectorError(f"In the {source}, scope '{k}' must map to a list of strings.")
        out[str(k)] = tuple(v)
    return out


@dataclass(frozen=True)
class ScopeSpec:
    """Which scope a query runs in and how rows are matched to it."""

    scope: str | None = None
    strategy: str = "repo_prefix"
    scope_map: tuple[tuple[str, tuple[str, ...]], ...] = ()
    column: str | None = None

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise InspectorError(f"Unknown scope strategy '{self.strategy}'; "
                                 f"choose one of {', '.join(STRATEGIES)}.")

    @property
    def active(self) -> bool:
        """False when every row matches (no scope, `global`, or strategy `none`)."""
        if self.strategy == "none" or self.scope is None:
            return False
        if self.strategy in COLUMN_STRATEGIES:
            return True
        return not is_global(self.scope)

    def map_entries(self) -> tuple[str, ...] | None:
        """The map's prefixes for this scope (its normalised key's and its short key's)."""
        got = map_prefixes(self.scope, dict(self.scope_map))
        return tuple(got) if got else None


# (scope, strategy, column) -> the spec without a map: a ScopeSpec is frozen, and a sweep asks
# the same one of every run (the scope rule, the fetch's parameters, the pool source's keys)
_UNMAPPED: dict[tuple[str | None, str, str | None], ScopeSpec] = {}
_UNMAPPED_MAX = 4096


def make_scope(scope: str | None, strategy: str = "repo_prefix",
               scope_map: Mapping[str, Sequence[str]] | None = None,
               column: str | None = None) -> ScopeSpec:
    if not scope_map and strategy != "map":
        key = (scope, strategy, column)
        got = _UNMAPPED.get(key)
        if got is None:
            if len(_UNMAPPED) >= _UNMAPPED_MAX:
                _UNMAPPED.clear()
            got = _UNMAPPED[key] = ScopeSpec(scope=scope, strategy=strategy, column=column)
        return got
    resolved = normalize_scope_map(scope_map or {})
    frozen = tuple(sorted((k, tuple(v)) for k, v in resolved.items()))
    spec = ScopeSpec(scope=scope, strategy=strategy, scope_map=frozen, column=column)
    if spec.active and strategy == "map" and not scope_map:
        raise InspectorError("Scope strategy 'map' needs a scope map (--scope-map FILE).")
    return spec


def _needs(roles: Roles, spec: ScopeSpec) -> dict[str, str]:
    """Columns the post-filter reads, by role; an error if the table lacks them."""
    if not spec.active:
        return {}
    if spec.strategy in ("column", "column_global"):
        col = spec.column or roles.scope or roles.agent
        if col is None:
            raise InspectorError(f"Scope strategy '{spec.strategy}' needs a scope column "
                                 "(--scope-column).")
        return {"column": col}
    if spec.strategy == "agent_scope":
        return _agent_scope_columns(roles, spec)
    need = {"repo": roles.repo, "path": roles.path}
    if spec.strategy == "path_prefix":
        need.pop("repo")
    missing = [r for r, c in need.items() if c is None]
    if len(missing) == len(need):
        raise InspectorError(f"Scope strategy '{spec.strategy}' needs a "
                             f"{' or '.join(missing)} column; this table has none.")
    return {r: c for r, c in need.items() if c is not None}


def scope_columns(roles: Roles, spec: ScopeSpec) -> list[str]:
    return list(dict.fromkeys(_needs(roles, spec).values()))


def _low(v: Any) -> str:
    return "" if v is None else str(v).lower()


def had(value: Any) -> str:
    """The value a row had instead of the scope, as the scope cell shows it."""
    return "NULL" if value is None else "(empty)" if value == "" else str(value)


def evaluate(spec: ScopeSpec, roles: Roles, values: Mapping[str, Sequence[Any]],
             n: int) -> tuple[list[bool], list[str], list[str]]:
    """The post-filter: per row, whether it is in scope, the rule that decided, and the value
    an out-of-scope row had instead (what a stage table shows; no client parses the rule)."""
    if not spec.active:
        why = "no scope" if spec.scope is None or spec.strategy == "none" else "global scope"
        return [True] * n, [why] * n, [""] * n
    cols = _needs(roles, spec)
    get = {role: values.get(col, [None] * n) for role, col in cols.items()}
    if spec.strategy == "column":
        want = spec.scope
        return _decide(n, lambda i: (True, f"{cols['column']} == {want!r}", "")
                       if get["column"][i] == want else
                       (False, f"{cols['column']} {get['column'][i]!r} != {want!r}",
                        had(get["column"][i])), get["column"])
    if spec.strategy in ("column_global", "agent_scope"):
        return _evaluate_agent_scope(spec, cols, get, n)
    repos = get.get("repo", [None] * n)
    paths = get.get("path", [None] * n)
    smap = dict(spec.scope_map)
    if spec.strategy == "map" and not map_prefixes(spec.scope, smap):
        return [False] * n, [f"scope {spec.scope!r} maps to no entries"] * n, \
            ["no map entry"] * n

    def rule(i: int) -> tuple[bool, str, str]:
        ok, why = match_docs(spec.strategy, spec.scope, smap, repos[i], paths[i])
        shown = paths[i] if spec.strategy == "path_prefix" else repos[i]
        return ok, why, "" if ok else had(shown)

    memo = _doc_memo(spec)
    if memo is None:
        return _decide(n, rule)
    kind = type if set(map(type, repos)) | set(map(type, paths)) <= _PLAIN else _kind
    got = []
    for i in range(n):
        r, d = repos[i], paths[i]
        try:
            key = (kind(r), r, kind(d), d)
            hit = memo.get(key)
        except TypeError:  # a list or a mapping in the column: decided now, not remembered
            got.append(rule(i))
            continue
        if hit is None:
            hit = memo[key] = rule(i)
        got.append(hit)
    return [bool(g[0]) for g in got], [g[1] for g in got], [g[2] for g in got]


# spec -> (type and value of repo, of path) -> (in scope, words, value it had): the docs rules
# are a function of the spec and the row's two values, and the same rows come back in query
# after query of a sweep (each query's pool holds new row objects); bounded, then started again
_DOC_RULES: dict[Any, dict[Any, tuple[bool, str, str]]] = {}
_DOC_RULES_MAX = 200_000


def _doc_memo(spec: ScopeSpec) -> dict[Any, tuple[bool, str, str]] | None:
    try:
        memo = _DOC_RULES.get(spec)
    except TypeError:  # an unhashable setting
        return None
    if memo is None:
        if sum(map(len, list(_DOC_RULES.values()))) > _DOC_RULES_MAX:
            _DOC_RULES.clear()
        memo = _DOC_RULES.setdefault(spec, {})
    elif len(memo) > _DOC_RULES_MAX:
        memo.clear()
    return memo


_PLAIN = frozenset((str, int, bool, type(None)))  # equal values of one of these print alike


def _kind(value: Any) -> Any:
    """What tells equal values apart in a remembered verdict: the type, and the text where
    equal values can print differently (0.0 == -0.0; a row's words show which it had)."""
    t = type(value)
    return t if t in _PLAIN else (t, repr(value))


def _decide(n: int, rule: Any, by: Sequence[Any] = ()) -> tuple[list[bool], list[str], list[str]]:
    """Each row's (in scope, words, value it had); once per distinct (_kind, value) of `by`,
    so a row's verdict is its own whatever rows it is decided with."""
    kinds = set(map(type, by))
    scalar = bool(by) and kinds <= _PLAIN | {float}
    if scalar and not kinds <= _PLAIN:
        by = [(_kind(v), v) for v in by]  # keyed below by (tuple, (kind, value))
    memo: dict[Any, Any] = {}
    got = [rule(i) if not scalar else memo[k] if (k := (type(by[i]), by[i])) in memo
           else memo.setdefault(k, rule(i)) for i in range(n)]
    return [bool(g[0]) for g in got], [g[1] for g in got], [g[2] for g in got]


@dataclass(frozen=True)
class Pushdown:
    """A predicate LanceDB applies before its top-k cut, or the reason there is none."""

    expr: Any | None
    sql: str
    note: str
    column: str | None = None
    values: tuple[Any, ...] = ()
    empty_is_global: bool = False  # '' and NULL in `column` also match (column_global)

    def matches(self, value: Any) -> bool:
        """Python mirror of the predicate (exact, case-sensitive) for one row's value."""
        if self.empty_is_global and (value is None or value == ""):
            return True
        return self.expr is None or value in self.values


def pushdown(spec: ScopeSpec, roles: Roles, schema: Any = None) -> Pushdown:
    """The prefilter the real engine pushes down for this scope (exact comparison). A column
    inside a struct is pushed down as LanceDB SQL; a key inside JSON text cannot be."""
    from lancedb.expr import col, lit

    if not spec.active:
        return Pushdown(None, "", "no scope: nothing to push down")
    if spec.strategy in ("column_global", "agent_scope"):
        return _agent_scope_pushdown(spec, roles, schema)
    if spec.strategy == "column":
        column = _needs(roles, spec)["column"]
        values: tuple[Any, ...] = (spec.scope,)
        note = f"{column} equals the scope exactly"
    elif spec.strategy in ("repo_prefix", "map"):
        repos = tuple(pushdown_repos(spec.scope, spec.strategy, dict(spec.scope_map)))
        if roles.repo is None or not repos:
            return Pushdown(None, "", "no repo column: post-filter only" if roles.repo is None
                            else "no repo-style map entries: post-filter only")
        column, values = roles.repo, repos
        note = ("repo allowlist from the scope key (exact, case-sensitive)"
                if spec.strategy == "repo_prefix" else
                "map entries without '/' as a repo allowlist (exact, case-sensitive)")
    else:
        return Pushdown(None, "", f"strategy {spec.strategy} has no pushdown: post-filter only")
    if _inside(schema, column):
        blocked = _json_only(schema, [column])
        if blocked:
            return Pushdown(None, "", blocked)
        sql = f"{sql_ref(column)} IN ({', '.join(sql_value(v) for v in values)})"
        return Pushdown(sql, sql, note, column, values)
    expr = col(column).isin([lit(v) for v in values])
    return Pushdown(expr, expr.to_sql(), note, column, values)


def _inside(schema: Any, column: str) -> bool:
    """True for a field inside a column (COLUMN.KEY), not a column whose name has a dot."""
    return bool(split_nested(column)) and (schema is None or column not in schema.names)


def _json_only(schema: Any, columns: list[str]) -> str:
    """Why LanceDB cannot filter on these columns (a key inside JSON text), or ''."""
    for c in columns:
        if schema is None or nested_kind(schema, c) == "json":
            return (f"{c} is a key inside JSON text: LanceDB cannot filter on it, so the "
                    "scope is a post-filter only")
    return ""


# --- column_global and agent_scope (the OpenClaw memory plugin's rules, compared exactly) -------
# column_global: `column == scope`, or '' / NULL (a global row). agent_scope: "AGENT" or
# "AGENT/SCOPE": agent column == AGENT, the scope column as column_global; no agent column: SCOPE.


def split_agent_scope(scope: str | None, has_agent: bool) -> tuple[str | None, str | None]:
    """(agent, sub-scope) from "AGENT", "AGENT/SCOPE", or "SCOPE" when there is no agent column."""
    s = scope or ""
    if not has_agent:
        return None, s
    agent, sep, sub = s.partition("/")
    return agent, (sub if sep else None)


def _agent_scope_columns(roles: Roles, spec: ScopeSpec) -> dict[str, str]:
    agent, sub = split_agent_scope(spec.scope, roles.agent is not None)
    scope_col = spec.column or roles.scope
    if roles.agent is None and scope_col is None:
        raise InspectorError("Scope strategy 'agent_scope' needs an agent or scope column; "
                             "this table has neither.")
    out: dict[str, str] = {}
    if agent is not None and roles.agent is not None:
        out["agent"] = roles.agent
    if sub is not None:
        if scope_col is None:
            raise InspectorError(f"Scope {spec.scope!r} names a memory scope but this table has "
                                 "no scope column; give just the agent id.")
        out["column"] = scope_col
    return out


def _global_rule(column: str, want: str, value: Any) -> tuple[bool, str]:
    if value == want:
        return True, f"{column} == {want!r}"
    if value is None:
        return True, f"{column} is NULL: global"
    if value == "":
        return True, f"{column} is '': global"
    return False, f"{column} {value!r} != {want!r} and not global"


def _evaluate_agent_scope(spec: ScopeSpec, cols: dict[str, str],
                          get: dict[str, Sequence[Any]], n: int
                          ) -> tuple[list[bool], list[str], list[str]]:
    if spec.strategy == "column_global":
        agent, sub = None, spec.scope or ""
    else:
        agent, sub = split_agent_scope(spec.scope, "agent" in cols)

    def rule(i: int) -> tuple[bool, str, str]:
        why: list[str] = []
        if "agent" in cols:
            a = get["agent"][i]
            if a != agent:
                return False, f"{cols['agent']} {a!r} != {agent!r}", had(a)
            why.append(f"{cols['agent']} == {agent!r}")
        if "column" in cols and sub is not None:
            ok, text = _global_rule(cols["column"], sub, get["column"][i])
            if not ok:
                return False, text, had(get["column"][i])
            why.append(text)
        return True, " and ".join(why), ""

    return _decide(n, rule)


def _agent_scope_pushdown(spec: ScopeSpec, roles: Roles, schema: Any = None) -> Pushdown:
    """`agent = A AND (scope = S OR scope = '' OR scope IS NULL)`, built as an expression.

    LanceDB's expression builder has no IS NULL; `concat(scope) = ''` is true exactly when the
    value is '' or NULL (concat skips NULLs), so it spells the two global cases in one term.
    """
    from lancedb.expr import col, func, lit

    cols = _needs(roles, spec)
    if spec.strategy == "column_global":
        agent, sub = None, spec.scope or ""
    else:
        agent, sub = split_agent_scope(spec.scope, "agent" in cols)
    parts: list[Any] = []
    notes: list[str] = []
    if "agent" in cols:
        parts.append(col(cols["agent"]) == lit(agent or ""))
        notes.append(f"{cols['agent']} equals the agent exactly")
    if "column" in cols and sub is not None:
        c = cols["column"]
        parts.append((col(c) == lit(sub)) | (func("concat", col(c)) == lit("")))
        notes.append(f"{c} equals the scope exactly, or is '' or NULL (global)")
    if any(_inside(schema, c) for c in cols.values()):
        return _agent_scope_sql(cols, agent, sub, "; ".join(notes), schema)
    expr = parts[0]
    for p in parts[1:]:
        expr = expr & p
    # the Python mirror can read one column: the scope column when there is one; with both
    # columns the post-filter applies the same exact rule, so in_scope is the full verdict
    if "column" in cols and sub is not None:
        return Pushdown(expr, expr.to_sql(), "; ".join(notes), cols["column"], (sub,), True)
    return Pushdown(expr, expr.to_sql(), "; ".join(notes), cols["agent"], (agent,))


def _agent_scope_sql(cols: dict[str, str], agent: str | None, sub: str | None, note: str,
                     schema: Any) -> Pushdown:
    """The agent/scope rule as LanceDB SQL, for columns inside a struct."""
    blocked = _json_only(schema, [c for c in cols.values() if _inside(schema, c)])
    if blocked:
        return Pushdown(None, "", blocked)
    parts = []
    if "agent" in cols:
        parts.append(f"{sql_ref(cols['agent'])} = {sql_value(agent or '')}")
    if "column" in cols and sub is not None:
        ref = sql_ref(cols["column"])
        parts.append(f"({ref} = {sql_value(sub)} OR {ref} = '' OR {ref} IS NULL)")
    sql = " AND ".join(parts)
    if "column" in cols and sub is not None:
        return Pushdown(sql, sql, note, cols["column"], (sub,), True)
    return Pushdown(sql, sql, note, cols["agent"], (agent,))
