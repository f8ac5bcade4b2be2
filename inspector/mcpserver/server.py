"""The MCP server: four read-only tools over the Python API, served on stdio.

- `open_store`: a store's tables, columns, roles, rows, version and the system (with its
  preset) that wrote each table; the presets a query can name.
- `query`: one question through any preset or pipeline file: the one answer (schema 3) that
  `inspector query --json` prints, every stage cut to its first `max_rows` candidates, the
  diagnosis with its fixes (each run; `argv` the command line's arguments that apply it).
- `explain`: why a row was (not) returned: the stage that dropped it and the smallest change
  that returns it (`inspector query --expect ID`), with the query's diagnosis.
- `audit`: a store-wide audit (`inspector audit recall|scopes|change`), bounded by a sample.

Every store is opened read-only for each call (so an answer is never stale) and nothing is
written anywhere. A user error comes back as a tool error with the engine's one sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

import inspector
from inspector import api
from inspector.core.errors import InspectorError

MAX_ROWS = 1000  # candidates per stage a query answer may carry
MAX_SAMPLE = 1000  # memories an audit may probe in one call
MAX_PER_SCOPE = 100
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

INSTRUCTIONS = (
    "Inspect an AI-agent memory store's retrieval, read-only: open_store lists its tables and "
    "the system that wrote them (its preset); query runs a real system's pipeline (preset) "
    "stage by stage; explain says why a row was not returned; audit checks a whole store "
    "(sample bounds the work). Stores are LanceDB folders or URIs, or SQLite docs files.")


def _engine(fn: Callable[..., Any]) -> Any:
    """Run an API call; the engine's user errors become tool errors with its sentence."""
    try:
        return fn()
    except InspectorError as exc:
        raise ToolError(str(exc)) from None


def _bounded(value: int, low: int, high: int, name: str) -> int:
    if isinstance(value, bool) or not low <= value <= high:
        raise ToolError(f"{name} takes a whole number between {low} and {high}.")
    return value


def _ask(store: str, table: str | None, text: str | None, vector: list[float] | None,
         vector_of: str | None, preset: str | None, pipeline: str | None,
         scopes: list[str] | None, limit: int | None, now: float | str | None,
         set: dict[str, Any] | None, params: dict[str, Any] | None,
         expect: list[str], widen: dict[str, int] | None = None, exact: bool = False) -> Any:
    if not (text or vector or vector_of):
        raise ToolError("Give a query: text, vector or vector_of.")
    return _engine(lambda: api.open(store, table).query(
        text=text, vector=vector, vector_of=vector_of, preset=preset, pipeline=pipeline,
        scopes=scopes, limit=limit, now=now, set=set, expect=expect, widen=widen,
        exact=exact, **(params or {})))


def _trimmed(answer: dict[str, Any], max_rows: int) -> dict[str, Any]:
    """The answer with each stage's candidates (and dropped rows) cut to max_rows; `count`
    keeps the full number and `final` lists the whole final list."""
    stages = answer["stages"]
    final = stages[-1]["candidates"] if stages else []
    for st in stages:
        for key in ("candidates", "dropped"):
            if key in st and len(st[key]) > max_rows:
                st[f"{key}_shown"] = max_rows
                st[key] = st[key][:max_rows]
    answer["final"] = [{"rank": c["rank"], "id": c["id"], "score": c.get("score")}
                       for c in final]
    return answer


def open_store(store: str, table: str | None = None) -> dict[str, Any]:
    """List a memory store's tables (columns, detected roles, rows, version) and, for each
    table a known system wrote, that system and the preset that reproduces it. `table` keeps
    one table. Also lists the presets `query` accepts."""
    from inspector.core.engine.flow.shipped import shipped_names

    listed = _engine(lambda: api.tables(store))
    if table is not None:
        listed = [t for t in listed if t["name"] == table]
        if not listed:
            raise ToolError(f"The store has no table {table!r}.")
    return {"tables": listed,
            "presets": shipped_names()}


def query(store: str, preset: str | None = None, text: str | None = None,
          vector: list[float] | None = None, vector_of: str | None = None,
          table: str | None = None, pipeline: str | None = None,
          scopes: list[str] | None = None, limit: int | None = None,
          now: float | str | None = None, set: dict[str, Any] | None = None,
          params: dict[str, Any] | None = None, widen: dict[str, int] | None = None,
          exact: bool = False, max_rows: int = 20) -> dict[str, Any]:
    """Run one query through a real system's pipeline (preset, see open_store; a pipeline
    file; none: LanceDB's own search) and return the answer `inspector query --json` prints
    (schema 3, the same for every pipeline): `stages` in order (name, kind, role, count, its
    first max_rows candidates with score and inputs, dropped rows with their reason), `final`
    (the whole final list: rank, id, score), `counters`, `diagnosis` (code, message, the
    starving stage, and `fixes`: each was run and says what it returns; `argv` is the extra
    `inspector query` arguments that apply it, and `changes`, `widen`, `exact` are what to pass
    back here as set, widen and exact), `index_facet`, `ties`, `warnings` and the `question`.

    text is embedded with the store's embedder (and drives full-text); vector is the query
    embedding; vector_of queries with a stored row's vector. scopes: the caller's scopes (a
    row in any is in scope; [] denies everything). now: epoch ms or ISO time for
    time-dependent stages. set: {"STAGE.PARAM": value}. params: the command line's options
    by name (overfetch, blend, min_score, mode, filter, nprobes, ...), each setting the stage
    that holds it (refused when no stage does). widen ({"STAGE": depth}) and exact (bypass
    the vector index) are what-ifs, never the system's own behaviour."""
    rows = _bounded(max_rows, 0, MAX_ROWS, "max_rows")
    r = _ask(store, table, text, vector, vector_of, preset, pipeline, scopes, limit, now, set,
             params, [], widen, exact)
    return _engine(lambda: _trimmed(r.to_json(), rows))


def explain(store: str, id: str, preset: str | None = None, text: str | None = None,
            vector: list[float] | None = None, vector_of: str | None = None,
            table: str | None = None, pipeline: str | None = None,
            scopes: list[str] | None = None, limit: int | None = None,
            now: float | str | None = None, set: dict[str, Any] | None = None,
            params: dict[str, Any] | None = None, widen: dict[str, int] | None = None,
            exact: bool = False) -> dict[str, Any]:
    """Why a row (id) was or was not returned by this query: `expect` (the stage that dropped
    it and why, its rank, and the smallest change that returns it, run, with its `argv`, or
    why none would), `final` (the returned ids), the query's `diagnosis` with its fixes, and
    `warnings`, as `inspector query --expect ID --json` answers them. The query arguments are
    those of the query tool."""
    r = _ask(store, table, text, vector, vector_of, preset, pipeline, scopes, limit, now, set,
             params, [id], widen, exact)
    return _engine(lambda: _explained(id, r))


def _explained(id: str, r: Any) -> dict[str, Any]:
    import json

    from inspector.core.jsonio import dumps

    return json.loads(dumps({"id": id, "pipeline": r.pipeline, "expect": r.expected,
                             "final": r.final_ids, "diagnosis": r.diagnosis.to_json(),
                             "warnings": r.warnings}))


def audit(store: str, kind: str = "recall", preset: str | None = None,
          table: str | None = None, pipeline: str | None = None,
          scopes: list[str] | None = None, limit: int | None = None,
          now: float | str | None = None, set: dict[str, Any] | None = None,
          sample: int = 50, per_scope: int = 10, seed: int = 0) -> dict[str, Any]:
    """A store-wide audit over a pipeline of stages: kind "recall" (can each memory be
    recalled by its own vector and text; which stage drops the ones that cannot), "scopes"
    (leaks and starvation scope by scope, per_scope probes each) or "change" (what set
    changes across every probe). sample bounds the memories probed (random, seeded)."""
    n = _bounded(sample, 1, MAX_SAMPLE, "sample")
    per = _bounded(per_scope, 1, MAX_PER_SCOPE, "per_scope")
    res = _engine(lambda: api.open(store, table).audit(
        kind, preset=preset, pipeline=pipeline, set=set, scopes=scopes, limit=limit, now=now,
        sample=n, per_scope=per, seed=seed))
    return res.to_json()


TOOLS = (open_store, query, explain, audit)


def build() -> MCPServer:
    server = MCPServer(name="memory-store-inspector", version=inspector.__version__,
                       instructions=INSTRUCTIONS, log_level="WARNING")
    for fn in TOOLS:
        server.add_tool(fn, annotations=READ_ONLY)
    return server


def serve() -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    build().run("stdio")
