"""Interop defects of issue 30 section 3, each checked on a real surface: REST on a real
uvicorn server, gRPC on a real channel, MCP through the official SDK client, the CLI through
CliRunner."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from mcp_adapter.http import create_http_app
from mcp_adapter.server import MemoryMcp
from server.rest.app import create_app
from tests.conftest import World
from tests.e2e.mcp_harness import error_of, error_text, http_session, structured
from tests.e2e.rest_harness import running, tokens_for


class Live:
    """A real REST server over the world, with one bearer token per principal."""

    def __init__(self, world: World, base: str) -> None:
        self.world, self.base = world, base
        self.tokens = tokens_for(world)
        self.repo_path = f"/v1/repositories/{world.repo}"

    def call(self, method: str, path: str, who: Any, **kwargs: Any) -> httpx2.Response:
        headers = dict(kwargs.pop("headers", {}))
        if who is not None:
            headers["Authorization"] = f"Bearer {self.tokens[who.principal_id]}"
        return httpx2.request(method, self.base + path, headers=headers, timeout=30, **kwargs)


@pytest.fixture
def live(world: World) -> Iterator[Live]:
    app = create_app(world.svc, settings=world.app.settings)
    with running(app) as base:
        yield Live(world, base)


def _mcp_propose(world: World, args: dict[str, Any]) -> dict[str, Any]:
    """``memory.propose`` over Streamable HTTP as the agent; the tool error's body."""
    token = world.svc.tokens.create(world.admin, world.agent.principal_id)["token"]
    found: dict[str, Any] = {}

    async def main(url: str) -> None:
        async with http_session(url, token) as client:
            found.update(error_of(await client.call_tool("memory.propose", args)))

    with running(create_http_app(world.svc, settings=world.app.settings)) as base:
        anyio.run(main, f"{base}/mcp")
    return found


# 1. A CREATE proposal with a pin is refused, not silently turned into a new element.


@pytest.mark.parametrize("pin", ["element_id", "target_version_id"])
def test_a_create_proposal_with_a_pin_is_refused_on_rest(live: Live, pin: str) -> None:
    w = live.world
    element, version = w.canonical()
    pins = {"element_id": element, "target_version_id": version}
    body = {"change_kind": "CREATE", "title": "t", "body": "# t\n", "summary": "s", pin: pins[pin]}
    before = w.svc.curation.proposal_list(w.curator, w.repo)
    response = live.call("POST", f"{live.repo_path}/proposals", w.agent, json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["details"]["field"] == pin
    assert pin in error["message"]
    assert w.svc.curation.proposal_list(w.curator, w.repo) == before


def test_a_create_proposal_with_a_pin_is_refused_on_mcp(world: World) -> None:
    element, version = world.canonical()
    error = _mcp_propose(
        world,
        {"repository": world.repo, "change_kind": "CREATE", "title": "t", "body": "# t\n",
         "summary": "s", "element_id": element, "target_version_id": version},
    )  # fmt: skip
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["details"]["field"] == "element_id"
    assert world.svc.curation.proposal_list(world.curator, world.repo) == []


# 3. Creating or proposing above one's clearance is 403 PERMISSION_DENIED, not 400.


def test_creating_or_proposing_above_ones_clearance_is_403(live: Live) -> None:
    w = live.world
    create = {"title": "Secret", "body": "# s\n", "classification": "restricted"}
    created = live.call("POST", f"{live.repo_path}/elements", w.curator, json=create)
    assert created.status_code == 403, created.text
    assert created.json()["error"]["code"] == "PERMISSION_DENIED"
    propose = {"change_kind": "CREATE", "title": "Secret", "body": "# s\n", "summary": "s",
               "classification": "restricted"}  # fmt: skip
    proposed = live.call("POST", f"{live.repo_path}/proposals", w.agent, json=propose)
    assert proposed.status_code == 403, proposed.text
    assert proposed.json()["error"]["code"] == "PERMISSION_DENIED"
    assert proposed.json()["error"]["details"]["field"] == "classification"


# 6. HEAD is answered on every GET route, as GET without the body.


def test_head_is_answered_on_every_get_route(live: Live) -> None:
    w = live.world
    element, _ = w.canonical()
    real = {"tenant": w.repo.split("/")[0], "org": "eng", "repo": "platform", "element_id": element}
    paths = live.call("GET", "/openapi.json", None).json()["paths"]
    gets = [path for path, ops in paths.items() if "get" in ops]
    assert len(gets) > 20
    for template in [*gets, "/ui/login"]:
        path = re.sub(r"\{(\w+)\}", lambda m: real.get(m.group(1), "x"), template)
        got = live.call("GET", path, w.admin)
        head = live.call("HEAD", path, w.admin)
        assert head.status_code == got.status_code != 405, (path, head.status_code)
        assert head.content == b""
        assert head.headers.get("content-type") == got.headers.get("content-type"), path
    for path in ("/healthz", f"/v1/elements/{element}"):
        got, head = live.call("GET", path, w.admin), live.call("HEAD", path, w.admin)
        assert head.status_code == 200
        assert head.headers["content-length"] == str(len(got.content))


# 7. A body that is not application/json is 415 naming the type; a duplicate JSON key is 400.


def test_a_body_of_another_media_type_is_415_naming_the_expected_one(live: Live) -> None:
    w = live.world
    path = f"{live.repo_path}/proposals"
    body = b'{"change_kind": "CREATE", "title": "t", "body": "# t\\n", "summary": "s"}'
    for media in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {} if media is None else {"Content-Type": media}
        refused = live.call("POST", path, w.agent, content=body, headers=headers)
        assert refused.status_code == 415, refused.text
        error = refused.json()["error"]
        assert error["code"] == "UNSUPPORTED_MEDIA_TYPE"
        assert "application/json" in error["message"]
        assert error["details"] == {"expected": "application/json"}
    for media in ("application/json", "application/json; charset=utf-8", "application/x+json"):
        created = live.call("POST", path, w.agent, content=body, headers={"Content-Type": media})
        assert created.status_code == 201, (media, created.text)
    assert w.svc.curation.proposal_list(w.curator, w.repo)  # the refused ones changed nothing
    assert len(w.svc.curation.proposal_list(w.curator, w.repo)) == 3


def test_a_json_body_with_a_duplicate_key_is_400(live: Live) -> None:
    w = live.world
    path = f"{live.repo_path}/proposals"
    headers = {"Content-Type": "application/json"}
    twice = (
        b'{"change_kind": "CREATE", "title": "t", "title": "u", "body": "# t\\n", "summary": "s"}'
    )
    refused = live.call("POST", path, w.agent, content=twice, headers=headers)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["details"]) == ("INVALID_ARGUMENT", {"field": "title"})
    nested = b'{"change_kind": "CREATE", "title": "t", "body": "# t\\n", "summary": "s", '
    nested += b'"metadata": {"a": 1, "a": 2}}'
    assert live.call("POST", path, w.agent, content=nested, headers=headers).status_code == 400
    assert w.svc.curation.proposal_list(w.curator, w.repo) == []


# 9. GET /mcp is 405 (a stateless server has no SSE stream to open), and the SDK client still works.


def test_get_on_the_stateless_mcp_endpoint_is_405_and_clients_carry_on(world: World) -> None:
    token = world.svc.tokens.create(world.admin, world.agent.principal_id)["token"]
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    listed: list[str] = []

    async def main(url: str) -> None:
        async with http_session(url, token) as client:
            listed.extend(t.name for t in (await client.list_tools()).tools)

    with running(create_http_app(world.svc, settings=world.app.settings)) as base:
        for method in ("GET", "HEAD"):
            response = httpx2.request(method, f"{base}/mcp", headers=headers, timeout=5)
            assert response.status_code == 405, (method, response.text)
            assert response.headers["allow"] == "POST"
        assert response.headers["content-length"]  # a complete answer, not an open stream
        got = httpx2.get(f"{base}/mcp", headers=headers, timeout=5)
        assert got.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
        anyio.run(main, f"{base}/mcp")
    assert "memory.propose" in listed


# 4. POST /v1/context's ``principal`` block: the schema states the rule the service enforces.


def test_the_context_principal_field_documents_and_keeps_its_rule(live: Live) -> None:
    w = live.world
    schemas = live.call("GET", "/openapi.json", None).json()["components"]["schemas"]
    principal = schemas["ReadRequest"]["properties"]["principal"]
    block = schemas[principal["$ref"].rsplit("/", 1)[1]]
    assert "narrows" in block["description"].lower()
    rule = block["properties"]["principal_id"]["description"]
    for words in ("caller's own", "on_behalf_of", "400 INVALID_ARGUMENT", "principal.principal_id"):
        assert words in rule, rule
    assert "principal.on_behalf_of" in block["properties"]["on_behalf_of"]["description"]
    assert "subset" in block["properties"]["roles"]["description"]
    keys = ("tenant_id", "organization_id", "repository_id")
    scope = dict(zip(keys, w.repo.split("/"), strict=True))
    body = {"scope": scope, "query": "testing"}
    own = {**body, "principal": {"principal_id": w.agent.principal_id}}
    assert live.call("POST", "/v1/context", w.agent, json=own).status_code == 200
    other = {**body, "principal": {"principal_id": w.curator.principal_id}}
    refused = live.call("POST", "/v1/context", w.agent, json=other)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["details"]["field"]) == (
        "INVALID_ARGUMENT",
        "principal.principal_id",
    )
    assert w.agent.principal_id in error["message"]
    assert "on_behalf_of" in error["message"]


# 8. MCP refuses a value of another JSON type than its schema says, as REST does.

MISTYPED = [
    ("memory.search", {"max_items": "2"}, "max_items"),
    ("memory.search", {"include_evidence": "yes"}, "include_evidence"),
    ("memory.get_context", {"max_items": "2"}, "max_items"),
    ("memory.get_context", {"include_evidence": 1}, "include_evidence"),
    ("memory.get_context", {"max_chars": True}, "max_chars"),
    ("memory.explain", {"expand_hops": "1"}, "expand_hops"),
]


def test_mcp_refuses_strings_for_integers_and_booleans_like_rest(live: Live) -> None:
    w = live.world
    element, _ = w.canonical()
    found: dict[str, Any] = {}

    async def main() -> None:
        async with Client(MemoryMcp(w.svc, lambda ctx: w.agent).server()) as client:
            for tool, wrong, _ in MISTYPED:
                args = {"repository": w.repo, "query": "testing", **wrong}
                found[f"{tool} {wrong}"] = await client.call_tool(tool, args)
            found["expand"] = await client.call_tool(
                "memory.expand", {"element_id": element, "hops": "1"}
            )
            found["ok"] = await client.call_tool(
                "memory.search",
                {"repository": w.repo, "query": "testing", "max_items": 2,
                 "include_evidence": False},
            )  # fmt: skip

    anyio.run(main)
    for tool, wrong, field in MISTYPED:
        text = error_text(found[f"{tool} {wrong}"])
        assert text.startswith(f"INVALID_ARGUMENT: invalid arguments for {tool}"), text
        assert field in text, text
    assert "hops" in error_text(found["expand"])
    assert structured(found["ok"])["context_id"]
    scope = dict(
        zip(("tenant_id", "organization_id", "repository_id"), w.repo.split("/"), strict=True)
    )
    for wrong in ({"budget": {"max_items": "2"}}, {"include_evidence": "yes"}):
        refused = live.call(
            "POST", "/v1/context", w.agent, json={"scope": scope, "query": "t", **wrong}
        )
        assert refused.status_code == 400, refused.text
