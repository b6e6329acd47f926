"""Limits of the HTTP listener: on its connections, and on the request bodies its apps read.

Connections: reap idle and half-sent ones, cap their number.

uvicorn closes a kept-alive connection after ``timeout_keep_alive`` of silence, but a connection
that never sends a complete request head — opened and left idle, or sending a byte now and then
(slowloris) — is never closed, and connections are accepted without limit. :func:`limited_h11`
returns uvicorn's h11 protocol with two additions:

- **header timeout**: from the moment a connection opens, and again each time a response is
  complete, the client has ``header_timeout`` seconds to deliver a whole request head; if no new
  request has started by then, the connection is closed;
- **connection cap**: a connection beyond ``max_connections`` open ones is answered
  ``503 UNAVAILABLE`` in the error taxonomy's JSON shape and closed at once.

Keep-alive idling (``timeout_keep_alive``) and the in-flight request cap (``limit_concurrency``)
stay uvicorn's own settings.

Request bodies: three ASGI middlewares, installed in this order from the outside in, answer in
the error taxonomy's JSON shape (``server.rest.errors``) before any app reads a body —
:class:`BodyLimit` (size: 413), :class:`BodyText` (valid Unicode: 400) and, for ``/v1``,
:class:`JsonBody` (``application/json``, one value per key: 415, 400).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from domain.errors import InvalidArgument
from domain.values import require_unicode
from edge.errors import error_body
from server.rest.errors import PLAIN_HTTP_CODES, error_response

log = logging.getLogger("ameide.server")

_BUSY = json.dumps(error_body("UNAVAILABLE", "too many open connections; retry shortly")).encode()
_BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: application/json\r\n"
    b"retry-after: 1\r\n"
    b"connection: close\r\n"
    b"content-length: " + str(len(_BUSY)).encode() + b"\r\n\r\n" + _BUSY
)


def limited_h11(header_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a request-head timeout and a cap on open connections."""
    if header_timeout <= 0:
        raise ValueError("header_timeout must be positive")
    if max_connections < 1:
        raise ValueError("max_connections must be at least 1")

    class LimitedH11(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                log.warning(
                    "refused a connection: %d open (cap %d)", len(self.connections), max_connections
                )
                transport.write(_BUSY_RESPONSE)
                transport.close()
                return
            self._arm_header_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            waiting_after: Any = self.cycle  # a request starting replaces the cycle
            self._header_timer = self.loop.call_later(
                header_timeout, self._header_timeout_expired, waiting_after
            )

        def _header_timeout_expired(self, waiting_after: Any) -> None:
            self._header_timer = None
            if self.cycle is waiting_after and not self.transport.is_closing():
                self.transport.close()  # no complete request head in time

    return LimitedH11


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
        response = error_response(413, PLAIN_HTTP_CODES[413], message)
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
        return error_response(415, PLAIN_HTTP_CODES[415], message, {"expected": JSON_MEDIA_TYPE})
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
