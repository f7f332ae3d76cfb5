"""A tiny MCP server for tests: FastMCP over stdio with one tool, ``add``.

Run as a script (``python tests/mcp_tool_server.py``): an agents file names it as an agent's
MCP server (:mod:`debategraph.nodes.mcp_tools`).
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

server = FastMCP("arithmetic", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two whole numbers.

    Args:
        a: The first.
        b: The second.
    """
    if a < 0 or b < 0:
        raise ValueError(f"only whole numbers, got {a} and {b}")
    return f"{a} + {b} = {a + b}"


if __name__ == "__main__":
    server.run("stdio")
