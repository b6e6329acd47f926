"""Every console page a curator and an auditor can reach is valid HTML (issue 30, defect 12),
and a proposal names who made it and for whom (issue 28, item 1).

The pages are crawled from ``/ui/queue`` through every same-origin link (a bounded walk over
the reference scenario, a CREATE proposal and one made on behalf of someone) and each answer is
parsed with html5lib's strict HTML5 parser: a raw ``&`` in an ``href``, a stray end tag or a
mis-nested element fails the test, naming the page and the parser's error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from urllib.parse import urljoin, urlsplit

import html5lib
import pytest
from fastapi.testclient import TestClient

from server.rest.app import create_app
from tests.conftest import World
from tests.e2e.console_harness import conflict_scenario, sign_in, stale_scenario
from tests.e2e.rest_harness import tokens_for

HREF = re.compile(r'href="([^"]*)"')
MAX_PAGES = 60


@pytest.fixture
def client(world: World) -> Iterator[TestClient]:
    with TestClient(create_app(world.svc, settings=world.app.settings)) as c:
        yield c


def _problems(html: str) -> list[str]:
    parser = html5lib.HTMLParser(strict=False)
    parser.parse(html)
    return [
        f"line {line}, col {col}: {code} {data or ''}" for (line, col), code, data in parser.errors
    ]


def _crawl(client: TestClient, start: str) -> dict[str, list[str]]:
    """Each reachable console page → its parse errors."""
    seen: dict[str, list[str]] = {}
    todo = [start]
    while todo and len(seen) < MAX_PAGES:
        path = todo.pop(0)
        if path in seen:
            continue
        page = client.get(path)
        assert page.status_code == 200, (path, page.status_code)
        if not page.headers["content-type"].startswith("text/html"):
            continue
        seen[path] = _problems(page.text)
        for href in HREF.findall(page.text):
            target = urljoin(path, href.replace("&amp;", "&"))
            parts = urlsplit(target)
            if parts.netloc or not parts.path.startswith("/ui/") or "/export" in parts.path:
                continue
            if parts.path.endswith(("/sign-out", ".css", ".js", ".png", ".svg")):
                continue
            todo.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return seen


def test_every_console_page_a_curator_or_auditor_reaches_is_valid_html(
    world: World, client: TestClient
) -> None:
    svc = world.svc
    stale = stale_scenario(world)
    svc.curation.propose(
        world.agent, world.repo, body="# New page\n\nfresh\n", summary="a new page",
        change_kind="CREATE", title="New page",
    )  # fmt: skip
    tokens = tokens_for(world)
    for who in (world.curator, world.auditor):
        sign_in(client, tokens[who.principal_id])
        pages = _crawl(client, "/ui/queue")
        assert len(pages) >= 8, sorted(pages)
        assert f"/ui/proposals/{stale.proposal}" in pages
        assert any("/audit" in p for p in pages), sorted(pages)
        invalid = {path: errors for path, errors in pages.items() if errors}
        assert invalid == {}, invalid


def test_a_proposal_page_names_who_proposed_it_and_for_whom_and_a_create_says_so(
    world: World, client: TestClient
) -> None:
    svc = world.svc
    el, v1 = world.canonical()
    alice = "user:alice-console"
    svc.admin.grant(world.admin, alice, "agent", world.repo)
    svc.admin.grant(
        world.admin, world.agent.principal_id, "delegate", world.repo, on_behalf_of=alice
    )
    for_alice = replace(world.agent, on_behalf_of=alice)
    update = svc.curation.propose(for_alice, world.repo, body="x\n", summary="s", element_id=el,
                         target_version_id=v1)["proposal_id"]  # fmt: skip
    create = svc.curation.propose(world.agent, world.repo, body="# N\n\nn\n", summary="new",
                         change_kind="CREATE", title="N")["proposal_id"]  # fmt: skip
    sign_in(client, tokens_for(world)[world.curator.principal_id])
    shown = client.get(f"/ui/proposals/{update}").text
    assert (
        f'<span class="principal">{world.agent.principal_id}</span> for '
        f'<span class="principal">{alice}</span>'
    ) in shown
    queue = client.get("/ui/queue").text
    assert f'for <span class="principal">{alice}</span>' in queue
    created = client.get(f"/ui/proposals/{create}").text
    assert "None" not in created
    assert "creates a new element" in created


def test_the_pages_of_the_conflicted_path_are_valid_html(world: World, client: TestClient) -> None:
    """The stale proposal whose merge conflicts, the conflicted proposal its rebase opened (with
    the conflict blocks and the revise form), a refused revision, and the proposer's own page."""
    c = conflict_scenario(world)
    conflicted = world.svc.review.rebase(world.curator, c.proposal)["proposal_id"]
    tokens = tokens_for(world)
    csrf = sign_in(client, tokens[world.curator.principal_id])
    pages = {
        "stale, merge conflicts": client.get(f"/ui/proposals/{c.proposal}"),
        "conflicted": client.get(f"/ui/proposals/{conflicted}"),
        "revision refused": client.post(
            f"/ui/proposals/{conflicted}/revise",
            data={"csrf_token": csrf, "body": "<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n"},
        ),
    }
    sign_in(client, tokens[world.agent.principal_id])
    pages["the proposer's"] = client.get(f"/ui/proposals/{conflicted}")
    assert 'data-testid="conflicts"' in pages["conflicted"].text
    assert 'data-testid="withdraw"' in pages["the proposer's"].text
    assert pages["revision refused"].status_code == 400
    invalid = {name: errors for name, page in pages.items() if (errors := _problems(page.text))}
    assert invalid == {}
