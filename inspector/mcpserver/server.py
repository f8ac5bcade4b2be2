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
written anywhere. A user error comes back as a tool error with the engine's one sentence, any
other failure as one line naming the tool; both scrubbed of secrets (a store URI's
credentials are learned before anything runs). A folder that is not a store is refused
without listing what it holds.

The transport is MCP's stdio transport with two guards in front of it (`serve`): each line
is read up to MAX_LINE_BYTES, and a line that is not a JSON-RPC message (not JSON, too
large, nested too deeply, a batch, a wrong shape) is answered with a JSON-RPC error
(-32700 parse error, -32600 invalid request) instead of silence. The server's log (stderr)
is one scrubbed line per record, at most MAX_LOG_RECORD characters, MAX_LOG_BYTES in all:
no traceback, no request echoed in full, no secret.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import IO, Any

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import ToolAnnotations

import inspector
from inspector import api
from inspector.core.errors import InspectorError
from inspector.core.stores.safety.redact import redact_text, redact_uri

MAX_ROWS = 1000  # candidates per stage a query answer may carry
MAX_SAMPLE = 1000  # memories an audit may probe in one call
MAX_PER_SCOPE = 100
MAX_LINE_BYTES = 16 * 1024 * 1024  # one JSON-RPC message (a 65,536-value vector is ~1.5 MB)
MAX_LOG_RECORD = 1_000  # characters of one log line
MAX_LOG_BYTES = 1024 * 1024  # of log in all, for the life of the server
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

INSTRUCTIONS = (
    "Inspect an AI-agent memory store's retrieval, read-only: open_store lists its tables and "
    "the system that wrote them (its preset); query runs a real system's pipeline (preset) "
    "stage by stage; explain says why a row was not returned; audit checks a whole store "
    "(sample bounds the work). Stores are LanceDB folders or URIs, or SQLite docs files.")


def _engine(fn: Callable[..., Any], store: str = "", tool: str = "") -> Any:
    """Run a tool's work: the store URI's credentials are learned first, the engine's user
    errors become tool errors with its sentence and anything else one line naming the tool,
    both scrubbed of every secret seen and bounded."""
    redact_uri(store)  # learns the URI's user-info, malformed URIs included
    try:
        return fn()
    except ToolError as exc:
        raise ToolError(_line(str(exc))) from None
    except InspectorError as exc:
        raise ToolError(_line(str(exc))) from None
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback, never a secret
        detail = _line(f"{type(exc).__name__}: {str(exc)[:4096]}", 300)
        raise ToolError(f"{tool or 'The tool'} failed unexpectedly on "
                        f"{_line(redact_uri(store), 200)} ({detail}).") from None


def _line(text: str, limit: int = MAX_LOG_RECORD) -> str:
    """Text fit for a client or the log: secrets scrubbed (before anything is cut, so no
    half secret survives), one line, at most `limit` characters."""
    flat = " ".join(redact_text(text[:16_384]).split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


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
    return api.open(store, table).query(
        text=text, vector=vector, vector_of=vector_of, preset=preset, pipeline=pipeline,
        scopes=scopes, limit=limit, now=now, set=set, expect=expect, widen=widen,
        exact=exact, **(params or {}))


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

    def work() -> dict[str, Any]:
        listed = api.tables(store)
        if table is not None:
            listed = [t for t in listed if t["name"] == table]
            if not listed:
                raise ToolError(f"The store has no table {table!r}.")
        return {"tables": listed,
                "presets": shipped_names()}

    return _engine(work, store, "open_store")


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
    return _engine(lambda: _trimmed(_ask(store, table, text, vector, vector_of, preset,
                                         pipeline, scopes, limit, now, set, params,
                                         [], widen, exact).to_json(), rows), store, "query")


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
    return _engine(lambda: _explained(id, _ask(store, table, text, vector, vector_of, preset,
                                               pipeline, scopes, limit, now, set, params,
                                               [id], widen, exact)), store, "explain")


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
    return _engine(lambda: api.open(store, table).audit(
        kind, preset=preset, pipeline=pipeline, set=set, scopes=scopes, limit=limit, now=now,
        sample=n, per_scope=per, seed=seed).to_json(), store, "audit")


TOOLS = (open_store, query, explain, audit)


def build() -> MCPServer:
    server = MCPServer(name="memory-store-inspector", version=inspector.__version__,
                       instructions=INSTRUCTIONS, log_level="WARNING")
    for fn in TOOLS:
        server.add_tool(fn, annotations=READ_ONLY)
    return server


def serve() -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    server = build()  # the SDK sets up its logging here; ours replaces it
    quiet_log(sys.stderr)
    anyio.run(_serve_stdio, server)


async def _serve_stdio(server: MCPServer) -> None:
    """The SDK's stdio transport, fed by the bounded line reader (see the module)."""
    lines = _Lines(sys.stdin.buffer)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer = write_stream
        lines.ready.set()
        low = server._lowlevel_server  # noqa: SLF001 - what MCPServer.run_stdio_async runs
        await low.run(read_stream, write_stream, low.create_initialization_options())


class _Lines:
    """stdin as JSON-RPC lines for the SDK's transport: a line longer than MAX_LINE_BYTES,
    one that is not JSON, or one that is not a JSON-RPC message is answered here with a
    JSON-RPC error and never reaches the server; blank lines are skipped."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.answer: Any = None
        self.ready = anyio.Event()

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        await self.ready.wait()
        while True:
            line = await anyio.to_thread.run_sync(self._read, abandon_on_cancel=True)
            if line is None:
                raise StopAsyncIteration
            error = malformed(line)
            if error is None:
                return line.decode("utf-8")
            if error is not False:
                await self.answer.send(SessionMessage(error))

    def _read(self) -> bytes | None:
        """The next line, or b"" past the bound (the rest of it read and dropped)."""
        line = self.raw.readline(MAX_LINE_BYTES + 1)
        if not line:
            return None
        if len(line) > MAX_LINE_BYTES:
            while line and not line.endswith(b"\n"):
                line = self.raw.readline(1 << 20)
            return b"\x00too large"
        return line


def malformed(line: bytes) -> mcp_types.JSONRPCError | bool | None:
    """None for a JSON-RPC message; False for a blank line (no answer); else the JSON-RPC
    error that answers it (-32700: not JSON; -32600: not a request)."""
    if line == b"\x00too large":
        return _error(None, mcp_types.INVALID_REQUEST, f"Invalid request: larger than "
                      f"{MAX_LINE_BYTES:,} bytes")
    if not line.strip():
        return False
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else \
            "not UTF-8" if isinstance(exc, UnicodeDecodeError) else _line(str(exc), 120)
        return _error(None, mcp_types.PARSE_ERROR, f"Parse error: {why}")
    rid = data.get("id") if isinstance(data, dict) else None
    rid = rid if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)) \
        else None
    try:
        mcp_types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except Exception:  # noqa: BLE001 - pydantic's error quotes the request; not echoed
        return _error(rid, mcp_types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 "
                      "request, notification or response (batches are not taken)")
    return None


def _error(rid: str | int | None, code: int, message: str) -> mcp_types.JSONRPCError:
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=rid,
                                  error=mcp_types.ErrorData(code=code, message=message))


class _ScrubbedLog(logging.Handler):
    """The server's log: one line per record (no traceback), secrets scrubbed, each line
    bounded, the whole log bounded."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(logging.WARNING)
        self.stream, self.written, self.full = stream, 0, False

    def emit(self, record: logging.LogRecord) -> None:
        if self.full:
            return
        try:
            text = _message(record)
            exc = record.exc_info[1] if record.exc_info else None
            if exc is not None:
                text += f" ({type(exc).__name__}: {str(exc)[:4096]})"
            line = f"inspector mcp: {record.levelname.lower()}: {_line(text)}\n"
            if self.written + len(line) > MAX_LOG_BYTES:
                self.full = True
                line = "inspector mcp: the log reached its bound; nothing more is logged\n"
            self.stream.write(line)
            self.stream.flush()
            self.written += len(line)
        except Exception:  # noqa: BLE001 - a log line that cannot be written is dropped
            pass


def _message(record: logging.LogRecord) -> str:
    """The record's message, its arguments cut to 64 KiB each before it is formatted (the
    SDK logs a request's text with %r)."""
    args = record.args
    if isinstance(args, tuple):
        args = tuple(a[:65_536] if isinstance(a, str) else a for a in args)
    try:
        return str(record.msg)[:65_536] % args if args else str(record.msg)[:65_536]
    except (TypeError, ValueError):
        return str(record.msg)[:65_536]


def quiet_log(stream: IO[str]) -> None:
    """Every log record of the process (the SDK's included) through _ScrubbedLog only."""
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(_ScrubbedLog(stream))
    root.setLevel(logging.WARNING)
