"""MCP adapter (official ``mcp`` SDK 2.x): ``memory.get_context``, ``memory.propose``, … over stdio
and Streamable HTTP, each tool a thin call into ``service``. Filled by the surfaces issue."""
