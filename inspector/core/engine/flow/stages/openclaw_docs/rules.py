"""openclaw-mem's rules as its JavaScript plugin runs them: string trimming, the scope's
normalisation and map, the repos pushed down, the post-filter (`matchesScope`), snippets
(`clipSnippet`, in UTF-16 units) and what the CLI's argument parser takes for an option."""

from __future__ import annotations

import math
import re
from typing import Any

from inspector.core.engine import js
from inspector.core.engine import scope as scopes
from inspector.core.engine.flow.rows import Context
from inspector.core.engine.scope import (  # noqa: F401  (the docs stages' names for them)
    _js_entries,
    normalize_scope,
    normalize_scope_map,
    pushdown_repos,
    scope_key,
)
from inspector.core.errors import InspectorError

STRATEGIES = ("repo_prefix", "path_prefix", "map", "none")  # the plugin's four
CHUNK_COLUMNS = ("id", "doc_id", "chunk_id", "repo", "path", "doc_kind", "heading_path",
                 "title", "text")

# String semantics and the scope rules are the one copy in engine/scope.py and engine/js.py
_JS_SPACE_RUN = re.compile(f"[{js.SPACE}]+")
js_trim = js.trim
norm_scope = normalize_scope
_map_entries = scopes._lookup
_js_string = scopes.js_string


def matches_scope(repo: str | None, path: str | None, scope: str, strategy: str,
                  scope_map: dict[str, list[str]]) -> bool:
    """matchesScope, on lower-cased repo and path (engine/scope.py match_docs)."""
    return scopes.match_docs(strategy, scope, scope_map, repo, path)[0]


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
