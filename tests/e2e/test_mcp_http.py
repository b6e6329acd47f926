"""MCP over Streamable HTTP with the official SDK client against a real server on loopback:
bearer token → principal, Origin checked, no unauthenticated access on other addresses."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import jsonschema
import pytest
from mcp.shared.exceptions import MCPError

from domain.errors import InvalidArgument
from mcp_adapter.http import create_http_app, origin_allowed
from mcp_adapter.settings import McpSettings
from tests.conftest import World
from tests.e2e.mcp_harness import error_text, http_session, structured, tool_names
from tests.e2e.rest_harness import running

SOP = "# Testing SOP\n\n## Phases\n\nRun phase 0/1/2 tests with make test.\n"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "0"},
    },
}
JSON_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def published(world: World) -> tuple[str, str]:
    element, version = world.canonical(body=SOP)
    baseline = world.svc.publishing.create_baseline(world.publisher, world.repo)["baseline_id"]
    world.svc.publishing.promote(world.publisher, baseline, world.repo)
    return element, version


@pytest.fixture
def mcp_url(world: World) -> Iterator[str]:
    app = create_http_app(world.svc, settings=world.app.settings)
    with running(app) as base:
        yield f"{base}/mcp"


def _token(world: World, principal: str) -> str:
    token: str = world.svc.tokens.create(world.admin, principal)["token"]
    return token


def test_the_http_server_answers_as_the_token_principal(
    world: World, published: tuple[str, str], mcp_url: str
) -> None:
    element, version = published
    token = _token(world, world.agent.principal_id)

    async def main() -> None:
        async with http_session(mcp_url, token, **{"X-Ameide-Purpose": "answer"}) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == tool_names()
            assert all(t.input_schema and t.output_schema for t in tools.values())
            assert tools["memory.get_context"].annotations.read_only_hint is True  # type: ignore[union-attr]

            context = structured(
                await client.call_tool(
                    "memory.get_context", {"repository": world.repo, "query": "phase tests"}
                )
            )
            jsonschema.validate(context, tools["memory.get_context"].output_schema)
            assert context["items"][0]["version_id"] == version

            health = structured(await client.call_tool("memory.health", {}))
            assert health["principal"] == world.agent.principal_id
            bad = await client.call_tool("memory.expand", {"element_id": element, "hops": 9})
            assert error_text(bad).startswith(
                "INVALID_ARGUMENT: invalid arguments for memory.expand"
            )

    anyio.run(main)
    log = world.svc.history.access_log(world.auditor, world.repo)
    reads = [r for r in log if r["operation"] == "read_context"]
    assert reads[0]["principal_id"] == world.agent.principal_id
    assert reads[0]["purpose"] == "answer"


def test_a_forbidden_repository_is_a_tool_error_over_http(
    world: World, published: tuple[str, str], mcp_url: str
) -> None:
    token = _token(world, world.stranger.principal_id)

    async def main() -> None:
        async with http_session(mcp_url, token) as client:
            result = await client.call_tool(
                "memory.search", {"repository": world.repo, "query": "phase"}
            )
            assert error_text(result).startswith(f"NOT_FOUND: repository {world.repo} not found")

    anyio.run(main)


@pytest.mark.parametrize("authorization", [None, "Bearer amt_not-a-token", "Basic eDp5"])
def test_a_request_without_a_valid_token_is_refused_with_401(
    mcp_url: str, authorization: str | None
) -> None:
    headers = {**JSON_HEADERS, **({"Authorization": authorization} if authorization else {})}
    response = httpx.post(mcp_url, json=INITIALIZE, headers=headers)
    assert response.status_code == 401
    base = mcp_url.removesuffix("/mcp")
    assert response.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource"'
    )
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_a_client_that_probes_learns_the_server_takes_bearer_tokens(mcp_url: str) -> None:
    """RFC 9728: the protected-resource metadata names the MCP endpoint and bearer tokens in the
    header, and no authorization server, so a client does not start an OAuth flow."""
    base = mcp_url.removesuffix("/mcp")
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        response = httpx.get(base + path)
        assert response.status_code == 200, path
        metadata = response.json()
        assert metadata["resource"] == mcp_url
        assert metadata["bearer_methods_supported"] == ["header"]
        assert "authorization_servers" not in metadata


def test_the_sdk_client_cannot_connect_without_a_token(mcp_url: str) -> None:
    async def main() -> None:
        async with http_session(mcp_url, None) as client:
            await client.list_tools()

    with pytest.raises(BaseExceptionGroup) as caught:  # anyio task groups wrap the error
        anyio.run(main)
    leaves = _leaves(caught.value)
    assert leaves, caught.value
    assert all(isinstance(e, MCPError) for e in leaves), leaves


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for e in error.exceptions for leaf in _leaves(e)]
    return [error]


def test_a_foreign_browser_origin_is_refused(world: World, mcp_url: str) -> None:
    token = _token(world, world.reader.principal_id)
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {token}"}
    evil = httpx.post(
        mcp_url, json=INITIALIZE, headers={**headers, "Origin": "https://evil.example"}
    )
    assert evil.status_code == 403
    assert evil.json()["error"]["code"] == "PERMISSION_DENIED"
    local = httpx.post(
        mcp_url, json=INITIALIZE, headers={**headers, "Origin": "http://localhost:5173"}
    )
    assert local.status_code == 200


def test_the_underscore_setting_works_over_http(world: World, published: tuple[str, str]) -> None:
    token = _token(world, world.reader.principal_id)
    app = create_http_app(
        world.svc, settings=world.app.settings, mcp_settings=McpSettings(tool_names="underscore")
    )

    async def main(url: str) -> None:
        async with http_session(url, token) as client:
            assert {t.name for t in (await client.list_tools()).tools} == tool_names("underscore")
            hits = structured(
                await client.call_tool(
                    "memory_search", {"repository": world.repo, "query": "phase"}
                )
            )
            assert hits["items"]

    with running(app) as base:
        anyio.run(main, f"{base}/mcp")


def test_without_authentication_it_serves_loopback_only_as_the_local_principal(
    world: World, published: tuple[str, str]
) -> None:
    settings = world.app.settings.model_copy(update={"principal": world.reader.principal_id})
    with pytest.raises(InvalidArgument, match="without authentication"):
        create_http_app(world.svc, settings=settings, require_auth=False, host="0.0.0.0")
    app = create_http_app(world.svc, settings=settings, require_auth=False, host="127.0.0.1")

    async def main(url: str) -> None:
        async with http_session(url, None) as client:
            health = structured(await client.call_tool("memory.health", {}))
            assert health["principal"] == world.reader.principal_id

    with running(app) as base:
        anyio.run(main, f"{base}/mcp")


def test_origins_match_exactly_or_by_any_port() -> None:
    allowed = ["http://localhost:*", "https://app.example.com"]
    assert origin_allowed("http://localhost:3000", allowed)
    assert origin_allowed("http://localhost", allowed)
    assert origin_allowed("https://app.example.com", allowed)
    assert not origin_allowed("http://localhost.evil.com", allowed)
    assert not origin_allowed("http://localhost:3000@evil", allowed)
    assert not origin_allowed("https://app.example.com.evil", allowed)
