"""MCP over stdio: one local client, acting as the configured local principal.

Only protocol messages go to stdout (the SDK claims the descriptor); logs go to stderr.

The SDK's transport reads each line with a JSON parser that refuses a lone surrogate
(``"\\ud800"``): such a request used to be dropped unanswered, and a reply holding one (it cannot
be encoded) ended the server. :class:`_RefuseInvalidText` answers the first with a JSON-RPC
``INVALID_PARAMS`` error naming the field, and :class:`_EncodableReplies` replaces the second's
lone surrogates with U+FFFD, so the server keeps serving either way.
"""

from __future__ import annotations

import json
import logging
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from domain.values import lone_surrogate_at, replace_lone_surrogates
from mcp_adapter.server import MemoryMcp
from mcp_adapter.settings import McpSettings
from service.app import MemoryService
from service.authz import Caller

TOOL_ID = "ameide-mcp"
log = logging.getLogger(__name__)


def serve_stdio(service: MemoryService, caller: Caller, settings: McpSettings) -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    local = Caller(
        caller.principal_id,
        on_behalf_of=caller.on_behalf_of,
        roles=caller.roles,
        purpose=caller.purpose,
        tool_id=TOOL_ID,
    )

    def caller_of(ctx: ServerRequestContext[Any]) -> Caller:
        return local

    server = MemoryMcp(service, caller_of, tool_names=settings.tool_names, surface="mcp").server()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            replies = _EncodableReplies(write_stream)
            requests = _RefuseInvalidText(read_stream, replies)
            await server.run(requests, replies, server.create_initialization_options())

    anyio.run(main)


class _Wrapped:
    """A stream wrapper: closing it (or leaving its ``async with``) closes the stream inside."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _EncodableReplies(_Wrapped):
    """The write stream, but a message that cannot be encoded (a lone surrogate) is sent with
    U+FFFD in its place rather than ending the transport."""

    async def send(self, item: SessionMessage, /) -> None:
        try:
            item.message.model_dump_json(by_alias=True, exclude_unset=True)
        except PydanticSerializationError:
            raw = item.message.model_dump(by_alias=True, exclude_unset=True)
            clean = jsonrpc_message_adapter.validate_python(replace_lone_surrogates(raw))
            item = SessionMessage(clean, metadata=item.metadata)
        await self._inner.send(item)


class _RefuseInvalidText(_Wrapped):
    """The read stream, but a request the SDK could not parse because it holds a lone surrogate
    is answered here with a JSON-RPC error (and dropped), never left unanswered."""

    def __init__(self, inner: Any, replies: _EncodableReplies) -> None:
        super().__init__(inner)
        self._replies = replies

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            refusal = _refusal(item) if isinstance(item, ValidationError) else None
            if refusal is None:
                return item  # type: ignore[no-any-return]
            await self._replies.send(SessionMessage(refusal))

    def __aiter__(self) -> _RefuseInvalidText:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None


def _refusal(error: ValidationError) -> JSONRPCError | None:
    """The error answering a request refused for a lone surrogate, or ``None`` when the line was
    refused for another reason or is a notification (no ``id``): the SDK's handling stays."""
    line = next((e.get("input") for e in error.errors() if e["type"] == "json_invalid"), None)
    if not isinstance(line, str):
        return None
    try:
        message = json.loads(line)  # Python's parser keeps a lone surrogate, so it can be named
    except ValueError:
        return None
    if not isinstance(message, dict) or "id" not in message:
        return None
    where = lone_surrogate_at(message.get("params"), "params")
    code = INVALID_PARAMS
    if where is None:
        where, code = lone_surrogate_at(message, "message"), INVALID_REQUEST
    if where is None:
        return None
    log.info("refused an MCP request: %s holds a lone surrogate", where)
    text = f"{where} is not valid Unicode text (it holds a lone surrogate)"
    ident = message["id"]
    usable = isinstance(ident, int | str) and not isinstance(ident, bool)
    if not usable or lone_surrogate_at(ident, "id") is not None:
        ident = None  # JSON-RPC: the id could not be determined
    answer = ErrorData(code=code, message=text, data={"field": where})
    return JSONRPCError(jsonrpc="2.0", id=ident, error=answer)
