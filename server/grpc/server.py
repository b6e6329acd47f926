"""The gRPC surface: ``create_grpc_server`` wires the three servicers, the interceptors, the
standard health service (``server.grpc.health``) and server reflection (v1 and v1alpha,
``server.grpc.reflection``) into a sync ``grpc.Server`` on a thread pool.

Nothing happens at import time; the entrypoint (``ameide serve``, the smoke run, a test) calls
the factory with the service it built, starts the server and stops it::

    server, port = create_grpc_server(app, app.service, host="127.0.0.1", port=0)
    server.start()
    ...
    server.stop(grace=5).wait()

Interceptors, outermost first: ``CallScope`` (per-call state), the embedding process's own
(logs, metrics — they see the caller and the error code after the inner call), ``ErrorInterceptor``
(the error table), ``AuthInterceptor`` (bearer token → caller).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2_grpc

from ameide_proto.v1 import governance_pb2, knowledge_pb2, projection_pb2
from ameide_proto.v1 import governance_pb2_grpc as governance_rpc
from ameide_proto.v1 import knowledge_pb2_grpc as knowledge_rpc
from ameide_proto.v1 import projection_pb2_grpc as projection_rpc
from domain.errors import InvalidArgument
from edge.network import refuse_open_bind
from server.grpc.auth import AuthInterceptor
from server.grpc.calls import CallScope
from server.grpc.errors import ErrorInterceptor
from server.grpc.governance import GovernanceServicer
from server.grpc.health import ReadinessHealth
from server.grpc.knowledge import KnowledgeServicer
from server.grpc.projection import ProjectionServicer
from server.grpc.reflection import enable_reflection
from service.app import MemoryService

SERVICE_NAMES = (
    knowledge_pb2.DESCRIPTOR.services_by_name["KnowledgeService"].full_name,
    governance_pb2.DESCRIPTOR.services_by_name["GovernanceService"].full_name,
    projection_pb2.DESCRIPTOR.services_by_name["ProjectionService"].full_name,
)
"""The fully qualified names of the Ameide services (``ameide.memory.v1.…``)."""

DEFAULT_MAX_WORKERS = 16


def create_grpc_server(
    settings_or_app: Any,
    service: MemoryService,
    *,
    host: str,
    port: int,
    require_auth: bool = True,
    max_workers: int = DEFAULT_MAX_WORKERS,
    credentials: grpc.ServerCredentials | None = None,
    interceptors: Sequence[grpc.ServerInterceptor] = (),
    reuseport: bool = False,
    workers_ready: Callable[[], bool] | None = None,
) -> tuple[grpc.Server, int]:
    """A configured, bound, not yet started server and the port it bound (``port=0`` picks one).

    ``settings_or_app`` is the process's ``Settings`` or ``App``; without ``require_auth`` a
    call without a token acts as its configured local principal, which is only allowed on a
    loopback host. ``credentials`` serves TLS; ``interceptors`` run outside error mapping.
    ``reuseport`` lets the worker processes of ``ameide serve --workers N`` bind one port (the
    kernel spreads connections over them); ``workers_ready`` then joins their readiness to the
    health service's.
    """
    settings = getattr(settings_or_app, "settings", settings_or_app)
    refuse_open_bind(host, require_auth=require_auth, surface="gRPC")
    server = grpc.server(
        ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="ameide-grpc"),
        interceptors=[
            CallScope(),
            *interceptors,
            ErrorInterceptor(),
            AuthInterceptor(
                service.tokens.authenticate,
                require_auth=require_auth,
                local_principal=getattr(settings, "principal", None),
            ),
        ],
        # Without this, Linux lets a second server bind the same port and steal half the calls;
        # the workers of one `ameide serve --workers N` share their port on purpose.
        options=[("grpc.so_reuseport", 1 if reuseport else 0)],
    )
    servicers: list[tuple[Callable[[Any, grpc.Server], None], Any]] = [
        (knowledge_rpc.add_KnowledgeServiceServicer_to_server, KnowledgeServicer(service)),
        (governance_rpc.add_GovernanceServiceServicer_to_server, GovernanceServicer(service)),
        (projection_rpc.add_ProjectionServiceServicer_to_server, ProjectionServicer(service)),
    ]
    for register, servicer in servicers:
        register(servicer, server)
    health_pb2_grpc.add_HealthServicer_to_server(
        ReadinessHealth(service, SERVICE_NAMES, workers_ready), server
    )
    enable_reflection((*SERVICE_NAMES, health.SERVICE_NAME), server)
    address = f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
    try:
        try:
            bound = (
                server.add_secure_port(address, credentials)
                if credentials is not None
                else server.add_insecure_port(address)
            )
        except RuntimeError:
            bound = 0
        if not bound:  # older grpcio returns 0 instead of raising
            raise InvalidArgument(
                f"cannot listen for gRPC on {address}: the address is in use or not this "
                "machine's; choose another --grpc-port (AMEIDE_GRPC_PORT) or --host",
                field="grpc_port",
            )
    except BaseException:
        server.stop(None)
        raise
    return server, bound
