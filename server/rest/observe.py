"""Operating the network surfaces: Prometheus metrics, one JSON log line per request, probes.

``Metrics`` owns a private registry (one per app, so two apps in one process never clash) of
process-level series, the same for every scraper:

- ``ameide_requests_total{surface, operation, status}`` and
  ``ameide_request_duration_seconds{surface, operation}``;
- ``ameide_index_lag`` (committed changes not yet applied to the keyword index),
  ``ameide_index_consistent`` and ``ameide_database_up``, read from the service at scrape time.

Content counts are not in it. ``ameide_proposal_queue_size`` (OPEN proposals) is built for
each scrape (``Metrics.render``) from the service's ``open_proposal_counts(caller)``, which
counts only the proposals the scraping token's principal may read: everything for a global
admin, never another tenant's for anyone else. An anonymous scrape (``--metrics-public``, no
token) gets no content counts at all. One total, or per ``{repository}`` (only repositories
the caller sees proposals in) when the operator asks for repository labels
(``--metrics-repository-labels``): names are information too.

``ObserveMiddleware`` gives every request a trace id (the caller's ``X-Trace-Id`` or W3C
``traceparent`` when well-formed, else a fresh one; echoed in ``X-Trace-Id``), times it, counts
it and writes one JSON line to the ``ameide.access`` logger: trace id, principal, operation,
method, path, status, HTTP status, latency. Bearer tokens never reach the log.

``status`` (the metric label and the log field) is the vocabulary of every surface
(``edge.tracing``): ``OK``, or the code of the error body (``NOT_FOUND``, ``STALE_PROPOSAL``, …),
so REST, gRPC and MCP count alike; the HTTP status is logged as ``http_status``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from edge import tracing
from service.app import MemoryService
from service.authz import Caller

access_log = logging.getLogger("ameide.access")
log = logging.getLogger("ameide.server")
MAX_SNIFFED_BODY = 65536
"""An error body longer than this is not read for its code (the HTTP status names it)."""


class _ServiceCollector(Collector):
    """Gauges read from the service when Prometheus scrapes."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("ameide_database_up", "1 when the database answered the scrape")
        try:
            status = self._service.index.health().index
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


class _QueueCollector(Collector):
    """The proposal queue as one caller may count it (built for one scrape)."""

    def __init__(self, service: MemoryService, caller: Caller, *, repository_labels: bool) -> None:
        self._service = service
        self._caller = caller
        self._repository_labels = repository_labels

    def collect(self) -> Iterator[Metric]:
        try:
            counts = self._service.index.open_proposal_counts(self._caller).root
        except Exception:  # ameide_database_up says why; the scrape still answers
            log.warning("metrics: the proposal queue could not be counted", exc_info=True)
            return
        if not self._repository_labels:  # repository names stay out of labels unless asked for
            yield GaugeMetricFamily(
                "ameide_proposal_queue_size",
                "OPEN proposals you may read, in all repositories",
                value=sum(counts.values()),
            )
            return
        queue = GaugeMetricFamily(
            "ameide_proposal_queue_size",
            "OPEN proposals you may read, per repository",
            labels=["repository"],
        )
        for repo, n in sorted(counts.items()):
            queue.add_metric([repo], n)
        yield queue


class Metrics:
    """Request counters and latency histograms, plus the service's gauges."""

    def __init__(self, service: MemoryService, *, repository_labels: bool = False) -> None:
        self._service = service
        self._repository_labels = repository_labels
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
        self.registry.register(_ServiceCollector(service))

    def render(self, caller: Caller | None) -> bytes:
        """The exposition text for one scrape: the process-level series, then the content
        counts ``caller`` may see (none for an anonymous scrape, ``caller=None``)."""
        text = generate_latest(self.registry)
        if caller is None:
            return text
        per_caller = CollectorRegistry()
        per_caller.register(
            _QueueCollector(self._service, caller, repository_labels=self._repository_labels)
        )
        return text + generate_latest(per_caller)

    def observe(self, surface: str, operation: str, status: str, seconds: float) -> None:
        """Count one request and record its latency."""
        self.requests.labels(surface, operation, status).inc()
        self.latency.labels(surface, operation).observe(seconds)


def trace_id_of(headers: Headers) -> str:
    """The caller's trace id when well-formed, else a fresh one."""
    return tracing.trace_id_of(headers.get)


def error_code_of(body: bytes) -> str | None:
    """The ``code`` of an ``{"error": {...}}`` body (``None`` if it is not one)."""
    if len(body) > MAX_SNIFFED_BODY:
        return None
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, TypeError, KeyError):
        return None
    return code if isinstance(code, str) else None


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
        status, code = 500, None
        start = time.perf_counter()

        async def send_with_trace(message: Message) -> None:
            nonlocal status, code
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message).append("X-Trace-Id", trace_id)
            elif message["type"] == "http.response.body" and status >= 400 and code is None:
                code = error_code_of(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_with_trace)
        finally:
            seconds = time.perf_counter() - start
            route = scope.get("route")
            operation = getattr(route, "operation_id", None) or getattr(route, "name", None)
            operation = str(operation or "unmatched")
            outcome = tracing.status_of_http(status, code)
            self.metrics.observe(self.surface, operation, outcome, seconds)
            log_request(
                surface=self.surface,
                trace_id=trace_id,
                principal=state.get("principal"),
                operation=operation,
                method=scope.get("method"),
                path=scope.get("path"),
                status=outcome,
                http_status=status,
                latency_ms=round(seconds * 1000, 3),
            )
