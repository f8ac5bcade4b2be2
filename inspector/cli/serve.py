"""`inspector mcp`: serve the read-only tools to an agent over MCP on stdio (the optional
extra `mcp`; without it, one line says how to install it)."""

from __future__ import annotations

import argparse
from typing import Any

from inspector.core.errors import InspectorError

SDK = "mcp>=2.3,<3"  # the extra `mcp` of pyproject.toml


def install_hint(prefix: str | None = None, package_dir: str | None = None) -> str:
    """One line saying how to add the extra, for how this copy was installed: by pipx (its
    own virtualenv under .../pipx/venvs/), from a clone (editable: the package folder sits
    beside a pyproject.toml), or from the wheel into an environment of the user's."""
    import sys
    from pathlib import Path

    import inspector

    prefix = prefix if prefix is not None else sys.prefix
    here = Path(package_dir if package_dir is not None else Path(inspector.__file__).parent)
    head = "inspector mcp needs the MCP Python SDK 2.x, the optional extra `mcp`: "
    if "pipx" in Path(prefix).parts:
        return head + f"pipx inject memory-store-inspector '{SDK}'."
    if (here.parent / "pyproject.toml").is_file():
        return head + f"pip install -e '{here.parent}[mcp]' (this clone)."
    return head + (f"pip install '{SDK}' into the same environment (or install the wheel as "
                   f"'memory_store_inspector-VERSION-py3-none-any.whl[mcp]'; with pipx: "
                   f"pipx inject memory-store-inspector '{SDK}').")


def add_parser(sub: Any) -> None:
    sub.add_parser("mcp", help="serve read-only tools to an agent over MCP (stdio)",
                   description="Serve open_store, query, explain and audit over MCP on "
                               "stdin/stdout; nothing is written.")


def cmd_mcp(a: argparse.Namespace) -> int:
    try:
        from mcp.server.mcpserver import MCPServer  # noqa: F401 - the 2.x SDK's server
    except ImportError:
        raise InspectorError(install_hint()) from None
    from inspector.mcpserver.server import serve

    serve()
    return 0


HANDLERS = {"mcp": cmd_mcp}
