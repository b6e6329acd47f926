"""The REST adapter: ``create_app(service, settings=…)`` → a FastAPI app over ``/v1``.

Thin by design: every ``/v1`` endpoint (``server/rest_*.py``) parses its request, builds the
caller from the bearer token (``server.rest.deps``), calls one ``MemoryService`` method and
returns its dict; failures go through the one error table (``edge.errors``, answered by
``server.rest.errors``). Endpoints are plain
``def`` functions, so FastAPI runs the synchronous service in its thread pool.

Outside ``/v1``: ``/healthz`` (the process answers), ``/readyz`` (the database answers and the
keyword index has caught up), ``/metrics`` (Prometheus), ``/openapi.json``, ``/docs`` and
``/favicon.ico`` (``server.rest.docs``: Swagger UI from the installed package, no CDN), and
the curator console under ``/ui`` (``console.app``: server-rendered HTML, its own sign-in).
Nothing is built at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request, Security
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from console.app import create_console
from domain.errors import Unauthenticated
from edge.callers import resolve_caller
from edge.network import MAX_REQUEST_BYTES
from edge.version import package_version
from server.http.limits import BodyLimit, BodyText, JsonBody
from server.rest import admin as rest_admin
from server.rest import audit as rest_audit
from server.rest import curation as rest_curation
from server.rest import docs as rest_docs
from server.rest import drift as rest_drift
from server.rest import knowledge as rest_knowledge
from server.rest import publishing as rest_publishing
from server.rest import read as rest_read
from server.rest import sources as rest_sources
from server.rest.deps import TOOL_ID, RestContext, bearer, known_query_only
from server.rest.errors import ERROR_RESPONSES, document_errors_as_400, install_error_handlers
from server.rest.observe import Metrics, ObserveMiddleware
from service.app import MemoryService
from service.settings import Settings

MAX_BODY_BYTES = MAX_REQUEST_BYTES
"""Largest request body: a 2 MiB element body plus JSON escaping and the other fields."""
DESCRIPTION = """\
A governed, versioned knowledge repository for AI agents. Agents read permission-trimmed,
version-pinned context and propose changes; curators accept or reject; publishers promote
baselines; auditors replay any past state.

Authenticate with `Authorization: Bearer amt_…` (`ameide token create PRINCIPAL`). Optional
headers: `X-Ameide-On-Behalf-Of`, `X-Ameide-Purpose`, `X-Ameide-Roles`. Every error is
`{"error": {"code", "message", "details"}}`; see docs/rest.md for the status table.
"""


class Health(BaseModel):
    """Liveness."""

    status: str


class Readiness(BaseModel):
    """Readiness: the database answers and the keyword index has caught up."""

    status: str
    database: str
    index: dict[str, Any] | None
    workers: dict[str, int] | None = Field(
        default=None,
        description="With `ameide serve --workers N` (N > 1): how many worker processes are "
        "ready of how many; the server is ready only when every one is.",
    )


def create_app(
    service: MemoryService,
    *,
    settings: Settings,
    require_auth: bool = True,
    metrics_public: bool = False,
    metrics_repository_labels: bool = False,
    workers: Callable[[], tuple[int, int]] | None = None,
) -> FastAPI:
    """The REST app over ``service``.

    ``require_auth=False`` lets requests without a token act as ``settings.principal`` (local
    development on loopback; ``ameide serve`` refuses it on other addresses). A token, when
    sent, is always checked. ``/metrics`` needs a valid bearer token unless ``metrics_public``
    (or ``require_auth`` is off), and names repositories in labels only with
    ``metrics_repository_labels``. ``workers`` (several worker processes on one port) says how
    many of them are ready of how many: ``/readyz`` is ready only when every one is.
    """
    app = FastAPI(
        title="Ameide Memory",
        version=package_version(),
        description=DESCRIPTION,
        openapi_url="/openapi.json",
        docs_url=None,  # server.rest.docs serves /docs from the installed assets, not a CDN
        redoc_url=None,
    )
    app.state.ameide = RestContext(service, settings, require_auth)
    metrics = Metrics(service, repository_labels=metrics_repository_labels)
    app.state.metrics = metrics
    install_error_handlers(app)
    v1 = APIRouter(prefix="/v1", dependencies=[Depends(known_query_only)])
    modules = (
        rest_admin,
        rest_knowledge,
        rest_curation,
        rest_publishing,
        rest_audit,
        rest_read,
        rest_drift,
        rest_sources,
    )
    for module in modules:
        v1.include_router(module.router)
    app.include_router(v1)
    app.include_router(_operations_router(service, metrics, public=metrics_public, workers=workers))
    rest_docs.install_docs(app)
    app.mount("/ui", create_console(service), name="console")  # the curator console (HTML)
    app.add_middleware(HeadAsGet)  # innermost: the access log and metrics still say HEAD
    app.add_middleware(JsonBody)  # /v1: application/json, one value per key
    app.add_middleware(BodyText)  # inside BodyLimit: only a bounded body is buffered
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    app.add_middleware(ObserveMiddleware, metrics=metrics, surface="rest")
    _openapi_with_400(app)
    return app


class HeadAsGet:
    """Answer ``HEAD`` on every ``GET`` route (RFC 9110 §9.3.2; uptime probes use it): the
    request runs as ``GET`` — same status, same headers, ``Content-Length`` included — and the
    body is dropped. FastAPI routes list ``GET`` only, so without this ``HEAD`` is a 405; one
    gate here covers every route, the operations ones and ``/ui`` included, and the OpenAPI
    document stays as it is (``HEAD`` is implicit there)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headless(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the body is never sent; only its end is
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headless)


def _operations_router(
    service: MemoryService,
    metrics: Metrics,
    *,
    public: bool,
    workers: Callable[[], tuple[int, int]] | None = None,
) -> APIRouter:
    router = APIRouter(tags=["operations"], dependencies=[Depends(known_query_only)])

    @router.get("/healthz", response_model=Health, operation_id="healthz")
    def healthz() -> Any:
        """The process is up (no dependency is checked)."""
        return {"status": "ok"}

    @router.get(
        "/readyz",
        response_model=Readiness,
        operation_id="readyz",
        responses={503: {"model": Readiness, "description": "not ready"}},
    )
    def readyz() -> Any:
        """Ready: the database answers and the keyword index is on disk and can catch up (and,
        with several worker processes, every worker is ready)."""
        health = service.index.health()
        ready = health.ready
        body: dict[str, Any] = {"database": health.database, "index": health.index}
        if workers is not None:
            up, total = workers()
            ready = ready and up >= total
            body["workers"] = {"ready": up, "total": total}
        body = {"status": "ready" if ready else "not_ready", **body}
        return JSONResponse(body, status_code=200 if ready else 503)

    @router.get(
        "/metrics",
        operation_id="metrics",
        response_class=Response,
        responses={
            200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}},
            401: ERROR_RESPONSES[401],
        },
    )
    def prometheus_metrics(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    ) -> Response:
        """Prometheus metrics: requests and latency by operation, index lag, proposal queue.

        Needs a bearer token (any valid one) unless the server runs with ``--metrics-public``.
        The proposal queue counts only proposals the token's principal may read (all of them
        for a global admin); a scrape without a token gets process-level series only."""
        ctx: RestContext = request.app.state.ameide
        if credentials is None and not public and ctx.require_auth:
            raise Unauthenticated(
                "missing bearer token: /metrics needs one (or serve with --metrics-public)"
            )
        token = credentials.credentials if credentials is not None else None
        local = None if ctx.require_auth else ctx.settings.principal
        caller = None
        if token is not None or local:
            caller = resolve_caller(
                service.tokens.authenticate,
                token=token,
                local_principal=local,
                roles=None,
                on_behalf_of=None,
                purpose="metrics",
                tool_id=TOOL_ID,
            )
            request.state.principal = caller.principal_id
        return Response(metrics.render(caller), media_type=CONTENT_TYPE_LATEST)

    return router


def _openapi_with_400(app: FastAPI) -> None:
    """Generate OpenAPI once, documenting validation errors as 400 like the handler answers."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = document_errors_as_400(schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
