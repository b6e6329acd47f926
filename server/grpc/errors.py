"""How the gRPC surface reports failure: the one error table (``edge.errors``) as status codes.

A service error ends the call with the status of its class (the table's gRPC column, looked up
as a ``grpc.StatusCode`` here) and the error's message as the status details. The
taxonomy's own code and details travel in the trailing metadata, so a client can tell a
``STALE_PROPOSAL`` from a ``LEGAL_HOLD`` (both ``FAILED_PRECONDITION``)::

    x-ameide-error-code:    STALE_PROPOSAL
    x-ameide-error-details: {"current_head_version_id": "ver_…", "target_version_id": "ver_…"}

The same travels the standard way too, for clients that read gRPC's rich error model
(``grpc_status.rpc_status.from_call``, ``status.Convert`` in Go): ``grpc-status-details-bin``
holds a ``google.rpc.Status`` with the call's code and message and one ``google.rpc.ErrorInfo``
whose ``reason`` is the code (``STALE_PROPOSAL``), ``domain`` is ``ameide.memory`` and
``metadata`` the details (strings as they are, other values as JSON).

Anything else a handler raises is a bug: it is logged with its traceback and the client gets
``INTERNAL`` with no detail.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from domain.errors import AmeideError
from edge.errors import details_text, rule_for
from server.grpc.calls import current_call, wrap_unary

ERROR_CODE_KEY = "x-ameide-error-code"
ERROR_DETAILS_KEY = "x-ameide-error-details"
ERROR_DOMAIN = "ameide.memory"
"""``ErrorInfo.domain``: the proto package's name, whose error codes the reasons are."""

log = logging.getLogger("ameide.grpc")


def status_for(error: AmeideError) -> grpc.StatusCode:
    """The status of an error: the one table's, nearest class along its MRO."""
    status: grpc.StatusCode = grpc.StatusCode[rule_for(error).grpc_status]
    return status


def error_metadata(error: AmeideError) -> tuple[tuple[str, str], ...]:
    """The trailing metadata naming the error's code and details (ASCII JSON)."""
    return ((ERROR_CODE_KEY, error.code), (ERROR_DETAILS_KEY, details_text(error)))


def rich_status(
    status: grpc.StatusCode, message: str, reason: str, details: dict[str, Any]
) -> grpc.Status:
    """The standard ``google.rpc.Status`` of an error, carrying one ``ErrorInfo``."""
    info = error_details_pb2.ErrorInfo(
        reason=reason,
        domain=ERROR_DOMAIN,
        metadata={k: v if isinstance(v, str) else json.dumps(v) for k, v in details.items()},
    )
    packed = any_pb2.Any()
    packed.Pack(info)
    code = code_pb2.Code.Value(status.name)
    return rpc_status.to_status(status_pb2.Status(code=code, message=message, details=[packed]))


def abort(context: grpc.ServicerContext, error: AmeideError) -> NoReturn:
    """End the call with the error's status, message and trailing metadata."""
    call = current_call()
    if call is not None:
        call.error_code = error.code
    detail = json.loads(details_text(error))  # the bounded details the trailer carries
    _abort(context, rich_status(status_for(error), error.message, error.code, detail), error)


def _abort(
    context: grpc.ServicerContext, status: grpc.Status, error: AmeideError | None = None
) -> NoReturn:
    ours = error_metadata(error) if error is not None else ()
    context.set_trailing_metadata((*ours, *status.trailing_metadata))
    context.abort(status.code, status.details)
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
            where = call.method if call else "a gRPC call"
            log.exception("unexpected error in %s (trace %s)", where, call and call.trace_id)
            if call is not None:
                call.error_code = "INTERNAL"
            internal = grpc.StatusCode.INTERNAL
            _abort(context, rich_status(internal, "internal error", "INTERNAL", {}))

    return handle
