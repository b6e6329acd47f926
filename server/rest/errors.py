"""How the REST adapter reports failure: the one error table (``edge.errors``) as HTTP.

Every failure has the body ``{"error": {"code", "message", "details"}}``; the status is the
table's (400 ``INVALID_ARGUMENT``, 401 ``UNAUTHENTICATED`` with ``WWW-Authenticate: Bearer``,
403, 404, 409 ``ALREADY_EXISTS`` / ``CONFLICT``, 412 ``FAILED_PRECONDITION`` and its kinds).

Request-shape errors found by FastAPI (missing field, wrong type, bad JSON) are answered with
400 and ``INVALID_ARGUMENT`` as well, never 422: one code has one status, whichever layer
noticed the problem. A body over the limit is 413 ``PAYLOAD_TOO_LARGE``; a ``/v1`` body that is
not ``application/json`` is 415 ``UNSUPPORTED_MEDIA_TYPE`` (the body gates of
``server.http.limits`` answer those). Anything else is a bug and becomes 500 ``INTERNAL`` with
the trace id.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from domain.errors import AmeideError, InvalidArgument
from edge.errors import error_body, problems, rule_for
from service.reading.request import parse_request
from service.reading.results import ErrorDetail

log = logging.getLogger("ameide.rest")

PLAIN_HTTP_CODES = {
    400: InvalidArgument.code,  # e.g. a body that is not valid UTF-8 JSON: the one taxonomy
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}
"""The codes of the HTTP errors that are no ``AmeideError`` (routing's, the body gates')."""
MAX_PROBLEMS = 20


def status_for(error: AmeideError) -> int:
    """The HTTP status of an error (the one table, ``edge.errors``)."""
    return rule_for(error).http_status


class ErrorBody(BaseModel):
    """The body of every error response."""

    model_config = ConfigDict(extra="forbid")
    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorBody,
        "description": "INVALID_ARGUMENT: malformed request; nothing changed",
    },
    401: {"model": ErrorBody, "description": "UNAUTHENTICATED: missing, invalid or revoked token"},
    403: {"model": ErrorBody, "description": "PERMISSION_DENIED: visible, but not allowed"},
    404: {"model": ErrorBody, "description": "NOT_FOUND: missing or not readable by you"},
    409: {"model": ErrorBody, "description": "ALREADY_EXISTS or CONFLICT (lost a race; retry)"},
    412: {"model": ErrorBody, "description": "FAILED_PRECONDITION, STALE_PROPOSAL, LEGAL_HOLD, …"},
    413: {"model": ErrorBody, "description": "PAYLOAD_TOO_LARGE: the request body is too large"},
    415: {"model": ErrorBody, "description": "UNSUPPORTED_MEDIA_TYPE: send application/json"},
}
"""The error responses every ``/v1`` operation documents in OpenAPI."""


def error_response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> JSONResponse:
    """A JSON error response in the one shape."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_body(code, message, details), status_code=status, headers=headers)


async def _on_ameide_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AmeideError)
    return error_response(status_for(exc), exc.code, exc.message, exc.details)


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    route = request.scope.get("route")
    if getattr(route, "operation_id", None) == "read_context" and isinstance(exc.body, dict):
        try:  # the service's own verdict, so every surface words it alike (with its caps)
            parse_request(exc.body)
        except InvalidArgument as refused:
            return await _on_ameide_error(request, refused)
    found = problems(exc.errors(), limit=MAX_PROBLEMS)
    return error_response(
        400, InvalidArgument.code, "invalid request: " + "; ".join(found), {"problems": found}
    )


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = PLAIN_HTTP_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
    response = error_response(exc.status_code, code, str(exc.detail))
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    if exc.status_code == 405:
        response.headers["Allow"] = ", ".join(allowed_methods(request))
    return response


def allowed_methods(request: Request) -> list[str]:
    """Every method the OpenAPI document lists for the request's path (RFC 9110 §15.5.6).

    Starlette names only the first route that matched the path, but one path often has several
    routes (``GET`` and ``POST`` of ``…/proposals``): a 405 must list all of them. The table is
    built once per app from its own OpenAPI document, so ``Allow`` and the document agree."""
    app = request.app
    table: list[tuple[re.Pattern[str], list[str]]] | None = getattr(
        app.state, "allowed_methods", None
    )
    if table is None:
        table = [
            (compile_path(path)[0], sorted(method.upper() for method in operations))
            for path, operations in app.openapi().get("paths", {}).items()
        ]
        app.state.allowed_methods = table
    path = request.scope.get("path", "")
    methods = next((methods for regex, methods in table if regex.match(path)), [])
    return sorted({*methods, "HEAD"}) if "GET" in methods else methods  # ``HeadAsGet``


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    trace_id = getattr(request.state, "trace_id", None)
    log.exception("unhandled error in %s (trace %s)", request.url.path, trace_id)
    return error_response(
        500, "INTERNAL", f"internal error; report trace id {trace_id}", {"trace_id": trace_id}
    )


def install_error_handlers(app: FastAPI) -> None:
    """Route every failure through the one table."""
    app.add_exception_handler(AmeideError, _on_ameide_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)


def document_errors_as_400(openapi: dict[str, Any]) -> dict[str, Any]:
    """Rewrite FastAPI's generated 422 responses: this API answers validation errors with 400."""
    for operations in openapi.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses", {})
            if responses.pop("422", None) is not None and "400" not in responses:
                responses["400"] = {
                    "description": ERROR_RESPONSES[400]["description"],
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
                    },
                }
    schemas = openapi.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    return openapi
