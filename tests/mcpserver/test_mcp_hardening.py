"""`inspector mcp` as a hostile client meets it, over raw stdio lines: every malformed line
gets a JSON-RPC error and the server keeps serving; no secret of a store URI reaches an
answer or the log, however the URI is malformed; the log stays small whatever the request;
and a folder that is not a store is refused without listing it."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the optional extra 'mcp' is not installed")

SECRET = "SuperSecret99xyz"
INIT = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def _session(lines: list[Any], want: int, timeout: float = 120) -> tuple[dict[Any, Any], bytes]:
    """Start `inspector mcp`, send the lines (dicts as JSON), wait until `want` answers came
    (besides initialize's); (answers by id, in order for id null), everything on stderr)."""
    env = {k: os.environ[k] for k in ("INSPECTOR_CACHE_DIR", "INSPECTOR_DATA_DIR",
                                      "XDG_CONFIG_HOME")}
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**env, "PATH": os.environ.get("PATH", ""),
                                 "LANCEDB_LOG": "error"})
    answers: list[dict[str, Any]] = []
    err: list[bytes] = []
    threading.Thread(target=lambda: answers.extend(json.loads(x) for x in proc.stdout),
                     daemon=True).start()
    threading.Thread(target=lambda: err.extend(iter(lambda: proc.stderr.read(1 << 16), b"")),
                     daemon=True).start()
    for line in [*INIT, *lines]:
        proc.stdin.write((line if isinstance(line, (str, bytes)) else json.dumps(line))
                         .encode() if not isinstance(line, bytes) else line)
        proc.stdin.write(b"\n")
        proc.stdin.flush()
    end = time.monotonic() + timeout
    while len(answers) < want + 1 and time.monotonic() < end:
        time.sleep(0.05)
    proc.stdin.close()
    proc.wait(timeout=60)
    time.sleep(0.2)
    by_id: dict[Any, Any] = {}
    for a in answers[1:]:
        by_id.setdefault(a.get("id"), []).append(a)
    return by_id, b"".join(err)


def test_malformed_lines_get_json_rpc_errors_and_the_server_keeps_serving(
        tmp_path: Path) -> None:
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "open_store", "arguments": {"store": str(tmp_path)}}}
    by_id, err = _session(["{not json", "", "[]", "42", "[" * 100_000, b"\xff\xfe{}",
                           {"jsonrpc": "2.0", "id": 7}, {"jsonrpc": "1.0", "id": "x",
                                                         "method": "ping"}, call], want=8)
    nulls = [a["error"]["code"] for a in by_id.pop(None)]
    assert sorted(nulls) == [-32700, -32700, -32700, -32600, -32600], nulls
    assert by_id[7][0]["error"]["code"] == -32600 and by_id["x"][0]["error"]["code"] == -32600
    assert by_id[9][0]["result"]["isError"]  # still serving: the call is answered
    assert err == b""


def test_no_secret_reaches_an_answer_or_the_log_and_the_log_stays_small(tmp_path: Path) -> None:
    long = "x" * 5000  # a name too long for the file system: an unexpected OSError
    stores = [f"file://AKIAKEY:{SECRET}@{tmp_path}/missing", f"file://AKIAKEY:{SECRET}@/{long}",
              f"s3:/AKIAKEY:{SECRET}@bucket/p", f" s3://AKIAKEY:{SECRET}@bucket/p",
              f"s3//AKIAKEY:{SECRET}@bucket/p", f"file://AKIAKEY:{SECRET}@/" + "y" * 10_000_000]
    calls = [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": tool, "arguments": {"store": s, "text": "x"}}}
             for i, s in enumerate(stores) for tool in ("query",)]
    calls += [{"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": {
        "name": "open_store", "arguments": {"store": stores[1]}}}]
    by_id, err = _session(calls, want=len(calls))
    assert len(by_id) == len(calls)
    text = json.dumps(by_id)
    assert SECRET not in text and "AKIAKEY" not in text.replace("AKIAKEY:***", "")
    assert SECRET.encode() not in err and len(err) < 64 * 1024, err[:2000]
    for answer in by_id.values():
        assert answer[0]["result"]["isError"] and len(json.dumps(answer)) < 4096


def test_a_request_larger_than_the_bound_is_refused_and_leaves_no_log() -> None:
    huge = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "query", "arguments": {"store": f"s3://K:{SECRET}@b/" + "A" * 20_000_000}}})
    by_id, err = _session([huge, {"jsonrpc": "2.0", "id": 2, "method": "ping"}], want=2)
    assert by_id[None][0]["error"]["code"] == -32600 and "larger than" in \
        by_id[None][0]["error"]["message"]
    assert "result" in by_id[2][0] and len(err) < 4096


def test_a_folder_that_is_not_a_store_is_refused_without_listing_it(tmp_path: Path) -> None:
    folder = tmp_path / "private"
    folder.mkdir()
    (folder / "salaries-2026.xlsx").write_text("x")
    (folder / "plans").mkdir()
    by_id, _ = _session([{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "open_store", "arguments": {"store": str(folder)}}}],
                        want=1)
    answer = by_id[1][0]["result"]
    text = answer["content"][0]["text"]
    assert answer["isError"] and "not a LanceDB store" in text
    assert "salaries" not in text and "plans" not in text


def test_the_log_handler_writes_one_scrubbed_bounded_line_per_record() -> None:
    import io

    from inspector.core.stores.safety.redact import redact_uri
    from inspector.mcpserver import server

    redact_uri(f"file://AKIAKEY:{SECRET}@/tmp/x")
    out = io.StringIO()
    handler = server._ScrubbedLog(out)
    try:
        raise OSError(f"cannot open file://AKIAKEY:{SECRET}@/tmp/x " + "z" * 20_000_000)
    except OSError:
        record = logging.LogRecord("mcp", logging.ERROR, __file__, 1, "Tool %r raised: %s",
                                   ("query", "A" * 20_000_000), sys.exc_info())
    handler.emit(record)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and len(lines[0]) <= server.MAX_LOG_RECORD + 40
    assert SECRET not in out.getvalue() and "Traceback" not in out.getvalue()
    for _ in range(1500):
        handler.emit(record)
    assert len(out.getvalue()) <= server.MAX_LOG_BYTES + 200
