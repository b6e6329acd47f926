"""MCP over Streamable HTTP: ``create_http_app(…)`` → an ASGI app serving ``/mcp``.

In front of the SDK's transport sits ``McpGuard``:

1. a browser ``Origin`` header must be a loopback origin or one listed in
   ``AMEIDE_MCP_ALLOWED_ORIGINS`` (403 otherwise), so a web page cannot drive the tools;
2. ``Authorization: Bearer amt_…`` → ``MemoryService.tokens.authenticate`` → the principal
   (401 with ``WWW-Authenticate: Bearer`` when missing or invalid; ``edge.callers``). Without
   authentication the app acts as the configured local principal, and is only built for a
   loopback host.

The transport is stateless with JSON responses: every POST carries its own token, so any
server process sharing the database can answer any request. ``GET`` (the optional SSE stream,
which a stateless server has nothing to send on) is 405 with ``Allow: POST``.
``X-Ameide-On-Behalf-Of``, ``X-Ameide-Purpose`` and ``X-Ameide-Roles`` narrow the caller as on
the REST API.
"""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any

import anyio
from mcp.server import ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from domain.errors import AmeideError, PermissionDenied, Unauthenticated
from edge.callers import (
    NOT_BEARER_HTTP,
    Identity,
    authenticate_caller,
    narrowed_caller,
    presented_token,
)
from edge.errors import error_body, rule_for
from edge.headers import ON_BEHALF_OF_HEADER, PURPOSE_HEADER, ROLES_HEADER
from edge.network import MAX_REQUEST_BYTES, is_loopback, origin_matches, refuse_open_bind
from mcp_adapter.server import MemoryMcp, Observe
from mcp_adapter.settings import McpSettings
from service.app import MemoryService
from service.authz import Caller
from service.settings import Settings

TOOL_ID = "ameide-mcp"
IDENTITY_KEY = "ameide.identity"
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]


def origin_allowed(origin: str, allowed: list[str]) -> bool:
    """Whether a browser page from ``origin`` may call ``/mcp`` (``edge.network``'s rule)."""
    return any(origin_matches(origin, pattern) for pattern in allowed)


class McpGuard:
    """Origin check and bearer authentication in front of the MCP transport (pure ASGI)."""

    def __init__(
        self,
        app: Starlette,
        service: MemoryService,
        *,
        require_auth: bool,
        local_principal: str | None,
        allowed_origins: list[str],
        path: str = "/mcp",
    ) -> None:
        self.app = app
        self.path = path
        self.service = service
        self.require_auth = require_auth
        self.local_principal = local_principal
        self.allowed_origins = allowed_origins

    def lifespan(self) -> AbstractAsyncContextManager[Any]:
        """The transport's lifespan (it runs the session manager), for a host that routes
        requests here without passing lifespan events (``ameide serve``)."""
        return self.app.router.lifespan_context(self.app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the session manager starts and stops
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if scope.get("path", "").startswith(METADATA_PATH):
            await _json(send, 200, resource_metadata(scope, self.path))
            return
        origin = headers.get("origin")
        if origin and not origin_allowed(origin, self.allowed_origins):
            denied = PermissionDenied(
                f"origin {origin} may not use this MCP server; list it in "
                "AMEIDE_MCP_ALLOWED_ORIGINS"
            )
            await _refuse(send, denied)
            return
        if scope.get("method") in ("GET", "HEAD"):
            await _no_stream(send)
            return
        try:
            scope[IDENTITY_KEY] = await self._identity(headers)
        except Unauthenticated as exc:
            await _refuse(send, exc, _base_url(scope) + METADATA_PATH)
            return
        await self.app(scope, receive, send)

    async def _identity(self, headers: Headers) -> Identity:
        identify = partial(
            authenticate_caller,
            self.service.tokens.authenticate,
            token=presented_token(headers.get("authorization"), not_bearer=NOT_BEARER_HTTP),
            local_principal=None if self.require_auth else self.local_principal,
        )
        who: Identity = await anyio.to_thread.run_sync(identify)
        return who


async def _refuse(send: Send, error: AmeideError, metadata_url: str | None = None) -> None:
    status = rule_for(error).http_status
    extra = []
    if status == 401:  # RFC 6750, and RFC 9728's pointer to what kind of resource this is
        challenge = f'Bearer resource_metadata="{metadata_url}"' if metadata_url else "Bearer"
        extra.append((b"www-authenticate", challenge.encode()))
    await _json(send, status, error_body(error.code, error.message, error.details), extra)


async def _no_stream(send: Send) -> None:
    """405 to ``GET``: the transport is stateless, so there is no server-to-client SSE stream to
    open (the SDK would open one that never sends or closes); the Streamable HTTP spec lets a
    server answer 405 instead, and clients then carry on over POST alone."""
    message = "this MCP endpoint is stateless and opens no SSE stream; send requests with POST"
    body = error_body("METHOD_NOT_ALLOWED", message, {"allowed": ["POST"]})
    await _json(send, 405, body, [(b"allow", b"POST")])


async def _json(
    send: Send, status: int, document: Any, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps(document).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})


METADATA_PATH = "/.well-known/oauth-protected-resource"
"""OAuth protected-resource metadata (RFC 9728): what a client that probes learns — this server
takes bearer tokens in the Authorization header (minted with ``ameide token create``) and names
no authorization server, so no OAuth flow is started."""


def resource_metadata(scope: Scope, mcp_path: str) -> dict[str, Any]:
    """The RFC 9728 document for the MCP endpoint of this request's origin."""
    return {
        "resource": _base_url(scope) + mcp_path,
        "bearer_methods_supported": ["header"],
        "resource_name": "Ameide Memory",
        "resource_documentation": "mint a token with `ameide token create PRINCIPAL` and send "
        "'Authorization: Bearer amt_…'; no OAuth authorization server is used",
    }


def _base_url(scope: Scope) -> str:
    host = Headers(scope=scope).get("host") or "localhost"
    return f"{scope.get('scheme', 'http')}://{host}"


def http_caller(ctx: ServerRequestContext[Any]) -> Caller:
    """The caller of an HTTP request: the guard's identity, narrowed by the headers."""
    request = ctx.request
    who = request.scope.get(IDENTITY_KEY) if request is not None else None
    if request is None or who is None:
        raise Unauthenticated("this request was not authenticated")
    headers = request.headers
    return narrowed_caller(
        who,
        roles=headers.get(ROLES_HEADER),
        on_behalf_of=headers.get(ON_BEHALF_OF_HEADER),
        purpose=headers.get(PURPOSE_HEADER),
        tool_id=TOOL_ID,
    )


def create_http_app(
    service: MemoryService,
    *,
    settings: Settings,
    mcp_settings: McpSettings | None = None,
    require_auth: bool = True,
    host: str = "127.0.0.1",
    observe: Observe | None = None,
) -> McpGuard:
    """The Streamable HTTP app; refuses to exist without authentication on a non-loopback host."""
    refuse_open_bind(host, require_auth=require_auth, surface="MCP")
    cfg = mcp_settings or McpSettings()
    origins = LOOPBACK_ORIGINS + cfg.allowed_origins
    mcp = MemoryMcp(service, http_caller, tool_names=cfg.tool_names, observe=observe)
    app = mcp.server().streamable_http_app(
        streamable_http_path=cfg.path,
        stateless_http=True,
        json_response=True,
        # the SDK's own limit (4 MiB, answered in plain text) must not undercut the listener's
        max_request_body_size=MAX_REQUEST_BYTES,
        host=host,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=is_loopback(host) or bool(cfg.allowed_hosts),
            allowed_hosts=LOOPBACK_HOSTS + cfg.allowed_hosts,
            allowed_origins=origins,
        ),
    )
    return McpGuard(
        app,
        service,
        require_auth=require_auth,
        local_principal=settings.principal,
        allowed_origins=origins,
        path=cfg.path,
    )
