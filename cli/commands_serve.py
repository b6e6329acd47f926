"""``ameide serve``: REST + MCP over HTTP on one port and gRPC on another, in one process.

Register with ``commands_serve.register(app)`` in ``cli.main``. Bearer tokens are required
unless ``--no-auth`` (loopback only: requests without a token then act as the CLI principal).
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from typing import Annotated, Any

import typer

from cli import output
from cli.session import session

PANEL = "Surfaces"


def register(app: typer.Typer) -> None:
    """Attach ``ameide serve`` to the root app."""
    app.command("serve", rich_help_panel=PANEL)(serve)


def serve(
    ctx: typer.Context,
    host: Annotated[
        str,
        typer.Option("--host", envvar="AMEIDE_HOST", help="Address to bind (all surfaces)."),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", envvar="AMEIDE_HTTP_PORT", help="REST and MCP (/mcp) port.")
    ] = 8080,
    grpc_port: Annotated[
        int, typer.Option("--grpc-port", envvar="AMEIDE_GRPC_PORT", help="gRPC port.")
    ] = 50051,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth",
            help="Let requests without a token act as the CLI principal (loopback only).",
        ),
    ] = False,
    grace: Annotated[
        float, typer.Option("--grace", help="Seconds to finish in-flight calls on shutdown.")
    ] = 10.0,
) -> None:
    """Serve REST (/v1, /docs, /metrics), MCP over Streamable HTTP (/mcp) and gRPC."""
    from server.serve import AmeideServer, ServeConfig, configure_logging

    s = session(ctx)
    service = s.service  # opens the database now: fail in one line before binding ports
    settings = s.settings
    if no_auth:  # requests without a token act as the CLI's principal
        settings = settings.model_copy(update={"principal": s.caller.principal_id})
    config = ServeConfig(host, port, grpc_port, require_auth=not no_auth, grace_seconds=grace)
    server = AmeideServer(service, settings, config)
    configure_logging()
    server.run(on_ready=lambda e: _announce(asdict(e), as_json=s.json))


def _announce(endpoints: dict[str, Any], *, as_json: bool) -> None:
    if as_json:
        output.print_json(endpoints)
    else:
        output.fields(list(endpoints.items()))
    sys.stdout.flush()
