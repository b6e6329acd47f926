"""MCP over stdio: one local client, acting as the configured local principal.

Only protocol messages go to stdout (the SDK claims the descriptor); logs go to stderr.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server

from mcp_adapter.server import MemoryMcp
from mcp_adapter.settings import McpSettings
from service.app import MemoryService
from service.authz import Caller

TOOL_ID = "ameide-mcp"


def serve_stdio(service: MemoryService, caller: Caller, settings: McpSettings) -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    local = Caller(
        caller.principal_id,
        on_behalf_of=caller.on_behalf_of,
        roles=caller.roles,
        purpose=caller.purpose,
        tool_id=TOOL_ID,
    )

    def caller_of(ctx: ServerRequestContext[Any]) -> Caller:
        return local

    server = MemoryMcp(service, caller_of, tool_names=settings.tool_names, surface="mcp").server()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
