"""``ameide serve``: REST + MCP over HTTP on one port and gRPC on another, in one process or in
``--workers N`` processes sharing both ports (``server.workers``).

Registered by ``cli.main`` (``register(app)``). Bearer tokens are required
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
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            envvar="AMEIDE_ALLOWED_HOSTS",
            help="A host name clients use to reach this server (repeatable; 'name' or "
            "'name:port'). Loopback names and IP addresses are always allowed; any other Host "
            "header is refused with 421 (DNS-rebinding protection).",
        ),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-origin",
            help="A browser origin allowed to call this server (repeatable, e.g. "
            "https://app.example.com; 'scheme://host:*' for any port). Loopback origins and the "
            "server's own are always allowed; others get 403.",
        ),
    ] = None,
    metrics_public: Annotated[
        bool, typer.Option("--metrics-public", help="Serve /metrics without a bearer token.")
    ] = False,
    metrics_repository_labels: Annotated[
        bool,
        typer.Option(
            "--metrics-repository-labels",
            help="Name repositories in /metrics labels (off: one total per gauge).",
        ),
    ] = False,
    tls_cert: Annotated[
        str | None,
        typer.Option("--tls-cert", envvar="AMEIDE_TLS_CERT", help="PEM certificate: serve TLS."),
    ] = None,
    tls_key: Annotated[
        str | None,
        typer.Option("--tls-key", envvar="AMEIDE_TLS_KEY", help="PEM private key for --tls-cert."),
    ] = None,
    insecure_http: Annotated[
        bool,
        typer.Option(
            "--insecure-http",
            help="Allow plain HTTP/gRPC on a non-loopback address (only behind a TLS proxy).",
        ),
    ] = False,
    header_timeout: Annotated[
        float,
        typer.Option(
            "--header-timeout", help="Seconds a connection has to send a complete request head."
        ),
    ] = 10.0,
    keep_alive: Annotated[
        float, typer.Option("--keep-alive", help="Seconds an idle kept-alive connection stays.")
    ] = 5.0,
    max_connections: Annotated[
        int,
        typer.Option("--max-connections", help="Open HTTP connections beyond this get 503."),
    ] = 512,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            envvar="AMEIDE_WORKERS",
            min=1,
            help="Worker processes serving every surface on the same ports (default: the number "
            "of cores; 1 serves in this process). A worker that dies is restarted.",
            show_default=False,
        ),
    ] = None,
    json_: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Announce the endpoints as one JSON document on stdout once serving; errors "
            'before that become {"error": {code, message, details}}.',
        ),
    ] = False,
) -> None:
    """Serve REST (/v1, /docs, /metrics), MCP over Streamable HTTP (/mcp) and gRPC.

    On a non-loopback --host, bearer tokens are required and so is TLS (--tls-cert/--tls-key)
    unless --insecure-http; add the names clients use with --allowed-host. With --workers N
    (N > 1), N processes share the ports and /readyz is ready only when every one is."""
    from runtime import serving_process
    from server.serve import AmeideServer, ServeConfig, configure_logging
    from server.workers import WorkerPool, default_workers

    s = session(ctx, json_)
    count = workers or default_workers()
    if count == 1:  # several workers: each sets itself up in serve_worker
        serving_process()
    s.background = count == 1  # a long-running process: semantic vectors are built as writes come
    service = s.service  # opens the database now: fail in one line before binding ports
    settings = s.settings
    if no_auth:  # requests without a token act as the CLI's principal
        settings = settings.model_copy(update={"principal": s.caller.principal_id})
    hosts = [h.strip() for entry in allowed_host or [] for h in entry.split(",") if h.strip()]
    config = ServeConfig(
        host,
        port,
        grpc_port,
        require_auth=not no_auth,
        grace_seconds=grace,
        allowed_hosts=tuple(hosts),
        allowed_origins=tuple(allowed_origin or []),
        metrics_public=metrics_public,
        metrics_repository_labels=metrics_repository_labels,
        tls_cert=tls_cert,
        tls_key=tls_key,
        insecure_http=insecure_http,
        header_timeout=header_timeout,
        keep_alive=keep_alive,
        max_connections=max_connections,
    )
    if count > 1:  # each worker opens the home itself; this process only supervises them
        s.close()
        pool = WorkerPool(settings, config, count)
        configure_logging()
        pool.run(on_ready=lambda e: _announce({**asdict(e), "workers": count}, as_json=s.json))
        return
    server = AmeideServer(service, settings, config)
    configure_logging()
    s.app.start_source_scheduler()  # registered sources: schedules and webhooks (docs/sources.md)
    # a drain that finished is a clean stop: exit 0, as the supervisor of several workers does
    server.run(
        on_ready=lambda e: _announce({**asdict(e), "workers": 1}, as_json=s.json), reraise=False
    )


def _announce(endpoints: dict[str, Any], *, as_json: bool) -> None:
    if as_json:
        output.print_json(endpoints)
    else:
        output.fields(list(endpoints.items()))
    sys.stdout.flush()
