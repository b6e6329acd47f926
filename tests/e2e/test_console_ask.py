"""The console's "Ask" page builds its read request's scope with the one rule every surface
uses (``edge.reading.read_scope``): ``T/O/R`` or ``T/O``, anything else refused by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from server.rest.app import create_app
from tests.conftest import World
from tests.e2e.console_harness import sign_in
from tests.e2e.rest_harness import tokens_for


@pytest.fixture
def client(world: World) -> Iterator[TestClient]:
    world.canonical(title="Deploy", body="# Deploy\n\nDeploy with a canary.\n")
    baseline = world.svc.publishing.create_baseline(world.publisher, world.repo)["baseline_id"]
    world.svc.publishing.promote(world.publisher, baseline, world.repo)
    app = create_app(world.svc, settings=world.app.settings)
    with TestClient(app) as c:
        sign_in(c, tokens_for(world)[world.curator.principal_id])
        yield c


def test_a_repository_or_an_organization_scope_is_asked(client: TestClient, world: World) -> None:
    org = world.repo.rsplit("/", 1)[0]
    for scope in (world.repo, org):
        page = client.get("/ui/context", params={"repo": scope, "question": "canary", "as_of": ""})
        assert page.status_code == 200, (scope, page.text[:500])
        assert "Deploy" in page.text, scope


@pytest.mark.parametrize("scope", ["acme", "a/b/c/d", "a//c", "/b/c"])
def test_a_malformed_scope_is_refused_naming_it(client: TestClient, scope: str) -> None:
    page = client.get("/ui/context", params={"repo": scope, "question": "canary"})
    assert page.status_code == 400
    assert "malformed repository" in page.text
