"""``grpc.health.v1.Health`` for probes (``grpc_health_probe``, Kubernetes): each of our services,
and the server as a whole (``""``), is SERVING when the service is ready — the database answers
and the keyword index is on disk and able to catch up (``MemoryService.index.health``) — and
NOT_SERVING while it is not. The status is read at each ``Check`` and ``List``, so it never goes
stale; ``List`` answers every service with its status (the base class leaves it unimplemented);
``Watch`` streams it as the base class does. It needs no token (a public service of the auth
interceptor).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2

from service.app import MemoryService

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class ReadinessHealth(health.HealthServicer):  # type: ignore[misc]
    """Health of ``services`` (and of the server, ``""``) from the service's readiness."""

    def __init__(
        self,
        service: MemoryService,
        services: Iterable[str],
        workers_ready: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__()
        self._service = service
        self._workers_ready = workers_ready
        self._names = ("", *services)
        self.refresh()

    def refresh(self) -> None:
        """Read the readiness now and publish it for every service (watchers are told)."""
        ready = self._service.index.health().ready
        if self._workers_ready is not None:  # several worker processes: every one must be
            ready = ready and self._workers_ready()
        for name in self._names:
            self.set(name, SERVING if ready else NOT_SERVING)

    def Check(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802 - gRPC
        self.refresh()
        return super().Check(request, context)

    def List(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802 - gRPC
        """Every service this server reports on (and ``""``, the server) with its status now."""
        self.refresh()
        statuses = {
            name: health_pb2.HealthCheckResponse(status=self._server_status[name])
            for name in self._names
        }
        return health_pb2.HealthListResponse(statuses=statuses)
