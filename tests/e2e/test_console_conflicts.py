"""The conflicted path in the console (issue 30 §4), in-process (FastAPI ``TestClient`` on the
REST app that mounts it): a conflicted proposal shows its conflict blocks side by side and no
Accept; the revise form is prefilled with the three-way merge and its markers, refuses a body
that still has them and a proposal revised since the page was loaded, and a clean revision can
be accepted; a proposer withdraws and rebases their own proposals and nobody else's. The
browser tests (``test_console_browser.py``) walk the same path in Chromium."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from server.rest.app import create_app
from smoke.content import SOP_CLARIFIED
from tests.conftest import World
from tests.e2e.console_harness import LINT_TYPED, Conflicting, conflict_scenario, csrf_of, sign_in
from tests.e2e.rest_harness import tokens_for

HEAD_LINE = "Run `make lint` (ruff and mypy)."
RESOLVED = SOP_CLARIFIED.replace(HEAD_LINE, "Run `make lint` (ruff and mypy) and `make typecheck`.")
TEXTAREA = re.compile(r'<textarea id="revise-body"[^>]*>\n(.*?)</textarea>', re.S)


@pytest.fixture
def setup(world: World) -> tuple[World, Conflicting, dict[str, str]]:
    return world, conflict_scenario(world), tokens_for(world)


@pytest.fixture
def client(setup: tuple[World, Conflicting, dict[str, str]]) -> Iterator[TestClient]:
    app = create_app(setup[0].svc, settings=setup[0].app.settings)
    with TestClient(app, raise_server_exceptions=True) as c:
        yield c


def rebased(world: World, proposal: str) -> str:
    """The curator rebases ``proposal``; the new (conflicted) proposal's id."""
    return str(world.svc.review.rebase(world.curator, proposal)["proposal_id"])


def shown(world: World, proposal: str) -> dict[str, object]:
    return world.svc.curation.proposal_show(world.curator, proposal)


def prefilled(page: str) -> str:
    found = TEXTAREA.search(page)
    assert found is not None, "the page has no revise form"
    return html.unescape(found.group(1))


def section(page: str, testid: str) -> str:
    start = page.index(f'data-testid="{testid}"')
    return page[start : page.index("</section>", start)]


def test_a_conflicted_proposal_shows_its_conflicts_side_by_side_a_prefilled_form_and_no_accept(
    client: TestClient, setup: tuple[World, Conflicting, dict[str, str]]
) -> None:
    world, c, tokens = setup
    sign_in(client, tokens[world.curator.principal_id])
    stale = client.get(f"/ui/proposals/{c.proposal}").text  # before the rebase: the preview
    preview = section(stale, "merge-preview")
    assert "Merge conflict 1 of 1" in preview
    assert html.escape(HEAD_LINE, quote=False) in preview
    assert html.escape(LINT_TYPED, quote=False) in preview
    assert "keeps between markers for you to resolve" in section(stale, "rebase")

    new = rebased(world, c.proposal)
    page = client.get(f"/ui/proposals/{new}")
    assert page.status_code == 200
    conflicts = section(page.text, "conflicts")
    assert "Conflict 1 of 1: lines 7–11 of the body" in conflicts
    # side by side, in one row: the head's line on the left, the proposal's on the right
    row = re.search(r'<tr class="replace">(.*?)</tr>', conflicts, re.S)
    assert row is not None
    assert row.group(1).index("(ruff and mypy)") < row.group(1).index("make typecheck")
    assert '<th scope="col">current head</th>' in conflicts
    assert f"/proposals/{new}/accept" not in page.text  # no Accept bound to fail
    assert 'data-testid="accept-blocked"' in page.text
    refusal = page.text.split('data-testid="would-refuse"')[1].split("</p>")[0]
    assert "PROPOSAL_HAS_CONFLICTS" in refusal
    body = prefilled(page.text)
    assert body == shown(world, new)["body"]  # the three-way merge, markers and all
    assert "<<<<<<< current head\n" in body
    assert ">>>>>>> proposal\n" in body


def test_a_revision_that_keeps_conflict_markers_is_refused_with_the_text_kept(
    client: TestClient, setup: tuple[World, Conflicting, dict[str, str]]
) -> None:
    world, c, tokens = setup
    new = rebased(world, c.proposal)
    before = shown(world, new)
    csrf = sign_in(client, tokens[world.curator.principal_id])
    # a browser sends a textarea with CRLF line endings; one conflict of two resolved
    typed = str(before["body"]).replace("\n", "\r\n") + "<script>alert(1)</script>\r\n"
    refused = client.post(
        f"/ui/proposals/{new}/revise",
        data={
            "csrf_token": csrf,
            "body": typed,
            "expected_version_id": str(before["proposal_version_id"]),
        },
    )
    assert refused.status_code == 400
    assert "INVALID_ARGUMENT" in refused.text
    assert "still has conflict markers" in refused.text
    assert "<script>alert(1)" not in refused.text  # escaped, in the form again
    assert prefilled(refused.text) == typed.replace("\r\n", "\n")
    after = shown(world, new)
    assert after["proposal_version_id"] == before["proposal_version_id"]
    assert after["has_conflicts"] is True


def test_a_clean_revision_clears_the_conflicts_and_is_then_accepted(
    client: TestClient, setup: tuple[World, Conflicting, dict[str, str]]
) -> None:
    world, c, tokens = setup
    new = rebased(world, c.proposal)
    csrf = sign_in(client, tokens[world.curator.principal_id])
    page = client.get(f"/ui/proposals/{new}").text
    expected = re.search(r'name="expected_version_id" value="([^"]+)"', page)
    assert expected is not None
    done = client.post(
        f"/ui/proposals/{new}/revise",
        data={
            "csrf_token": csrf,
            "body": RESOLVED.replace("\n", "\r\n"),
            "expected_version_id": expected.group(1),
        },
    )
    assert done.status_code == 200
    assert "Done: revised" in done.text
    assert 'data-testid="conflicts"' not in done.text
    assert f"/proposals/{new}/accept" in done.text
    p = shown(world, new)
    assert p["has_conflicts"] is False
    assert p["body"] == RESOLVED
    assert csrf_of(done.text) == csrf
    version = re.findall(r'name="expected_version_id" value="([^"]+)"', done.text)
    assert version[0] == p["proposal_version_id"]
    accepted = client.post(
        f"/ui/proposals/{new}/accept",
        data={"csrf_token": csrf, "rationale": "resolved", "expected_version_id": version[0]},
    )
    assert "ACCEPTED" in accepted.text
    element = world.svc.elements.get_element(world.curator, c.stale.sop)
    assert element["version"]["body"] == RESOLVED
    events = [e["event_type"] for e in world.svc.history.history(world.auditor, world.repo)]
    assert "proposal.revised" in events


def test_a_revision_of_a_proposal_revised_since_the_page_was_loaded_is_refused(
    client: TestClient, setup: tuple[World, Conflicting, dict[str, str]]
) -> None:
    world, c, tokens = setup
    new = rebased(world, c.proposal)
    loaded = str(shown(world, new)["proposal_version_id"])
    world.svc.curation.revise(world.agent, new, RESOLVED)  # the proposer resolved it meanwhile
    csrf = sign_in(client, tokens[world.curator.principal_id])
    mine = RESOLVED.replace("and `make typecheck`", "then `make typecheck`")
    refused = client.post(
        f"/ui/proposals/{new}/revise",
        data={"csrf_token": csrf, "body": mine, "expected_version_id": loaded},
    )
    assert refused.status_code == 409
    assert "CONFLICT" in refused.text
    assert "was revised after version" in refused.text
    assert prefilled(refused.text) == mine
    assert shown(world, new)["body"] == RESOLVED


def test_a_proposer_withdraws_and_rebases_their_own_proposals_and_nobody_elses(
    client: TestClient, setup: tuple[World, Conflicting, dict[str, str]]
) -> None:
    world, c, tokens = setup
    other = f"agent:other-{world.repo.split('/')[0]}"
    world.svc.admin.grant(world.admin, other, "agent", world.repo)
    other_token = world.svc.tokens.create(world.admin, other)["token"]

    csrf = sign_in(client, other_token)  # another agent: the same as absent, and nothing done
    assert client.get(f"/ui/proposals/{c.stale.proposal}").status_code == 404
    for verb, data in (
        ("withdraw", {}),
        ("rebase", {}),
        ("revise", {"body": RESOLVED}),
        ("reject", {"rationale": "mine now"}),
    ):
        refused = client.post(
            f"/ui/proposals/{c.proposal}/{verb}", data={"csrf_token": csrf, **data}
        )
        assert refused.status_code == 404, (verb, refused.text)
        assert "NOT_FOUND" in refused.text
    assert shown(world, c.proposal)["status"] == "OPEN"

    csrf = sign_in(client, tokens[world.agent.principal_id])
    page = client.get(f"/ui/proposals/{c.stale.proposal}").text
    assert 'data-testid="curation"' not in page  # an agent decides nothing
    assert 'data-testid="curators-decide"' in page  # and is told who does, not "refused"
    assert 'data-testid="would-refuse"' not in page
    assert 'data-testid="withdraw"' in page
    assert 'data-testid="rebase"' in page
    moved = client.post(f"/ui/proposals/{c.stale.proposal}/rebase", data={"csrf_token": csrf})
    assert moved.status_code == 200
    assert "Done: rebased" in moved.text
    assert shown(world, c.stale.proposal)["status"] == "REBASED"
    gone = client.post(
        f"/ui/proposals/{c.proposal}/withdraw",
        data={"csrf_token": csrf, "rationale": "typecheck belongs in phase 1"},
    )
    assert "Done: withdrawn" in gone.text
    assert 'data-testid="withdraw"' not in gone.text
    assert shown(world, c.proposal)["status"] == "WITHDRAWN"
    again = client.post(f"/ui/proposals/{c.proposal}/withdraw", data={"csrf_token": csrf})
    assert again.status_code == 412
    assert "FAILED_PRECONDITION" in again.text


def test_the_new_forms_refuse_a_post_without_the_csrf_token(
    client: TestClient, setup: tuple[World, Conflicting, dict[str, str]]
) -> None:
    world, c, tokens = setup
    sign_in(client, tokens[world.agent.principal_id])
    for verb, data in (("withdraw", {}), ("revise", {"body": RESOLVED})):
        refused = client.post(f"/ui/proposals/{c.proposal}/{verb}", data=data)
        assert refused.status_code == 403
        assert "CSRF" in refused.text
    p = shown(world, c.proposal)
    assert p["status"] == "OPEN"
    assert p["body"] != RESOLVED


def test_hostile_text_in_a_conflict_block_and_its_marker_labels_is_escaped(
    client: TestClient, setup: tuple[World, Conflicting, dict[str, str]]
) -> None:
    world, c, tokens = setup
    new = rebased(world, c.proposal)
    hostile = (
        "# T\n<<<<<<< <script>alert('label')</script>\n</textarea><script>alert(1)</script>\n"
        '=======\n<img src=x onerror="alert(2)">\n>>>>>>> </th><b>x</b>\n'
    )
    world.svc.curation.revise(
        world.agent, new, hostile
    )  # the proposer may store markers (work in progress)
    sign_in(client, tokens[world.curator.principal_id])
    page = client.get(f"/ui/proposals/{new}").text
    for raw in ("<script>", "<img", "</textarea><script>", "<b>x</b>"):
        assert raw not in page
    conflicts = section(page, "conflicts")
    assert "&lt;script&gt;alert(&#39;label&#39;)&lt;/script&gt;</th>" in conflicts
    assert "&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in conflicts
    assert "&lt;img src=x onerror=&#34;alert(2)&#34;&gt;" in conflicts
    assert prefilled(page) == hostile
