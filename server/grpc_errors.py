"""How the gRPC surface reports failure: the one table from the error taxonomy to status codes.

A service error ends the call with the status of its class (``STATUS_CODES``, nearest class
along the MRO, like the CLI's exit codes) and the error's message as the status details. The
taxonomy's own code and details travel in the trailing metadata, so a client can tell a
``STALE_PROPOSAL`` from a ``LEGAL_HOLD`` (both ``FAILED_PRECONDITION``)::

    x-ameide-error-code:    STALE_PROPOSAL
    x-ameide-error-details: {"current_head_version_id": "ver_…", "target_version_id": "ver_…"}

Anything else a handler raises is a bug: it is logged with its traceback and the client gets
``INTERNAL`` with no detail.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, NoReturn

import grpc

from domain.errors import (
    AlreadyExists,
    AmeideError,
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from server.grpc_calls import current_call, wrap_unary

ERROR_CODE_KEY = "x-ameide-error-code"
ERROR_DETAILS_KEY = "x-ameide-error-details"
MAX_DETAILS_CHARS = 4096
"""Trailing metadata shares HTTP/2 header limits; larger details are replaced by a marker."""

STATUS_CODES: dict[type[AmeideError], grpc.StatusCode] = {
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    Conflict: grpc.StatusCode.ABORTED,  # a lost compare-and-swap: re-read and retry
    FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,  # stale, conflicted, legal hold
}
"""Error class → gRPC status; subclasses inherit their parent's status."""

log = logging.getLogger("ameide.grpc")


def status_for(error: AmeideError) -> grpc.StatusCode:
    """The status of an error: the nearest class in ``STATUS_CODES`` along its MRO."""
    for cls in type(error).__mro__:
        if cls in STATUS_CODES:
            return STATUS_CODES[cls]
    return grpc.StatusCode.INTERNAL


def error_metadata(error: AmeideError) -> tuple[tuple[str, str], ...]:
    """The trailing metadata naming the error's code and details (ASCII JSON)."""
    details = json.dumps(error.details, default=str, sort_keys=True)
    if len(details) > MAX_DETAILS_CHARS:
        details = json.dumps({"truncated": True})
    return ((ERROR_CODE_KEY, error.code), (ERROR_DETAILS_KEY, details))


def abort(context: grpc.ServicerContext, error: AmeideError) -> NoReturn:
    """End the call with the error's status, message and trailing metadata."""
    call = current_call()
    if call is not None:
        call.error_code = error.code
    context.set_trailing_metadata(error_metadata(error))
    context.abort(status_for(error), error.message)
    raise AssertionError("grpc's abort always raises")  # pragma: no cover


class ErrorInterceptor(grpc.ServerInterceptor):  # type: ignore[misc, unused-ignore]
    """Turns what a unary handler raises into a status (the one place errors are mapped)."""

    def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
        """Wrap the method's handler; streams (server reflection) pass through."""
        return wrap_unary(continuation(details), _mapping_errors)


def _mapping_errors(behavior: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def handle(request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return behavior(request, context)
        except AmeideError as exc:
            abort(context, exc)
        except Exception:
            call = current_call()
            log.exception("unexpected error in %s", call.method if call else "a gRPC call")
            if call is not None:
                call.error_code = "INTERNAL"
            context.abort(grpc.StatusCode.INTERNAL, "internal error")

    return handle
