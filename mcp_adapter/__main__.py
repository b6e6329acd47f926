"""``python -m mcp_adapter``: MCP over stdio without the CLI (settings from the environment).

``AMEIDE_HOME`` / ``AMEIDE_DATABASE_URL`` choose the database (initialised by ``ameide init``),
``AMEIDE_PRINCIPAL`` the principal the tools act as (required here: an MCP client should run as
an agent, never silently as the administrator), ``AMEIDE_ON_BEHALF_OF`` / ``AMEIDE_PURPOSE``
narrow it, ``AMEIDE_MCP_TOOL_NAMES=underscore`` renames the tools. ``ameide mcp`` is the same
server behind the CLI's options.
"""

from __future__ import annotations

import os
import sys

from mcp_adapter.settings import McpSettings
from mcp_adapter.stdio import serve_stdio
from runtime import build_app
from service.authz import Caller
from service.settings import Settings


def main() -> int:
    """Serve until the client closes stdin."""
    settings = Settings()
    if not settings.principal:
        sys.stderr.write("ameide mcp: set AMEIDE_PRINCIPAL (e.g. agent:coder-1)\n")
        return 2
    caller = Caller(
        settings.principal,
        on_behalf_of=os.environ.get("AMEIDE_ON_BEHALF_OF") or None,
        purpose=os.environ.get("AMEIDE_PURPOSE") or None,
    )
    app = build_app(settings)
    try:
        serve_stdio(app.service, caller, McpSettings())
    finally:
        app.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
