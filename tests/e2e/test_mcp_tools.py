"""Every MCP tool through the official SDK client, in-process (the transports have their own
tests): results are structured and valid against each tool's output schema, failures are
one-line tool errors that say what to do."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client

from domain.errors import (
    AlreadyExists,
    AmeideError,
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    LegalHoldActive,
    NotFound,
    PermissionDenied,
    ProposalConflicted,
    StaleProposal,
    Unauthenticated,
)
from mcp_adapter import errors
from mcp_adapter.server import MemoryMcp, parse_resource_uri, resource_uri
from service.authz import Caller
from tests.conftest import World
from tests.e2e.mcp_harness import error_of, error_text, structured, tool_names

SOP = "# Testing SOP\n\n## Phases\n\nRun phase 0/1/2 tests with make test.\n"


def _published_sop(world: World) -> tuple[str, str]:
    element, version = world.canonical(body=SOP)
    baseline = world.svc.publishing.create_baseline(world.publisher, world.repo)["baseline_id"]
    world.svc.publishing.promote(world.publisher, baseline, world.repo)
    return element, version


def _run(world: World, who: Caller, scenario: Callable[[Client], Awaitable[None]]) -> None:
    server = MemoryMcp(world.svc, lambda ctx: who).server()

    async def main() -> None:
        async with Client(server) as client:
            await scenario(client)

    anyio.run(main)


def test_every_tool_is_listed_with_schemas_and_hints(world: World) -> None:
    async def scenario(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == tool_names()
        for tool in tools.values():
            assert tool.description
            assert len(tool.description) > 60
            assert tool.input_schema["type"] == "object"
            assert tool.output_schema is not None
            assert tool.output_schema["type"] == "object"
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            hints = tool.annotations
            assert hints is not None
            assert hints.open_world_hint is False
            assert hints.read_only_hint is (tool.name != "memory.propose")
            assert hints.destructive_hint is False
        assert tools["memory.propose"].annotations.idempotent_hint is False  # type: ignore[union-attr]
        assert "client_request_id" in tools["memory.propose"].input_schema["properties"]

    _run(world, world.agent, scenario)


def test_read_tools_return_structured_content_matching_their_schemas(world: World) -> None:
    element, version = _published_sop(world)

    async def scenario(client: Client) -> None:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}

        async def call(name: str, **args: Any) -> dict[str, Any]:
            content = structured(await client.call_tool(name, args))
            jsonschema.validate(content, schemas[name])
            return content

        context = await call("memory.get_context", repository=world.repo, query="phase tests")
        item = context["items"][0]
        assert (item["element_id"], item["version_id"]) == (element, version)
        assert context["trace"] is None

        titles = await call("memory.search", repository=world.repo, query="phase tests")
        assert titles["items"][0]["element_id"] == element
        assert len(titles["items"][0]["content"]) < len(item["content"]) + 1

        explained = await call("memory.explain", repository=world.repo, query="phase tests")
        assert explained["trace"]["query_rewrite"]["terms"] == ["phase", "tests"]
        assert "score_breakdown" in explained["items"][0]

        shown = await call("memory.get_element", element_id=element)
        assert shown["version"]["body"] == SOP
        history = await call("memory.history", element_id=element)
        assert [v["version_id"] for v in history["versions"]] == [version]
        around = await call("memory.expand", element_id=element)
        assert [n["element_id"] for n in around["nodes"]] == [element]

        cited = item["citations"][0]
        verdict = await call(
            "memory.verify_citations",
            context_id=context["context_id"],
            citations=[cited, {"version_id": "ver_" + "0" * 24}],
        )
        assert [r["valid"] for r in verdict["results"]] == [True, False]

        health = await call("memory.health")
        assert health["status"] == "ok"
        assert health["principal"] == world.agent.principal_id

    _run(world, world.agent, scenario)


def test_propose_is_idempotent_with_a_client_request_id(world: World) -> None:
    element, version = _published_sop(world)
    args = {
        "repository": world.repo, "element_id": element, "target_version_id": version,
        "summary": "add phase 3", "body": SOP + "\n## Phase 3\n\nRun e2e.\n",
        "client_request_id": "coder-1-phase-3",
    }  # fmt: skip

    async def scenario(client: Client) -> None:
        first = structured(await client.call_tool("memory.propose", args))
        again = structured(await client.call_tool("memory.propose", args))
        assert first["status"] == "OPEN"
        assert first["replay"] is False
        assert again["proposal_id"] == first["proposal_id"]
        assert again["replay"] is True
        reused = await client.call_tool("memory.propose", {**args, "summary": "other"})
        assert error_text(reused).startswith("ALREADY_EXISTS: client_request_id was already used")

    _run(world, world.agent, scenario)


def test_bad_arguments_and_forbidden_repositories_are_tool_errors(world: World) -> None:
    element, _ = _published_sop(world)

    async def scenario(client: Client) -> None:
        too_many = await client.call_tool(
            "memory.get_context", {"repository": world.repo, "query": "x", "max_items": 500}
        )
        text = error_text(too_many)
        assert text.startswith("INVALID_ARGUMENT: invalid arguments for memory.get_context")
        assert "max_items" in text
        assert "Next: fix them" in text

        unknown = await client.call_tool("memory.get_element", {"element_id": element, "x": 1})
        assert "x: Extra inputs are not permitted" in error_text(unknown)
        no_query = await client.call_tool("memory.get_context", {"repository": world.repo})
        assert "give a query, element_ids or version_ids" in error_text(no_query)
        bad_repo = await client.call_tool("memory.search", {"repository": "acme", "query": "x"})
        assert "malformed repository 'acme': expected TENANT/ORG/REPO" in error_text(bad_repo)

        forbidden = await client.call_tool(
            "memory.get_context", {"repository": world.repo, "query": "phase"}
        )
        assert error_text(forbidden) == (
            f"NOT_FOUND: repository {world.repo} not found. Next: it does not exist or you may "
            "not read it; memory.health lists the repositories you may read: use one of those "
            "(TENANT/ORG/REPO) as repository."
        )
        assert error_of(forbidden)["code"] == "NOT_FOUND"
        hidden = await client.call_tool("memory.get_element", {"element_id": element})
        assert error_text(hidden).startswith(f"NOT_FOUND: element {element} not found")

    _run(world, world.stranger, scenario)


def test_proposing_against_a_superseded_version_opens_a_proposal_reported_stale(
    world: World,
) -> None:
    # Agents read published truth, which may lag the head; they can still propose, and the
    # proposal says at once that it is stale and which head it must be rebased onto.
    element, v1 = _published_sop(world)
    other = world.svc.curation.propose(
        world.admin, world.repo, element_id=element, target_version_id=v1,
        body=SOP + "\nMore.\n", summary="more",
    )  # fmt: skip
    head = world.svc.review.accept(world.curator, other["proposal_id"])["result_version_id"]

    async def scenario(client: Client) -> None:
        late = await client.call_tool(
            "memory.propose",
            {"repository": world.repo, "element_id": element, "target_version_id": v1,
             "summary": "late", "body": SOP + "\nLate.\n"},
        )  # fmt: skip
        assert not late.is_error
        assert late.structured_content["stale"] is True
        assert late.structured_content["current_head_version_id"] == head

    _run(world, world.agent, scenario)


def test_element_versions_are_resources_whose_uri_round_trips(world: World) -> None:
    element, version = _published_sop(world)
    uri = resource_uri(world.repo, element, version)
    assert parse_resource_uri(uri) == (world.repo, element, version)

    async def scenario(client: Client) -> None:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [
            "ameide://{tenant}/{org}/{repo}/{element_id}@{version_id}"
        ]
        read = await client.read_resource(uri)
        assert read.contents[0].text == SOP  # type: ignore[union-attr]
        assert read.contents[0].mime_type == "text/markdown"
        elsewhere = uri.replace(world.repo, world.repo.replace("platform", "other"))
        with pytest.raises(Exception, match="NOT_FOUND"):
            await client.read_resource(elsewhere)

    _run(world, world.reader, scenario)


@pytest.mark.parametrize(
    ("error", "advice"),
    [
        (InvalidArgument("bad"), "fix the arguments"),
        (NotFound("gone"), "check the id or find it with memory.search"),
        (PermissionDenied("no"), "ask an administrator"),
        (Unauthenticated("who"), "configure a valid bearer token"),
        (AlreadyExists("dup"), "new client_request_id"),
        (Conflict("race"), "read it again and retry once"),
        (StaleProposal("stale", current_head_version_id="ver_x"), "current head version"),
        (ProposalConflicted("markers"), "free of conflict markers"),
        (LegalHoldActive("held"), "does not allow this"),
        (FailedPrecondition("state"), "does not allow this"),
    ],
)
def test_every_error_class_maps_to_a_one_line_tool_error_with_advice(
    error: AmeideError, advice: str
) -> None:
    result = errors.from_service_error(error)
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error
    assert "\n" not in text
    assert text.startswith(f"{error.code}: {error.message}. Next: ")
    assert advice in text
    assert result.structured_content is None
    assert json.loads(result.content[1].text) == {"error": error.to_dict()}  # type: ignore[union-attr]


def test_resources_list_what_the_caller_may_read_a_page_at_a_time(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mcp_adapter.server as mcp_server

    monkeypatch.setattr(mcp_server, "RESOURCE_PAGE", 2)
    ids = {world.canonical(title=f"Page {n}", body=f"# Page {n}\n")[0] for n in range(3)}
    secret = world.svc.elements.create_element(
        world.admin, world.repo, title="Secret", body="# Secret\n", classification="confidential"
    )["element"]["element_id"]

    async def scenario(client: Client) -> None:
        listed, cursor, pages = [], None, 0
        while True:
            page = (
                await client.list_resources(cursor=cursor)
                if cursor
                else await client.list_resources()
            )
            assert len(page.resources) <= 2
            listed += page.resources
            pages += 1
            cursor = page.next_cursor
            if not cursor:
                break
        assert pages == 2
        assert {r.name for r in listed} == ids  # the confidential page is not listed
        assert secret not in {r.name for r in listed}
        read = await client.read_resource(str(listed[0].uri))  # each URI reads back
        assert read.contents[0].text.startswith("# Page")  # type: ignore[union-attr]
        health = await client.call_tool("memory.health", {})
        assert structured(health)["repositories"] == [world.repo]

    _run(world, world.reader, scenario)
