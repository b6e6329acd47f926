"""Reach the MCP server with the official SDK client, over stdio or Streamable HTTP.

Used by ``tests/e2e/test_mcp_*.py``: ``stdio_client_for`` spawns ``python -m mcp_adapter`` on the
world's database as one principal; ``http_session`` connects to an app served by
``rest_harness.running`` with a bearer token.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from service.authz import Caller
from tests.conftest import World

ROOT = Path(__file__).resolve().parents[2]
TOOLS = (
    "get_context", "propose", "search", "get_element", "expand",
    "explain", "history", "verify_citations", "health", "drift", "gaps",
)  # fmt: skip


def tool_names(style: str = "dotted") -> set[str]:
    """Every tool name as published in ``style``."""
    sep = "_" if style == "underscore" else "."
    return {f"memory{sep}{t}" for t in TOOLS}


def stdio_client_for(world: World, who: Caller, *, underscore: bool = False) -> Client:
    """An SDK client that spawns the stdio server acting as ``who``."""
    env = {
        "AMEIDE_HOME": str(world.app.settings.home),
        "AMEIDE_PRINCIPAL": who.principal_id,
        "AMEIDE_MCP_TOOL_NAMES": "underscore" if underscore else "dotted",
        "PYTHONPATH": str(ROOT),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_adapter"], env=env, cwd=str(ROOT)
    )
    return Client(params, read_timeout_seconds=60)


@asynccontextmanager
async def http_session(url: str, token: str | None, **headers: str) -> AsyncIterator[Client]:
    """A connected SDK client over Streamable HTTP sending ``Authorization: Bearer token``."""
    sent = dict(headers)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(headers=sent, timeout=60) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, read_timeout_seconds=60) as client:
            yield client


def structured(result: Any) -> dict[str, Any]:
    """The structured content of a successful tool result."""
    assert not result.is_error, result.content[0].text
    content: dict[str, Any] = result.structured_content
    return content


def error_text(result: Any) -> str:
    """The one-line message of a failed tool result."""
    assert result.is_error, result.structured_content
    text: str = result.content[0].text
    assert "\n" not in text
    return text


def error_of(result: Any) -> dict[str, Any]:
    """The error body of a failed tool result: its second text block, as JSON (an error carries
    no structured content, which clients check against the tool's output schema)."""
    assert result.is_error
    assert result.structured_content is None
    body: dict[str, Any] = json.loads(result.content[1].text)
    return body["error"]
