"""Trace ids and the status vocabulary every surface logs and counts alike.

A request's trace id is the caller's ``x-trace-id`` when well-formed (8-64 letters, digits,
``_`` or ``-``), else the trace id of a well-formed W3C ``traceparent``, else a fresh one; REST
reads HTTP headers, gRPC its invocation metadata (the same names, lower case).

``ameide_requests_total{status}`` and the access log's ``status`` use one vocabulary on every
surface: ``OK`` for a request that succeeded, else the error code it answered
(``NOT_FOUND``, ``STALE_PROPOSAL``, ``INVALID_ARGUMENT``, …: the codes of the error body).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from edge.errors import ERROR_TABLE, INTERNAL

OK = "OK"
"""The status of a request that succeeded."""

_TRACE_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")

_CODE_OF_HTTP_STATUS: dict[int, str] = {
    INTERNAL.http_status: INTERNAL.grpc_status,
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}
for _cls, _rule in ERROR_TABLE.items():  # the first class listed for a status is its plain code
    _CODE_OF_HTTP_STATUS.setdefault(_rule.http_status, _cls.code)


def trace_id_of(header: Callable[[str], str | None]) -> str:
    """The caller's trace id when well-formed, else a fresh one; ``header(name)`` reads one
    header or metadata value (``None`` when absent)."""
    given = header("x-trace-id") or ""
    if _TRACE_ID.match(given):
        return given
    parent = _TRACEPARENT.match(header("traceparent") or "")
    return parent.group(1) if parent else uuid.uuid4().hex


def status_of_http(status: int, code: str | None = None) -> str:
    """The vocabulary's status of an HTTP answer: ``OK`` below 400, else the error code its body
    named (``code``), else the plain code of that HTTP status (``HTTP_<status>`` if none)."""
    if status < 400:
        return OK
    return code or _CODE_OF_HTTP_STATUS.get(status, f"HTTP_{status}")
