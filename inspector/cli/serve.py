"""`inspector mcp`: serve the read-only tools to an agent over MCP on stdio (the optional
extra `mcp`; without it, one line says how to install it)."""

from __future__ import annotations

import argparse
from typing import Any

from inspector.core.errors import InspectorError

INSTALL = ("inspector mcp needs the MCP Python SDK 2.x, an optional extra: pip install "
           "'memory-store-inspector[mcp]' (in a clone: pip install -e '.[mcp]').")


def add_parser(sub: Any) -> None:
    sub.add_parser("mcp", help="serve read-only tools to an agent over MCP (stdio)",
                   description="Serve open_store, query, explain and audit over MCP on "
                               "stdin/stdout; nothing is written.")


def cmd_mcp(a: argparse.Namespace) -> int:
    try:
        from mcp.server.mcpserver import MCPServer  # noqa: F401 - the 2.x SDK's server
    except ImportError:
        raise InspectorError(INSTALL) from None
    from inspector.mcpserver.server import serve

    serve()
    return 0


HANDLERS = {"mcp": cmd_mcp}
