"""`inspector mcp`: the inspector's read-only tools for agents, over MCP on stdio.

The server is a thin client of the Python API (inspector.api), which runs the same engine as
the command line; it needs the optional extra `mcp` (the official MCP Python SDK, 2.x)."""
