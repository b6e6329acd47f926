"""Who is calling: bearer token and ``x-ameide-*`` metadata → a ``Caller``.

Metadata a client sends (all values ASCII):

    authorization:          Bearer amt_…      → service.tokens.authenticate → principal_id
    x-ameide-on-behalf-of:  user:alice         → Caller.on_behalf_of (permissions intersect)
    x-ameide-purpose:       answer a question  → Caller.purpose (recorded with every read/write)
    x-ameide-roles:         reader,agent       → Caller.roles (claimed roles only narrow grants)

A missing, malformed, unknown or revoked token is ``UNAUTHENTICATED``. Without
``require_auth`` (a loopback-only development server) a call without a token acts as the
configured local principal; a token that is sent is still checked (the one rule of every
surface, ``edge.callers``; here only the metadata is read). Server reflection needs no
token: it describes the API, not the data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import grpc

from domain.errors import InvalidArgument, Unauthenticated
from edge.callers import (
    NO_BEARER_GRPC,
    NOT_BEARER_GRPC,
    authenticate_caller,
    narrowed_caller,
    presented_token,
)
from edge.headers import ON_BEHALF_OF_HEADER, PURPOSE_HEADER, ROLES_HEADER, metadata_key
from server.grpc.calls import Behavior, current_call, wrap_unary
from service.admin.tokens import Authenticated
from service.authz import Caller

AUTHORIZATION_KEY = "authorization"
ON_BEHALF_OF_KEY = metadata_key(ON_BEHALF_OF_HEADER)
PURPOSE_KEY = metadata_key(PURPOSE_HEADER)
ROLES_KEY = metadata_key(ROLES_HEADER)
TOOL_ID = "ameide-grpc"
PUBLIC_SERVICES = (
    "/grpc.reflection.v1.ServerReflection/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.health.v1.Health/",
)


def _values(metadata: Sequence[tuple[str, Any]] | None, key: str) -> list[str]:
    return [str(v) for k, v in metadata or () if k.lower() == key]


def _single(metadata: Sequence[tuple[str, Any]] | None, key: str) -> str | None:
    values = _values(metadata, key)
    if len(values) > 1:
        error = Unauthenticated if key == AUTHORIZATION_KEY else InvalidArgument
        raise error(f"more than one {key} metadata entry", field=key)
    return values[0].strip() if values and values[0].strip() else None


def bearer_token(metadata: Sequence[tuple[str, Any]] | None) -> str | None:
    """The token of ``authorization: Bearer …`` (None when there is no authorization entry)."""
    return presented_token(_single(metadata, AUTHORIZATION_KEY), not_bearer=NOT_BEARER_GRPC)


def caller_from_metadata(
    metadata: Sequence[tuple[str, Any]] | None,
    authenticate: Callable[[str], Authenticated],
    *,
    require_auth: bool = True,
    local_principal: str | None = None,
) -> Caller:
    """The caller a call's metadata identifies (raises ``Unauthenticated``, checked first)."""
    who = authenticate_caller(
        authenticate,
        token=bearer_token(metadata),
        local_principal=None if require_auth else local_principal,
        missing_token=NO_BEARER_GRPC,
    )
    return narrowed_caller(
        who,
        roles=_single(metadata, ROLES_KEY),
        on_behalf_of=_single(metadata, ON_BEHALF_OF_KEY),
        purpose=_single(metadata, PURPOSE_KEY),
        tool_id=TOOL_ID,
    )


class AuthInterceptor(grpc.ServerInterceptor):  # type: ignore[misc, unused-ignore]
    """Authenticates every unary call except the public services (install it innermost).

    The token is checked inside the handler, in the pool thread — ``intercept_service`` itself
    runs on the server's polling thread, which must not wait on the database.
    """

    def __init__(
        self,
        authenticate: Callable[[str], Authenticated],
        *,
        require_auth: bool = True,
        local_principal: str | None = None,
    ) -> None:
        self._authenticate = authenticate
        self._require_auth = require_auth
        self._local_principal = local_principal

    def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
        """Wrap the method's handler with authentication."""
        handler = continuation(details)
        if details.method.startswith(PUBLIC_SERVICES):
            return handler
        return wrap_unary(handler, self._authenticating)

    def _authenticating(self, behavior: Behavior) -> Behavior:
        def handle(request: Any, context: grpc.ServicerContext) -> Any:
            call = current_call()
            if call is None:
                raise RuntimeError("AuthInterceptor needs CallScope installed outside it")
            call.caller = caller_from_metadata(
                context.invocation_metadata(),
                self._authenticate,
                require_auth=self._require_auth,
                local_principal=self._local_principal,
            )
            return behavior(request, context)

        return handle
