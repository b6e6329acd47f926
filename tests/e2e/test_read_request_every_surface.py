"""A read request's rules, each refused alike on every surface that takes the input: the CLI,
REST, MCP and the console's Ask page. The CLI, MCP and the console build the request with one
builder (``edge.reading.read_request``); REST sends the request's own structure, validated by the
same model (``service.reading.request``). The same bad input gets the same code and the same words
everywhere (before, ``context --as-of yesterday`` said "malformed --as-of 'yesterday'…" where
MCP said "unparsable instant…", and each surface worded a bad repository its own way)."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from typer.testing import CliRunner

from cli.main import app as cli_app
from mcp_adapter.server import MemoryMcp
from server.rest.app import create_app
from tests.conftest import World
from tests.e2e.console_harness import sign_in
from tests.e2e.mcp_harness import error_of
from tests.e2e.rest_harness import tokens_for


@dataclass(frozen=True)
class Bad:
    """One bad input, as each surface that takes it spells it (None: the surface has no way
    to say it — REST has no scope text, the console no selector or validity instant)."""

    cli: tuple[str, ...]
    rest: dict[str, Any] | None
    mcp: dict[str, Any]
    console: dict[str, str] | None


CASES = {
    "an unparsable as_of": Bad(
        ("--as-of", "yesterday"), {"as_of": "yesterday"}, {"as_of": "yesterday"},
        {"as_of": "yesterday"},
    ),
    "an as_of without a zone": Bad(
        ("--as-of", "2026-01-31T12:00:00"), {"as_of": "2026-01-31T12:00:00"},
        {"as_of": "2026-01-31T12:00:00"}, {"as_of": "2026-01-31T12:00:00"},
    ),
    "a valid_at without a zone": Bad(
        ("--valid-at", "2026-01-31"), {"valid_at": "2026-01-31"}, {"valid_at": "2026-01-31"},
        None,
    ),
    "a malformed repository": Bad(
        ("--repo", "acme"), None, {"repository": "acme"}, {"repo": "acme"},
    ),
    "an organization with an empty segment": Bad(
        ("--repo", "acme//x"), None, {"repository": "acme//x"}, {"repo": "acme//x"},
    ),
    "a baseline without the baseline_ref selector": Bad(
        ("--baseline", "bl_0123456789abcdef01234567"),
        {"selector": {"kind": "published", "baseline_id": "bl_0123456789abcdef01234567"}},
        {"baseline_id": "bl_0123456789abcdef01234567"}, None,
    ),
    "a baseline_ref selector without a baseline": Bad(
        ("--selector", "baseline_ref"), {"selector": {"kind": "baseline_ref"}},
        {"selector": "baseline_ref"}, None,
    ),
}  # fmt: skip
QUESTION = "deploy"


@pytest.fixture
def surfaces(world: World) -> Iterator[tuple[World, TestClient, TestClient]]:
    """A REST client with the reader's token and a console client signed in as the reader."""
    token = tokens_for(world)[world.reader.principal_id]
    app = create_app(world.svc, settings=world.app.settings)
    with TestClient(app) as rest, TestClient(app) as console:
        rest.headers["Authorization"] = f"Bearer {token}"
        sign_in(console, token)
        yield world, rest, console


def _cli(world: World, bad: Bad) -> tuple[str, str]:
    argv = ["--home", str(world.app.settings.home), "--as", world.reader.principal_id]
    given = dict(zip(bad.cli[::2], bad.cli[1::2], strict=True))
    repo = given.pop("--repo", world.repo)
    extra = [word for pair in given.items() for word in pair]
    result = CliRunner().invoke(
        cli_app, [*argv, "context", "--repo", repo, *extra, QUESTION, "--json"]
    )
    assert result.exit_code == 2, result.stdout
    error = json.loads(result.stdout)["error"]
    return error["code"], error["message"]


def _rest(world: World, client: TestClient, bad: Bad) -> tuple[str, str]:
    assert bad.rest is not None
    tenant, org, repo = world.repo.split("/")
    scope = {"tenant_id": tenant, "organization_id": org, "repository_id": repo}
    answer = client.post("/v1/context", json={"scope": scope, "query": QUESTION, **bad.rest})
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    return error["code"], error["message"]


def _mcp(world: World, bad: Bad) -> tuple[str, str]:
    found: list[dict[str, Any]] = []

    async def main() -> None:
        server = MemoryMcp(world.svc, lambda ctx: world.reader).server()
        async with Client(server) as client:
            args = {"repository": world.repo, "query": QUESTION, **bad.mcp}
            found.append(error_of(await client.call_tool("memory.get_context", args)))

    anyio.run(main)
    return found[0]["code"], found[0]["message"]


def _console(world: World, client: TestClient, bad: Bad) -> tuple[str, str]:
    assert bad.console is not None
    params = {"repo": world.repo, "question": QUESTION, **bad.console}
    page = client.get("/ui/context", params=params)
    assert page.status_code == 400, page.text[:500]
    shown = html.unescape(page.text)
    code, _, message = shown.split('data-testid="error"><strong>', 1)[1].partition("</strong>: ")
    return code, message.split("</p>", 1)[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_bad_read_is_refused_alike_on_every_surface(
    surfaces: tuple[World, TestClient, TestClient], case: str
) -> None:
    world, rest, console = surfaces
    bad = CASES[case]
    answers = {"CLI": _cli(world, bad), "MCP": _mcp(world, bad)}
    if bad.rest is not None:
        answers["REST"] = _rest(world, rest, bad)
    if bad.console is not None:
        answers["console"] = _console(world, console, bad)
    assert {code for code, _ in answers.values()} == {"INVALID_ARGUMENT"}, answers
    assert len({message for _, message in answers.values()}) == 1, answers
