"""Operating the network surfaces: Prometheus metrics, one JSON log line per request, probes.

``Metrics`` owns a private registry (one per app, so two apps in one process never clash):

- ``ameide_requests_total{surface, operation, status}`` and
  ``ameide_request_duration_seconds{surface, operation}``;
- ``ameide_index_lag`` (committed changes not yet applied to the keyword index) and
  ``ameide_index_consistent``, read from the service at scrape time;
- ``ameide_proposal_queue_size`` (OPEN proposals, from the service's caller-free
  ``open_proposal_counts()``): one total, or per ``{repository}`` only when the operator asks
  for repository labels (``--metrics-repository-labels``): names are information too.

``ObserveMiddleware`` gives every request a trace id (the caller's ``X-Trace-Id`` or W3C
``traceparent`` when well-formed, else a fresh one; echoed in ``X-Trace-Id``), times it, counts
it and writes one JSON line to the ``ameide.access`` logger: trace id, principal, operation,
method, path, status, latency. Bearer tokens never reach the log.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

access_log = logging.getLogger("ameide.access")
log = logging.getLogger("ameide.server")

_TRACE_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


class _ServiceCollector(Collector):
    """Gauges read from the service when Prometheus scrapes."""

    def __init__(self, service: Any, *, repository_labels: bool) -> None:
        self._service = service
        self._repository_labels = repository_labels

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("ameide_database_up", "1 when the database answered the scrape")
        try:
            status = self._service.health()["index"]
            counts = self._service.open_proposal_counts()
        except Exception:  # a scrape must not fail because the database is down
            log.warning("metrics: the database did not answer", exc_info=True)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        if status is not None:
            yield GaugeMetricFamily(
                "ameide_index_lag",
                "Committed changes not yet applied to the keyword index",
                value=status["pending"],
            )
            yield GaugeMetricFamily(
                "ameide_index_consistent",
                "1 when the keyword index holds exactly what the database says",
                value=1 if status["consistent"] else 0,
            )
        if not self._repository_labels:  # repository names stay out of labels unless asked for
            yield GaugeMetricFamily(
                "ameide_proposal_queue_size",
                "OPEN proposals in all repositories",
                value=sum(counts.values()),
            )
            return
        queue = GaugeMetricFamily(
            "ameide_proposal_queue_size", "OPEN proposals per repository", labels=["repository"]
        )
        for repo, n in sorted(counts.items()):
            queue.add_metric([repo], n)
        yield queue


class Metrics:
    """Request counters and latency histograms, plus the service's gauges."""

    def __init__(self, service: Any, *, repository_labels: bool = False) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ameide_requests_total",
            "Requests by surface, operation and status",
            ["surface", "operation", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "ameide_request_duration_seconds",
            "Request latency by surface and operation",
            ["surface", "operation"],
            registry=self.registry,
        )
        self.registry.register(_ServiceCollector(service, repository_labels=repository_labels))

    def observe(self, surface: str, operation: str, status: str, seconds: float) -> None:
        """Count one request and record its latency."""
        self.requests.labels(surface, operation, status).inc()
        self.latency.labels(surface, operation).observe(seconds)


def trace_id_of(headers: Headers) -> str:
    """The caller's trace id when well-formed, else a fresh one."""
    given = headers.get("x-trace-id", "")
    if _TRACE_ID.match(given):
        return given
    parent = _TRACEPARENT.match(headers.get("traceparent", ""))
    return parent.group(1) if parent else uuid.uuid4().hex


def log_request(**fields: Any) -> None:
    """One structured line on ``ameide.access``."""
    record = {"ts": datetime.now(UTC).isoformat().replace("+00:00", "Z"), **fields}
    access_log.info(json.dumps(record, default=str, sort_keys=False))


class ObserveMiddleware:
    """Trace id, metrics and a JSON access-log line for every HTTP request (pure ASGI)."""

    def __init__(self, app: ASGIApp, metrics: Metrics, surface: str = "rest") -> None:
        self.app = app
        self.metrics = metrics
        self.surface = surface

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        trace_id = trace_id_of(Headers(scope=scope))
        state = scope.setdefault("state", {})
        state["trace_id"] = trace_id
        status = 500
        start = time.perf_counter()

        async def send_with_trace(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message).append("X-Trace-Id", trace_id)
            await send(message)

        try:
            await self.app(scope, receive, send_with_trace)
        finally:
            seconds = time.perf_counter() - start
            route = scope.get("route")
            operation = getattr(route, "operation_id", None) or getattr(route, "name", None)
            operation = str(operation or "unmatched")
            self.metrics.observe(self.surface, operation, str(status), seconds)
            log_request(
                surface=self.surface,
                trace_id=trace_id,
                principal=state.get("principal"),
                operation=operation,
                method=scope.get("method"),
                path=scope.get("path"),
                status=status,
                latency_ms=round(seconds * 1000, 3),
            )
