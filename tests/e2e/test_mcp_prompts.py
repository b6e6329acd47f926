"""MCP prompts (issue 14) through the official SDK client: ``prompts/list`` offers the two
workflows, ``prompts/get`` fills them in, naming the tools as the server spells them, and refuses
an unknown prompt or a missing argument."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_adapter.server import MemoryMcp
from tests.conftest import World
from tests.e2e.mcp_harness import stdio_client_for


def _run(world: World, scenario: Callable[[Client], Awaitable[None]], **options: str) -> None:
    server = MemoryMcp(world.svc, lambda ctx: world.agent, **options).server()

    async def main() -> None:
        async with Client(server) as client:
            await scenario(client)

    anyio.run(main)


def test_prompts_are_listed_with_their_arguments(world: World) -> None:
    async def scenario(client: Client) -> None:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"cite-sources", "propose-change"}
        for prompt in prompts.values():
            assert prompt.title
            assert prompt.description
        required = {
            name: {a.name for a in p.arguments or [] if a.required} for name, p in prompts.items()
        }
        assert required == {
            "cite-sources": {"question", "repository"},
            "propose-change": {"element_id", "change"},
        }

    _run(world, scenario)


def test_getting_a_prompt_fills_in_the_arguments_and_names_the_tools(world: World) -> None:
    async def scenario(client: Client) -> None:
        cite = await client.get_prompt(
            "cite-sources", {"question": "how do I run phase 2?", "repository": world.repo}
        )
        (message,) = cite.messages
        assert message.role == "user"
        text = message.content.text  # type: ignore[union-attr]
        assert "how do I run phase 2?" in text
        assert world.repo in text
        assert "memory.get_context" in text
        assert "memory.verify_citations" in text

        change = await client.get_prompt(
            "propose-change", {"element_id": "el_123", "change": "add phase 3"}
        )
        text = change.messages[0].content.text  # type: ignore[union-attr]
        assert "el_123" in text
        assert "add phase 3" in text
        assert "memory.propose" in text
        assert "target_version_id" in text

    _run(world, scenario)


def test_prompts_name_the_tools_with_underscores_when_the_server_does(world: World) -> None:
    async def scenario(client: Client) -> None:
        got = await client.get_prompt("propose-change", {"element_id": "el_1", "change": "x"})
        text = got.messages[0].content.text  # type: ignore[union-attr]
        assert "memory_propose" in text
        assert "memory.propose" not in text

    _run(world, scenario, tool_names="underscore")


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("no-such-prompt", {}, "unknown prompt 'no-such-prompt'"),
        ("cite-sources", {"question": "why?"}, "repository"),
    ],
)
def test_an_unknown_prompt_or_a_missing_argument_is_refused(
    world: World, name: str, arguments: dict[str, str], says: str
) -> None:
    async def scenario(client: Client) -> None:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt(name, arguments)
        assert says in str(refused.value)

    _run(world, scenario)


def test_the_stdio_server_offers_the_prompts(world: World) -> None:
    async def main() -> None:
        async with stdio_client_for(world, world.agent) as client:
            names = {p.name for p in (await client.list_prompts()).prompts}
            assert names == {"cite-sources", "propose-change"}

    anyio.run(main)
