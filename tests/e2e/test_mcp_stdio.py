"""MCP over stdio with the official SDK client: the server is a real child process
(``python -m mcp_adapter``, and ``ameide mcp`` once registered) acting as the configured
local principal."""

from __future__ import annotations

import sys

import anyio
import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import World
from tests.e2e.mcp_harness import ROOT, error_text, stdio_client_for, structured, tool_names

SOP = "# Testing SOP\n\n## Phases\n\nRun phase 0/1/2 tests with make test.\n"


@pytest.fixture
def published(world: World) -> tuple[str, str]:
    element, version = world.canonical(body=SOP)
    baseline = world.svc.publishing.create_baseline(world.publisher, world.repo)["baseline_id"]
    world.svc.publishing.promote(world.publisher, baseline, world.repo)
    return element, version


def test_the_stdio_server_lists_every_tool_and_answers_as_the_local_principal(
    world: World, published: tuple[str, str]
) -> None:
    element, version = published

    async def main() -> None:
        async with stdio_client_for(world, world.agent) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == tool_names()
            assert all(t.output_schema and t.annotations for t in tools.values())

            result = await client.call_tool(
                "memory.get_context", {"repository": world.repo, "query": "phase tests"}
            )
            context = structured(result)
            jsonschema.validate(context, tools["memory.get_context"].output_schema)
            assert context["items"][0]["version_id"] == version
            assert result.content[0].text.startswith('{"context_id": "ctx_')  # type: ignore[union-attr]

            health = structured(await client.call_tool("memory.health", {}))
            assert health["principal"] == world.agent.principal_id

            proposal = structured(
                await client.call_tool(
                    "memory.propose",
                    {
                        "repository": world.repo,
                        "element_id": element,
                        "target_version_id": version,
                        "summary": "phase 3",
                        "body": SOP + "\n## Phase 3\n",
                        "client_request_id": "stdio-1",
                    },
                )
            )
            assert proposal["proposed_by"]["actor_id"] == world.agent.principal_id
            assert proposal["proposed_by"]["tool_id"] == "ameide-mcp"

            bad = await client.call_tool("memory.get_context", {"repository": world.repo})
            assert error_text(bad).startswith("INVALID_ARGUMENT")

    anyio.run(main)


def test_a_principal_without_a_grant_gets_a_tool_error_over_stdio(
    world: World, published: tuple[str, str]
) -> None:
    async def main() -> None:
        async with stdio_client_for(world, world.stranger) as client:
            result = await client.call_tool(
                "memory.get_context", {"repository": world.repo, "query": "phase"}
            )
            assert error_text(result).startswith(f"NOT_FOUND: repository {world.repo} not found")

    anyio.run(main)


def test_the_underscore_setting_renames_every_tool_over_stdio(
    world: World, published: tuple[str, str]
) -> None:
    async def main() -> None:
        async with stdio_client_for(world, world.reader, underscore=True) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == tool_names("underscore")
            found = await client.call_tool(
                "memory_search", {"repository": world.repo, "query": "phase"}
            )
            assert structured(found)["items"]

    anyio.run(main)


LAUNCH_CLI = """
import sys
from cli.commands import mcp as commands_mcp
from cli.main import app
if "mcp" not in {c.name for c in app.registered_commands}:
    commands_mcp.register(app)  # until cli/main.py registers it
sys.argv[0] = "ameide"
app()
"""


def test_ameide_mcp_serves_stdio_as_the_cli_principal(
    world: World, published: tuple[str, str]
) -> None:
    home = str(world.app.settings.home)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", LAUNCH_CLI, "--home", home, "--as", world.agent.principal_id,
              "--purpose", "coding", "mcp", "--underscore-names"],
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )  # fmt: skip

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            assert {t.name for t in (await client.list_tools()).tools} == tool_names("underscore")
            health = structured(await client.call_tool("memory_health", {}))
            assert health["principal"] == world.agent.principal_id
            found = await client.call_tool(
                "memory_get_context", {"repository": world.repo, "query": "phase"}
            )
            assert structured(found)["items"]

    anyio.run(main)
    reads = [r for r in world.svc.history.access_log(world.auditor, world.repo) if r["purpose"]]
    assert reads[0]["purpose"] == "coding"
