"""Per-request dependencies of the REST adapter: the service and the authenticated caller.

``Authorization: Bearer amt_…`` → ``MemoryService.tokens.authenticate`` → the principal (and
the token's id, recorded as the parent of any token minted with it), by the one rule of every
surface (``edge.callers``). Three optional headers narrow what the request may do, exactly like
the CLI's global options:
``X-Ameide-On-Behalf-Of`` (permissions become the intersection of both principals),
``X-Ameide-Purpose`` (recorded with every read and write) and ``X-Ameide-Roles``
(comma-separated roles the client claims; they can only narrow the server's grants).
The token itself is never logged or stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Header, Path, Request, Security
from fastapi.dependencies.models import Dependant
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from domain.errors import InvalidArgument
from edge.callers import (
    NO_BEARER_HTTP,
    NOT_BEARER_HTTP,
    presented_token,
    resolve_caller,
)
from edge.headers import ON_BEHALF_OF_HEADER, PURPOSE_HEADER, ROLES_HEADER
from server.rest.inputs import OnBehalfOfHeader, PurposeHeader, RolesHeader, Segment
from service.app import MemoryService
from service.authz import Caller
from service.settings import Settings

TOOL_ID = "ameide-rest"

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="A bearer token made by `ameide token create PRINCIPAL` (`amt_…`).",
)


@dataclass(frozen=True)
class RestContext:
    """What ``create_app`` hands every request (kept in ``app.state.ameide``)."""

    service: MemoryService
    settings: Settings
    require_auth: bool


_DECLARED: dict[int, frozenset[str]] = {}


def known_query_only(request: Request) -> None:
    """Refuse a query parameter the route does not declare (400 ``INVALID_ARGUMENT`` naming
    each): a misspelt filter (``?stal=true``) or one this route lacks must not silently widen
    the answer. One dependency on every router, read from each route's own declaration."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None or not request.query_params:
        return
    declared = _DECLARED.get(id(route))
    if declared is None:
        declared = _DECLARED.setdefault(id(route), frozenset(_query_names(dependant)))
    unknown = sorted(set(request.query_params) - declared)
    if unknown:
        raise InvalidArgument(
            f"unknown query parameter{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}"
            + (f" (this operation takes: {', '.join(sorted(declared))})" if declared else ""),
            field=unknown[0],
        )


def _query_names(dependant: Dependant) -> Iterator[str]:
    """The query parameters a route declares, its dependencies' included."""
    yield from (field.alias for field in dependant.query_params)
    for sub in dependant.dependencies:
        yield from _query_names(sub)


def _context(request: Request) -> RestContext:
    ctx: RestContext = request.app.state.ameide
    return ctx


def get_service(request: Request) -> MemoryService:
    """The one service layer."""
    return _context(request).service


def get_caller(
    request: Request,
    # Declares the security scheme in OpenAPI; the header itself goes to presented_token.
    _scheme: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    on_behalf_of: Annotated[
        OnBehalfOfHeader,
        Header(
            alias=ON_BEHALF_OF_HEADER,
            description="Act for this principal: permissions are the intersection of both.",
        ),
    ] = None,
    purpose: Annotated[
        PurposeHeader,
        Header(alias=PURPOSE_HEADER, description="Why; recorded with every read and write."),
    ] = None,
    roles: Annotated[
        RolesHeader,
        Header(
            alias=ROLES_HEADER,
            description="Comma-separated roles you claim; they only narrow your grants.",
        ),
    ] = None,
) -> Caller:
    """The authenticated caller (a plain ``def``: token lookup runs in the thread pool)."""
    ctx = _context(request)
    caller = resolve_caller(
        ctx.service.tokens.authenticate,
        token=presented_token(request.headers.get("authorization"), not_bearer=NOT_BEARER_HTTP),
        local_principal=None if ctx.require_auth else ctx.settings.principal,
        roles=roles,
        on_behalf_of=on_behalf_of,
        purpose=purpose,
        tool_id=TOOL_ID,
        missing_token=NO_BEARER_HTTP,
    )
    request.state.principal = caller.principal_id
    return caller


def repository_key(
    tenant: Annotated[Segment, Path(description="Tenant id, e.g. acme.")],
    org: Annotated[Segment, Path(description="Organization id, e.g. eng.")],
    repo: Annotated[Segment, Path(description="Repository id, e.g. platform.")],
) -> str:
    """``tenant/org/repo`` from the three path segments (each checked by the segment rule)."""
    return f"{tenant}/{org}/{repo}"


ServiceDep = Annotated[MemoryService, Depends(get_service)]
CallerDep = Annotated[Caller, Depends(get_caller)]
RepoDep = Annotated[str, Depends(repository_key)]
REPO = "/repositories/{tenant}/{org}/{repo}"
"""Path prefix of repository-scoped operations (repository ids contain two slashes)."""


def drop_none(values: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments without the ones the client left out (the service has defaults)."""
    return {k: v for k, v in values.items() if v is not None}
