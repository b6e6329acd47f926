"""``ameide mcp``: serve the MCP tools over stdio to one local client (an agent's host).

The tools act as the CLI's principal (``--as``, ``AMEIDE_PRINCIPAL``, else the saved admin),
narrowed by ``--on-behalf-of`` and ``--purpose``; give an agent its own principal with
``--as agent:…``. Registered by ``cli.main`` (``register(app)``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from cli.session import session

PANEL = "Surfaces"


def register(app: typer.Typer) -> None:
    """Attach ``ameide mcp`` to the root app."""
    app.command("mcp", rich_help_panel=PANEL)(mcp)


def mcp(
    ctx: typer.Context,
    underscore_names: Annotated[
        bool,
        typer.Option(
            "--underscore-names",
            envvar="AMEIDE_MCP_UNDERSCORE_NAMES",
            help="Publish memory_get_context, … instead of memory.get_context, … "
            "(for clients that reject dots in tool names).",
        ),
    ] = False,
    json_: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Report a failure to start (no database, no principal) as one JSON document "
            'on stdout, {"error": {code, message, details}}; once serving, stdout speaks MCP.',
        ),
    ] = False,
) -> None:
    """Serve the MCP tools (memory.get_context, memory.propose, …) on stdin/stdout."""
    from mcp_adapter.settings import McpSettings  # the MCP SDK loads only for this command
    from mcp_adapter.stdio import serve_stdio

    s = session(ctx, json_)
    s.background = True  # a long-running process: semantic vectors are built as writes come
    service, caller = s.service, s.caller  # fail in one line before speaking the protocol
    settings = McpSettings()
    if underscore_names:
        settings = settings.model_copy(update={"tool_names": "underscore"})
    serve_stdio(service, caller, settings)
