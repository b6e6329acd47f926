"""MCP over Streamable HTTP with the official SDK client (``mcp.Client``): the smoke's only
``mcp`` import.

The scenario is synchronous; the SDK is async. One event loop runs in a background thread (an
anyio blocking portal) and holds one open session per principal, so each tool call is one
round trip. A tool error (``isError``) becomes a ``SurfaceError`` with the code of the error
body its second text block holds as JSON.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import ExitStack, asynccontextmanager
from typing import Any

import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from smoke.surface import SurfaceError

TIMEOUT_SECONDS = 60.0


@asynccontextmanager
async def _session(url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}", "X-Ameide-Purpose": "ameide test"}
    async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT_SECONDS) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, read_timeout_seconds=TIMEOUT_SECONDS) as client:
            yield client


def _first_leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class McpClients:
    """Sessions to one MCP endpoint, one per principal, opened on first use."""

    def __init__(self, url: str, tokens: Mapping[str, str]) -> None:
        self.url = url
        self.tokens = tokens
        self._stack = ExitStack()
        self._portal: BlockingPortal = self._stack.enter_context(start_blocking_portal())
        self._clients: dict[str, Client] = {}
        self._style: str | None = None

    def _client(self, who: str) -> Client:
        client = self._clients.get(who)
        if client is None:
            manager = self._portal.wrap_async_context_manager(_session(self.url, self.tokens[who]))
            try:
                client = self._stack.enter_context(manager)
            except Exception as exc:  # the SDK raises task-group errors; name the first cause
                leaf = _first_leaf(exc)
                raise SurfaceError(
                    "UNAVAILABLE",
                    f"no MCP session at {self.url} as {who}: {type(leaf).__name__}: {leaf}",
                ) from None
            self._clients[who] = client
        return client

    def tool_name(self, who: str, tool: str) -> str:
        """``memory.get_context``, or ``memory_get_context`` on a server that publishes
        underscore names (asked once)."""
        if self._style is None:
            listed = self._portal.call(self._client(who).list_tools)
            names = {t.name for t in listed.tools}
            self._style = "underscore" if "memory_health" in names else "dotted"
        return tool.replace(".", "_") if self._style == "underscore" else tool

    def call(self, who: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call ``tool`` as ``who``; its structured content."""
        client = self._client(who)
        name = self.tool_name(who, tool)
        args = {k: v for k, v in arguments.items() if v is not None}
        result = self._portal.call(client.call_tool, name, args)
        content: Any = result.structured_content
        if result.is_error:
            texts = [str(getattr(block, "text", "")) for block in result.content]
            error = _error_body(texts[1]) if len(texts) > 1 else None
            text = texts[0] if texts else ""
            if not isinstance(error, dict):
                code, _, message = str(text).partition(": ")
                raise SurfaceError(code or "UNKNOWN", message or str(text), "isError")
            raise SurfaceError(str(error.get("code")), str(error.get("message")), "isError")
        if not isinstance(content, dict):
            raise SurfaceError("MALFORMED", f"{name} returned no structured content", None)
        return content

    def close(self) -> None:
        """Close every session and stop the event loop."""
        self._stack.close()


def _error_body(text: str) -> Any:
    """The ``error`` object of a tool error's JSON text block (``None`` when it is not one)."""
    try:
        body = json.loads(text)
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) else None
