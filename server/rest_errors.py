"""How the REST adapter reports failure: the one error table (``edge.errors``) as HTTP.

Every failure has the body ``{"error": {"code", "message", "details"}}``; the status is the
table's (400 ``INVALID_ARGUMENT``, 401 ``UNAUTHENTICATED`` with ``WWW-Authenticate: Bearer``,
403, 404, 409 ``ALREADY_EXISTS`` / ``CONFLICT``, 412 ``FAILED_PRECONDITION`` and its kinds).

Request-shape errors found by FastAPI (missing field, wrong type, bad JSON) are answered with
400 and ``INVALID_ARGUMENT`` as well, never 422: one code has one status, whichever layer
noticed the problem. A body over the limit is 413 ``PAYLOAD_TOO_LARGE``; a ``/v1`` body that is
not ``application/json`` is 415 ``UNSUPPORTED_MEDIA_TYPE`` (``JsonBody``). Anything else is a
bug and becomes 500 ``INTERNAL`` with the trace id.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from domain.errors import AmeideError, InvalidArgument
from domain.values import require_unicode
from edge.errors import error_body, problems, rule_for
from service.read_request import parse_request
from service.results_read import ErrorDetail

log = logging.getLogger("ameide.rest")

_PLAIN_HTTP_CODES = {
    400: InvalidArgument.code,  # e.g. a body that is not valid UTF-8 JSON: the one taxonomy
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}
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
    code = _PLAIN_HTTP_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
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


class BodyLimit:
    """Refuse a request body above ``limit`` bytes with 413 ``PAYLOAD_TOO_LARGE``.

    The one gate for body size, in front of everything that reads a body (REST's JSON, the
    console's forms, ``/mcp``; installed outside authentication, so an anonymous caller is
    refused alike). A declared ``Content-Length`` above the limit is refused before anything is
    read. Otherwise the body is read here, whatever its framing (a length, or chunked with no
    length at all), counting bytes as they arrive: past the limit the answer is the same 413,
    sent from here rather than raised through the app (an exception there would meet the app's
    own handlers, the MCP SDK's or the console's, and end as a 500 with a traceback). Within
    the limit the body is handed on unchanged, so nothing behind the gate can see more than
    ``limit`` bytes, whatever the headers claimed.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        body = bytearray()
        held: list[Message] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                held.append(message)  # the client left before the body ended
                break
            body += message.get("body", b"")
            if len(body) > self.limit:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        held.insert(0, {"type": "http.request", "body": bytes(body), "more_body": bool(held)})

        async def replay() -> Message:
            return held.pop(0) if held else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is larger than {self.limit} bytes"
        response = error_response(413, _PLAIN_HTTP_CODES[413], message)
        await response(scope, receive, send)


async def buffered_body(receive: Receive) -> bytes:
    """The whole request body (``BodyLimit``, outside, has already bounded its size)."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app ``body`` in one message, then the client's own."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class BodyText:
    """Refuse a JSON request body that is not valid Unicode text with 400 ``INVALID_ARGUMENT``.

    Invalid UTF-8 bytes, and JSON ``\\ud800``-style escapes that decode to a lone surrogate (not
    a character: it cannot be stored, indexed or encoded), are refused here, at the edge, for
    every field at once — before any handler or the service sees the request. Install it inside
    ``BodyLimit``, which bounds what is buffered.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        body = await buffered_body(receive)
        problem = _text_problem(body)
        if problem is not None:
            response = error_response(400, InvalidArgument.code, problem)
            await response(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


JSON_MEDIA_TYPE = "application/json"


class JsonBody:
    """The one gate for the JSON bodies of ``/v1``: the media type, and one value per key.

    A body sent with a ``Content-Type`` other than ``application/json`` (or a ``+json`` type;
    parameters such as ``charset`` are fine), or with none, is 415 ``UNSUPPORTED_MEDIA_TYPE``
    naming the type expected, instead of reaching validation as a string ("body: Input should be
    a valid dictionary"). An object
    with the same key twice, at any depth, is 400 ``INVALID_ARGUMENT`` naming the key: JSON
    parsers disagree which value wins, so a gateway and this server could read different
    requests. Empty bodies (the optional ones) pass. Install it inside ``BodyText``.
    """

    def __init__(self, app: ASGIApp, prefix: str = "/v1/") -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") in ("GET", "HEAD", "OPTIONS")
            or not scope.get("path", "").startswith(self.prefix)
        ):
            await self.app(scope, receive, send)
            return
        body = await buffered_body(receive)
        refusal = _json_refusal(Headers(scope=scope).get("content-type"), body)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


def _json_refusal(content_type: str | None, body: bytes) -> JSONResponse | None:
    if not body.strip():
        return None
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != JSON_MEDIA_TYPE and not (
        media.startswith("application/") and media.endswith("+json")
    ):
        given = f"Content-Type {media!r}" if media else "no Content-Type"
        message = f"unsupported media type ({given}): send {JSON_MEDIA_TYPE}"
        return error_response(415, _PLAIN_HTTP_CODES[415], message, {"expected": JSON_MEDIA_TYPE})
    try:
        json.loads(body, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as duplicate:
        key = duplicate.args[0]
        return error_response(
            400,
            InvalidArgument.code,
            f"the JSON body has the key {key!r} more than once in one object",
            {"field": key},
        )
    except ValueError:
        return None  # not JSON: the route reports its own parse error
    return None


class _DuplicateKey(Exception):
    """A JSON object with one key twice (its args: the key)."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def _text_problem(body: bytes) -> str | None:
    """Why ``body`` is not valid text, or ``None`` (non-JSON bodies are left to the route)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"the request body is not valid UTF-8 (byte {exc.start})"
    if "\\u" not in text:
        return None  # no escape, so no lone surrogate can come out of the JSON
    try:
        value = json.loads(text)
    except ValueError:
        return None  # not JSON: the route reports its own parse error
    return _lone_surrogate(value, "body")


def _lone_surrogate(value: Any, where: str) -> str | None:
    if isinstance(value, str):
        try:
            require_unicode(value, where)
        except InvalidArgument as refused:
            return refused.message
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _lone_surrogate(key, where) or _lone_surrogate(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{where}[{index}]")
            if found:
                return found
    return None
