"""``ameide serve``: REST, MCP over Streamable HTTP and gRPC in one process.

One HTTP listener carries REST (``/v1``, ``/docs``, ``/healthz``, ``/readyz``, ``/metrics``)
and MCP (``/mcp``); gRPC has its own port. All three share one service, one ``Metrics``
registry (``surface`` label ``rest`` / ``mcp`` / ``grpc``) and the JSON access log.

Refuses to start on a non-loopback address without authentication. Shuts down gracefully on
SIGINT/SIGTERM: HTTP stops accepting and finishes in-flight requests, then gRPC does the same
within the grace period.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from domain.errors import InvalidArgument
from edge.network import MAX_REQUEST_BYTES, is_loopback, refuse_open_bind
from edge.tracing import OK
from mcp_adapter.http import METADATA_PATH, create_http_app
from mcp_adapter.settings import McpSettings
from server.grpc.calls import Behavior, current_call, wrap_unary
from server.grpc.server import create_grpc_server
from server.http.guard import HostGuard, HostPolicy
from server.http.limits import BodyLimit, BodyText, limited_h11
from server.rest.app import create_app
from server.rest.observe import Metrics, log_request
from service.app import MemoryService
from service.settings import Settings

log = logging.getLogger("ameide.server")


@dataclass(frozen=True)
class ServeConfig:
    """Where to listen, whether tokens are required, and the limits of the HTTP listener.

    ``allowed_hosts`` / ``allowed_origins`` extend the Host and Origin allow-lists
    (:mod:`server.http.guard`); ``tls_cert`` / ``tls_key`` serve HTTPS and gRPC over TLS, which a
    non-loopback address requires unless ``insecure_http`` (tokens would cross the network in
    clear); ``header_timeout``, ``keep_alive`` and ``max_connections`` bound what idle and
    half-sent connections can hold (:mod:`server.http.limits`).
    """

    host: str = "127.0.0.1"
    http_port: int = 8080
    grpc_port: int = 50051
    require_auth: bool = True
    grace_seconds: float = 10.0
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    metrics_public: bool = False
    metrics_repository_labels: bool = False
    tls_cert: str | None = None
    tls_key: str | None = None
    insecure_http: bool = False
    header_timeout: float = 10.0
    keep_alive: float = 5.0
    max_connections: int = 512

    def check_exposure(self) -> None:
        """Refuse a non-loopback address without tokens, or without TLS unless told."""
        refuse_open_bind(self.host, require_auth=self.require_auth)
        if not is_loopback(self.host) and not self.tls and not self.insecure_http:
            raise InvalidArgument(
                f"refusing to serve on {self.host} without TLS: bearer tokens would cross the "
                "network in clear; pass --tls-cert and --tls-key, or --insecure-http if a "
                "TLS-terminating proxy sits in front",
                field="host",
            )

    def __post_init__(self) -> None:
        bare = self.host.strip()
        if bare.startswith("[") and bare.endswith("]"):
            bare = bare[1:-1]  # "[::1]" as written in a URL is the address ::1
        object.__setattr__(self, "host", bare)
        if bool(self.tls_cert) != bool(self.tls_key):
            raise InvalidArgument("--tls-cert and --tls-key go together", field="tls_cert")
        for name in ("header_timeout", "keep_alive"):
            if not getattr(self, name) > 0:
                raise InvalidArgument(f"{name} must be a positive number of seconds", field=name)
        if self.max_connections < 1:
            raise InvalidArgument("max_connections must be at least 1", field="max_connections")

    @property
    def tls(self) -> bool:
        """Whether HTTP and gRPC are served over TLS."""
        return bool(self.tls_cert and self.tls_key)


@dataclass(frozen=True)
class Endpoints:
    """Where the running surfaces answer."""

    rest: str
    mcp: str
    grpc: str
    openapi: str
    metrics: str


class HttpSurfaces:
    """One ASGI app for REST and MCP: ``/mcp`` (and the MCP endpoint's OAuth protected-resource
    metadata) goes to MCP, everything else to REST.

    The MCP transport needs its session manager running, so this app's lifespan runs it.
    """

    def __init__(self, rest: ASGIApp, mcp: Any, mcp_path: str) -> None:
        self.rest = rest
        self.mcp = mcp
        # REST checks its bodies itself (create_app); /mcp gets the same gate, in front of its
        # authentication, so an oversized body is 413 PAYLOAD_TOO_LARGE on every route
        self.mcp_edge = BodyLimit(BodyText(mcp), limit=MAX_REQUEST_BYTES)
        self.mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "")
        if path == self.mcp_path or path.startswith((self.mcp_path + "/", METADATA_PATH)):
            await self.mcp_edge(scope, receive, send)
        else:
            await self.rest(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        try:
            async with self.mcp.lifespan():
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
        except Exception as exc:
            log.exception("the MCP session manager failed")
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})


class GrpcObserve(grpc.ServerInterceptor):  # type: ignore[misc, unused-ignore]
    """Counts, times and logs every unary gRPC call (installed between CallScope and errors)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
        """Wrap the method's handler."""
        return wrap_unary(continuation(details), self._observed)

    def _observed(self, behavior: Behavior) -> Behavior:
        def handle(request: Any, context: Any) -> Any:
            start = time.perf_counter()
            try:
                return behavior(request, context)
            finally:
                call = current_call()
                seconds = time.perf_counter() - start
                operation = call.method.rsplit("/", 1)[-1] if call else "unknown"
                status = (call.error_code if call else None) or OK
                self.metrics.observe("grpc", operation, status, seconds)
                log_request(
                    surface="grpc",
                    trace_id=call.trace_id if call else None,
                    principal=call.caller.principal_id if call and call.caller else None,
                    operation=operation,
                    status=status,
                    latency_ms=round(seconds * 1000, 3),
                )

        return handle


class AmeideServer:
    """The three surfaces over one service; ``run()`` blocks until a signal or ``stop()``.

    A worker of ``ameide serve --workers N`` (:mod:`server.workers`) passes the HTTP listening
    ``sockets`` its supervisor bound, ``grpc_reuseport`` to share the gRPC port with the other
    workers, and ``workers`` (how many workers are ready of how many) for the readiness probes.
    """

    def __init__(
        self,
        service: MemoryService,
        settings: Settings,
        config: ServeConfig,
        mcp_settings: McpSettings | None = None,
        *,
        sockets: Sequence[socket.socket] = (),
        grpc_reuseport: bool = False,
        workers: Callable[[], tuple[int, int]] | None = None,
    ) -> None:
        config.check_exposure()
        self.config = config
        self.sockets = list(sockets)
        if not self.sockets:
            _check_listenable(config.host, config.http_port)  # before gRPC binds its port
        mcp_cfg = mcp_settings or McpSettings()
        hosts = [*mcp_cfg.allowed_hosts, *config.allowed_hosts]
        origins = [*mcp_cfg.allowed_origins, *config.allowed_origins]
        mcp_cfg = mcp_cfg.model_copy(
            update={
                "allowed_hosts": [
                    *hosts,
                    *(f"{h}:*" for h in hosts if ":" not in h.lstrip("[").split("]")[-1]),
                ],
                "allowed_origins": origins,
            }
        )
        rest = create_app(
            service,
            settings=settings,
            require_auth=config.require_auth,
            metrics_public=config.metrics_public,
            metrics_repository_labels=config.metrics_repository_labels,
            workers=workers,
        )
        self.metrics: Metrics = rest.state.metrics
        mcp = create_http_app(
            service,
            settings=settings,
            mcp_settings=mcp_cfg,
            require_auth=config.require_auth,
            host=config.host,
            observe=self.metrics.observe,
        )
        self.surfaces = HttpSurfaces(rest, mcp, mcp_cfg.path)
        self.http = HostGuard(self.surfaces, HostPolicy(hosts, origins))
        self.mcp_path = mcp_cfg.path
        self.grpc, self.grpc_port = create_grpc_server(
            settings,
            service,
            host=config.host,
            port=config.grpc_port,
            require_auth=config.require_auth,
            interceptors=[GrpcObserve(self.metrics)],
            credentials=grpc_credentials(config),
            reuseport=grpc_reuseport,
            workers_ready=(lambda: _all_ready(workers)) if workers is not None else None,
        )
        self._uvicorn = _Uvicorn(
            uvicorn.Config(
                self.http,
                host=config.host,
                port=config.http_port,
                access_log=False,  # the JSON access log replaces uvicorn's
                log_level="warning",
                timeout_graceful_shutdown=int(config.grace_seconds),
                lifespan="on",
                http=limited_h11(config.header_timeout, config.max_connections),
                timeout_keep_alive=max(1, round(config.keep_alive)),
                limit_concurrency=config.max_connections,
                ssl_certfile=config.tls_cert,
                ssl_keyfile=config.tls_key,
            )
        )

    def endpoints(self) -> Endpoints:
        """The URLs of the running surfaces (ports resolved after start)."""
        return endpoints_of(self.config, self._uvicorn.port, self.grpc_port, self.mcp_path)

    def run(
        self,
        on_ready: Callable[[Endpoints], None] | None = None,
        *,
        on_stopping: Callable[[], None] | None = None,
        reraise: bool = True,
    ) -> None:
        """Serve until SIGINT/SIGTERM (main thread) or ``stop()``; then drain and stop gRPC.

        ``on_stopping`` is called when the drain begins. ``reraise=False`` (a worker process)
        returns after the drain instead of ending the process by the signal that stopped it.
        """
        self.grpc.start()
        self._uvicorn.on_started = (lambda: on_ready(self.endpoints())) if on_ready else None
        self._uvicorn.on_stopping = on_stopping
        try:
            self._uvicorn.run(sockets=self.sockets or None)
        finally:
            if on_stopping is not None:
                on_stopping()
            self.grpc.stop(grace=self.config.grace_seconds).wait()
            log.info("stopped: HTTP and gRPC drained")
        # uvicorn re-raises the signal that stopped it; it is held back until gRPC has drained
        # (the default SIGTERM handler would otherwise end the process before the drain)
        for sig in reversed(self._uvicorn.held_signals if reraise else ()):
            signal.raise_signal(sig)

    def stop(self) -> None:
        """Ask the server to shut down gracefully (from any thread)."""
        self._uvicorn.should_exit = True

    @property
    def started(self) -> bool:
        """Whether the HTTP listener accepts connections."""
        return bool(self._uvicorn.started)


class _Uvicorn(uvicorn.Server):
    """A uvicorn server that reports its bound port and when it has started."""

    on_started: Callable[[], None] | None = None
    on_stopping: Callable[[], None] | None = None
    held_signals: tuple[int, ...] = ()

    def handle_exit(self, sig: int, frame: Any) -> None:
        """uvicorn's, after telling ``on_stopping`` that the drain begins."""
        if self.on_stopping is not None:
            self.on_stopping()
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's signal capture, minus its re-raise on exit (``AmeideServer.run`` does it)."""
        self.held_signals = ()
        with super().capture_signals():
            yield
            self.held_signals = tuple(self._captured_signals)
            self._captured_signals.clear()

    @property
    def port(self) -> int:
        if self.servers and self.servers[0].sockets:
            port: int = self.servers[0].sockets[0].getsockname()[1]
            return port
        return self.config.port

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started and self.on_started is not None:
            self.on_started()


def endpoints_of(config: ServeConfig, http_port: int, grpc_port: int, mcp_path: str) -> Endpoints:
    """The URLs of the surfaces served on ``config.host`` at these ports."""
    host = f"[{config.host}]" if ":" in config.host else config.host
    scheme = "https" if config.tls else "http"
    base = f"{scheme}://{host}:{http_port}"
    return Endpoints(
        rest=f"{base}/v1",
        mcp=f"{base}{mcp_path}",
        grpc=f"{host}:{grpc_port}",
        openapi=f"{base}/openapi.json",
        metrics=f"{base}/metrics",
    )


def _all_ready(workers: Callable[[], tuple[int, int]]) -> bool:
    up, total = workers()
    return up >= total


def grpc_credentials(config: ServeConfig) -> grpc.ServerCredentials | None:
    """TLS credentials for gRPC from the same certificate and key files as HTTPS."""
    if not config.tls:
        return None
    try:
        with open(str(config.tls_key), "rb") as key, open(str(config.tls_cert), "rb") as cert:
            return grpc.ssl_server_credentials([(key.read(), cert.read())])
    except OSError as exc:
        raise InvalidArgument(
            f"cannot read the TLS files: {exc.strerror or exc} ({exc.filename})", field="tls_cert"
        ) from None


def _check_listenable(host: str, port: int) -> None:
    """A clear error now rather than uvicorn's exit after startup: the HTTP port is taken, or
    the host is no address of this machine."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise InvalidArgument(
                    f"cannot listen on {host} ({exc.strerror or exc}): --host must be an "
                    "address of this machine, e.g. 127.0.0.1, ::1 or 0.0.0.0",
                    field="host",
                ) from None
            raise InvalidArgument(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another "
                "--port (AMEIDE_HTTP_PORT) or --host",
                field="port",
            ) from None


def configure_logging() -> None:
    """JSON access lines (already rendered) and server warnings on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    access = logging.getLogger("ameide.access")
    access.handlers = [handler]
    access.setLevel(logging.INFO)
    access.propagate = False
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)  # start and stop of the server itself
