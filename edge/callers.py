"""Who is calling: the credentials and narrowing headers a request carries → a service ``Caller``.

Every network surface receives the same four things, each in its own transport's shape (HTTP
headers, gRPC metadata):

    bearer token      amt_…               → service.tokens.authenticate → principal, token id
    on-behalf-of      user:alice          → Caller.on_behalf_of (permissions intersect)
    purpose           answer a question   → Caller.purpose (recorded with every read and write)
    roles             reader,agent        → Caller.roles (claimed roles only narrow grants)

Without a token, a server that does not require authentication (loopback only) acts as its
configured local principal; otherwise the call is ``UNAUTHENTICATED``. A token that is sent is
always checked. The token itself is never logged or stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from domain.errors import Unauthenticated
from service.admin.tokens import Authenticated
from service.authz import Caller

NO_BEARER_HTTP = (
    "missing bearer token: send 'Authorization: Bearer amt_…' "
    "(create one with `ameide token create PRINCIPAL`)"
)
NO_BEARER_GRPC = (
    "missing bearer token: send metadata 'authorization: Bearer <token>' "
    "(create one with `ameide token create`)"
)
NOT_BEARER_HTTP = "the Authorization header must be 'Bearer amt_…'"
NOT_BEARER_GRPC = "authorization metadata must be 'Bearer <token>'"


@dataclass(frozen=True)
class Identity:
    """Who sent a request: the principal, and the token it presented (None: local, no token)."""

    principal_id: str
    token_id: str | None = None


def bearer_secret(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` value; None when it is not one."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def presented_token(authorization: str | None, *, not_bearer: str) -> str | None:
    """The bearer token a request presents: None when it sends no (or an empty) authorization;
    any other scheme (``Basic …``) or an empty bearer is refused with ``not_bearer`` — on every
    surface, with or without required authentication: a request that meant to authenticate
    is never taken for the local principal."""
    if not authorization:
        return None
    token = bearer_secret(authorization)
    if token is None:
        raise Unauthenticated(not_bearer)
    return token


def claimed_roles(roles: str | None) -> tuple[str, ...]:
    """``"reader, agent"`` → ``("reader", "agent")`` (blank entries dropped)."""
    return tuple(r.strip() for r in roles.split(",") if r.strip()) if roles else ()


def authenticate_caller(
    authenticate: Callable[[str], Authenticated],
    *,
    token: str | None,
    local_principal: str | None,
    missing_token: str = NO_BEARER_HTTP,
) -> Identity:
    """Who sent the request, and with which token (raises ``Unauthenticated``).

    ``token`` is the bearer secret sent (None: none was); ``local_principal`` is who a call
    without a token acts as — pass None whenever authentication is required (its token id is
    None). ``missing_token`` tells the client, in its transport's words, how to send a token.
    """
    if token is not None:
        who = authenticate(token)
        return Identity(who.principal_id, who.token_id)
    if local_principal:
        return Identity(local_principal)  # local development without tokens (loopback only)
    raise Unauthenticated(missing_token)


def narrowed_caller(
    who: Identity,
    *,
    roles: str | None,
    on_behalf_of: str | None,
    purpose: str | None,
    tool_id: str,
) -> Caller:
    """The ``Caller`` of an authenticated principal, narrowed as the request asks.

    ``roles`` is the comma-separated claim; empty values count as absent.
    """
    return Caller(
        who.principal_id,
        on_behalf_of=on_behalf_of or None,
        roles=claimed_roles(roles),
        purpose=purpose or None,
        tool_id=tool_id,
        token_id=who.token_id,
    )


def resolve_caller(
    authenticate: Callable[[str], Authenticated],
    *,
    token: str | None,
    local_principal: str | None,
    roles: str | None,
    on_behalf_of: str | None,
    purpose: str | None,
    tool_id: str,
    missing_token: str = NO_BEARER_HTTP,
) -> Caller:
    """The caller of one request: :func:`authenticate_caller`, then :func:`narrowed_caller`."""
    who = authenticate_caller(
        authenticate, token=token, local_principal=local_principal, missing_token=missing_token
    )
    return narrowed_caller(
        who, roles=roles, on_behalf_of=on_behalf_of, purpose=purpose, tool_id=tool_id
    )
