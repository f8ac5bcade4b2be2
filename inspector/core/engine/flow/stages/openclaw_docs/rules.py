"""openclaw-mem's rules as its JavaScript plugin runs them: string trimming, the scope's
normalisation and map, the repos pushed down, the post-filter (`matchesScope`), snippets
(`clipSnippet`, in UTF-16 units) and what the CLI's argument parser takes for an option."""

from __future__ import annotations

import math
import re
from typing import Any

from inspector.core.engine.flow.rows import Context
from inspector.core.errors import InspectorError

STRATEGIES = ("repo_prefix", "path_prefix", "map", "none")
CHUNK_COLUMNS = ("id", "doc_id", "chunk_id", "repo", "path", "doc_kind", "heading_path",
                 "title", "text")

# --------------------------------------------------------------- JavaScript string semantics

# String.prototype.trim and /\s/: WhiteSpace and LineTerminator (Python's isspace differs:
# it strips U+001C..U+001F and U+0085, and keeps U+FEFF)
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_TRIM = re.compile(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+\\Z")
_JS_SPACE_RUN = re.compile(f"[{_JS_SPACE}]+")
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


def js_trim(text: str) -> str:
    return _JS_TRIM.sub("", text)


def norm_scope(scope: str | None) -> str:
    """normalizeScopeToken: trim, lower-case, drop one leading `[iso:`/`iso:`/`[scope:`/
    `scope:`, leading '/'s and trailing ']'s, trim."""
    s = js_trim(str(scope or "")).lower()
    s = _SCOPE_PREFIX.sub("", s, count=1)
    s = _TRAILING_BRACKETS.sub("", _LEADING_SLASHES.sub("", s))
    return js_trim(s)


def scope_key(scope: str) -> str:
    """shortScopeKey: the normalised scope up to its first '/' or ':' (the whole if that is
    empty)."""
    n = norm_scope(scope)
    if not n:
        return ""
    return re.split(r"[/:]", n)[0] or n


def _js_entries(obj: dict[str, Any]) -> list[tuple[str, Any]]:
    """Object.entries order: array-index keys ascending first, then the rest as inserted."""
    index = sorted((k for k in obj if _INDEX_KEY.fullmatch(k) and int(k) < 2**32 - 1), key=int)
    return [(k, obj[k]) for k in index] + [(k, v) for k, v in obj.items() if k not in index]


def normalize_scope_map(raw: dict[str, Any]) -> dict[str, list[str]]:
    """The plugin's config resolution of scopeMap: keys normalised (a later key wins a
    collision), string entries only, trimmed, leading '/' dropped, empty ones dropped, at
    most 16; keys left with no entry dropped."""
    out: dict[str, list[str]] = {}
    for k, v in _js_entries({str(k): v for k, v in raw.items()}):
        key = norm_scope(k)
        if not key or not isinstance(v, list):
            continue
        entries = [_LEADING_SLASHES.sub("", js_trim(x)) for x in v if isinstance(x, str)]
        entries = [e for e in entries if e][:16]
        if entries:
            out[key] = entries
    return out


def _map_entries(scope_map: dict[str, list[str]], key: str) -> list[Any]:
    """`scopeMap?.[key] || []` spread into an array, as JavaScript does it."""
    if key in scope_map:
        return list(scope_map[key] or [])
    if key in _OBJECT_PROTO:
        raise InspectorError(f"The plugin throws here: scopeMap[{key!r}] is Object.prototype's "
                             f"{key}, which is not iterable (TypeError); it returns no result.")
    return []


def _js_string(v: Any) -> str:
    """String(v || "") for the JSON values a scope map can hold."""
    if not v:
        return ""
    if isinstance(v, bool):
        return "true"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def pushdown_repos(scope: str, strategy: str, scope_map: dict[str, list[str]]) -> list[str]:
    """computeScopePushdownRepos: repo_prefix -> [key]; map -> the entries of the scope and
    of its key without '/', leading '/' stripped, de-duplicated case-insensitively with the
    first spelling kept; other strategies -> []."""
    n = norm_scope(scope)
    if not n or n == "global":
        return []
    if strategy == "repo_prefix":
        key = scope_key(n)
        return [key] if key else []
    if strategy != "map":
        return []
    seen: set[str] = set()
    out: list[str] = []
    for item in _map_entries(scope_map, n) + _map_entries(scope_map, scope_key(n)):
        cand = _LEADING_SLASHES.sub("", js_trim(_js_string(item)))
        if not cand or "/" in cand or cand.lower() in seen:
            continue
        seen.add(cand.lower())
        out.append(cand)
    return out


def matches_scope(repo: str | None, path: str | None, scope: str, strategy: str,
                  scope_map: dict[str, list[str]]) -> bool:
    """matchesScope, on lower-cased repo and path."""
    n = norm_scope(scope)
    if not n or n == "global":
        return True
    r, d = (repo or "").lower(), (path or "").lower()
    if strategy == "repo_prefix":
        key = scope_key(n)
        return not key or r == key or d.startswith(key + "/")
    if strategy == "path_prefix":
        pre = n.replace(":", "/")
        return d.startswith(pre + "/") or d == pre or f"/{pre}/" in d
    if strategy == "map":
        prefixes = [_LEADING_SLASHES.sub("", js_trim(_js_string(x)).lower())
                    for x in _map_entries(scope_map, n) + _map_entries(scope_map, scope_key(n))]
        prefixes = [x for x in prefixes if x]
        return bool(prefixes) and any(r == x or d.startswith(x + "/") or d == x
                                      for x in prefixes)
    return True  # none


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def clip_snippet(text: str | None, max_chars: int) -> str:
    """clipSnippet: whitespace runs to one space, trimmed, cut at max(80, min(1200, max))
    UTF-16 units with an ellipsis."""
    compact = js_trim(_JS_SPACE_RUN.sub(" ", str(text or "")))
    if not compact:
        return ""
    cap = max(80, min(1200, math.floor(max_chars)))
    units = _utf16(compact)
    if len(units) // 2 <= cap:
        return compact
    return units[:2 * cap].decode("utf-16-le", "surrogatepass") + "…"


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def _argparse_takes_as_option(arg: str) -> bool:
    """Whether the CLI's argparse reads this value as an (unknown) option, not as a value."""
    return (len(arg) > 1 and arg.startswith("-") and " " not in arg
            and not _NEGATIVE_NUMBER.match(arg))


def _request(ctx: Context) -> dict[str, Any]:
    if not ctx.request:
        raise InspectorError("This stage reads the docs search's request: put an "
                             "openclaw_docs_request or openclaw_docs_cli_args stage first.")
    return ctx.request
