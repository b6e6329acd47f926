"""MCP adapter (official ``mcp`` SDK 2.x, the only package importing ``mcp``): the
``memory.*`` tools and element-version resources (``server``, ``tools``), served over stdio
(``stdio``, ``ameide mcp``) and Streamable HTTP (``http``). See docs/mcp.md."""
