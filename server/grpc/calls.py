"""The state of one gRPC call, shared by the interceptors and the servicers.

The sync server runs each call's handler in a pool thread; interceptors wrap that handler, so
the wrappers and the servicer method run in one thread, one inside the other. ``CallScope`` (the
outermost interceptor) opens a ``Call`` in a context variable for the duration of the handler;
the authentication interceptor fills in the caller, the error interceptor the error code, and an
interceptor added by the embedding process (structured logs, metrics) can read both after the
inner handler returned or raised.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import grpc

from edge.tracing import trace_id_of
from service.authz import Caller

Behavior = Callable[[Any, Any], Any]
TRACE_ID_KEY = "x-trace-id"
"""The caller's trace id (or a W3C ``traceparent``), echoed in the initial metadata."""


@dataclass
class Call:
    """One call: its full method name, trace id, start time, authenticated caller and error
    code."""

    method: str
    trace_id: str = ""
    started: float = field(default_factory=time.perf_counter)
    caller: Caller | None = None
    error_code: str | None = None


_CALL: ContextVar[Call | None] = ContextVar("ameide_grpc_call", default=None)


def current_call() -> Call | None:
    """The call being handled in this thread, if any."""
    return _CALL.get()


def current_caller() -> Caller:
    """The authenticated caller of the call being handled (servicers only)."""
    call = _CALL.get()
    if call is None or call.caller is None:
        raise RuntimeError("no authenticated gRPC call in progress")
    return call.caller


def wrap_unary(
    handler: Any,
    wrapper: Callable[[Behavior], Behavior],
    deserializer: Callable[[Any], Any] | None = None,
) -> Any:
    """``handler`` with its unary-unary behavior (and, if given, its request deserializer)
    wrapped; other handlers unchanged."""
    if handler is None or handler.unary_unary is None:
        return handler
    decode = handler.request_deserializer
    return grpc.unary_unary_rpc_method_handler(
        wrapper(handler.unary_unary),
        request_deserializer=deserializer(decode) if deserializer and decode else decode,
        response_serializer=handler.response_serializer,
    )


@dataclass(frozen=True)
class Undecodable:
    """A request whose bytes are no valid message (e.g. a string field that is not UTF-8)."""

    reason: str


def _tolerant(decode: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """A deserializer that returns :class:`Undecodable` instead of raising: grpc would answer
    ``INTERNAL`` for a raising deserializer, but a bad request is ``INVALID_ARGUMENT``."""

    def parse(data: bytes) -> Any:
        try:
            return decode(data)
        except Exception as exc:  # protobuf's DecodeError, or a UnicodeDecodeError
            return Undecodable(type(exc).__name__)

    return parse


class CallScope(grpc.ServerInterceptor):  # type: ignore[misc, unused-ignore]
    """Opens a ``Call`` around each unary handler (install it outermost)."""

    def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
        """Wrap the method's handler in a fresh call scope."""
        method = details.method

        def scoped(behavior: Behavior) -> Behavior:
            def handle(request: Any, context: Any) -> Any:
                sent = dict(details.invocation_metadata or ())
                trace_id = trace_id_of(lambda name: _text(sent.get(name)))
                token = _CALL.set(Call(method, trace_id))
                context.send_initial_metadata(((TRACE_ID_KEY, trace_id),))  # to correlate logs
                try:
                    if isinstance(request, Undecodable):
                        _CALL.get().error_code = "INVALID_ARGUMENT"  # type: ignore[union-attr]
                        context.abort(
                            grpc.StatusCode.INVALID_ARGUMENT,
                            "INVALID_ARGUMENT: the request is not a valid message "
                            f"({request.reason}; strings must be UTF-8)",
                        )
                    return behavior(request, context)
                finally:
                    _CALL.reset(token)

            return handle

        return wrap_unary(continuation(details), scoped, _tolerant)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
