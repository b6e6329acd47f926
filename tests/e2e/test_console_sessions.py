"""The console's sessions and forms, in-process (FastAPI ``TestClient`` on the REST app that
mounts it): what the cookie is, which posts are refused, when sessions end, what a principal
without access sees, and the audit export. The browser tests (``test_console_browser.py``)
cover the same rules end to end in Chromium."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from console.app import create_console
from console.session import SessionStore
from server.rest.app import create_app
from tests.conftest import World
from tests.e2e.console_harness import Stale, csrf_of, sign_in, stale_scenario
from tests.e2e.rest_harness import tokens_for


@pytest.fixture
def setup(world: World) -> tuple[World, Stale, dict[str, str]]:
    return world, stale_scenario(world), tokens_for(world)


@pytest.fixture
def client(setup: tuple[World, Stale, dict[str, str]]) -> Iterator[TestClient]:
    world = setup[0]
    app = create_app(world.svc, settings=world.app.settings)
    with TestClient(app, raise_server_exceptions=True) as c:
        yield c


def status_of(world: World, proposal: str) -> str:
    return str(world.svc.curation.proposal_show(world.curator, proposal)["status"])


def test_signing_in_sets_an_http_only_same_site_strict_cookie_scoped_to_the_console(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, _, tokens = setup
    page = client.get("/ui/sign-in")
    signin_csrf = page.text.split('name="signin_csrf" value="')[1].split('"')[0]
    done = client.post(
        "/ui/sign-in",
        data={"token": tokens[world.curator.principal_id], "signin_csrf": signin_csrf},
        follow_redirects=False,
    )
    assert done.status_code == 303
    cookie = next(v for k, v in done.headers.multi_items() if v.startswith("ameide_console="))
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    assert "Path=/ui" in cookie
    assert tokens[world.curator.principal_id] not in cookie  # the cookie is no bearer token
    page = client.get("/ui/queue")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store"


def test_a_wrong_token_is_refused_and_opens_no_session(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    page = client.get("/ui/sign-in")
    signin_csrf = page.text.split('name="signin_csrf" value="')[1].split('"')[0]
    refused = client.post(
        "/ui/sign-in", data={"token": "amt_not-a-token", "signin_csrf": signin_csrf}
    )
    assert refused.status_code == 401
    assert "UNAUTHENTICATED" in refused.text or "token" in refused.text
    assert "ameide_console" not in client.cookies
    assert client.get("/ui/queue", follow_redirects=False).status_code == 303


def test_the_sign_in_form_is_refused_without_its_own_csrf_cookie(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, _, tokens = setup
    refused = client.post(
        "/ui/sign-in", data={"token": tokens[world.curator.principal_id], "signin_csrf": "x"}
    )
    assert refused.status_code == 403
    assert "ameide_console" not in client.cookies


def test_a_post_without_the_sessions_csrf_token_is_refused_and_changes_nothing(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, s, tokens = setup
    sign_in(client, tokens[world.curator.principal_id])
    for data in ({"rationale": "no"}, {"rationale": "no", "csrf_token": "guessed"}):
        refused = client.post(f"/ui/proposals/{s.proposal}/reject", data=data)
        assert refused.status_code == 403
        assert "CSRF" in refused.text
    assert status_of(world, s.proposal) == "OPEN"


def test_a_forged_or_ended_session_cookie_is_no_session(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, s, tokens = setup
    client.cookies.set("ameide_console", "forged", path="/ui")
    page = client.get(f"/ui/proposals/{s.proposal}", follow_redirects=False)
    assert page.status_code == 303
    assert page.headers["location"].startswith("/ui/sign-in")
    post = client.post(
        f"/ui/proposals/{s.proposal}/reject",
        data={"rationale": "forged", "csrf_token": "x"},
        follow_redirects=False,
    )
    assert post.status_code == 303
    assert status_of(world, s.proposal) == "OPEN"

    client.cookies.clear()
    csrf = sign_in(client, tokens[world.curator.principal_id])
    session = client.cookies.get("ameide_console")
    assert client.post("/ui/sign-out", data={"csrf_token": csrf}).status_code == 200
    client.cookies.set("ameide_console", str(session), path="/ui")  # replay the old cookie
    assert client.get("/ui/queue", follow_redirects=False).status_code == 303


def test_revoking_the_token_ends_its_console_sessions(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, _, _ = setup
    minted = world.svc.tokens.create(world.admin, world.curator.principal_id)
    sign_in(client, minted["token"])
    assert client.get("/ui/queue", follow_redirects=False).status_code == 200
    world.svc.tokens.revoke(world.admin, minted["token_id"])
    assert client.get("/ui/queue", follow_redirects=False).status_code == 303


def test_sessions_expire_when_idle_and_at_their_maximum_age(
    setup: tuple[World, Stale, dict[str, str]],
) -> None:
    world, _, tokens = setup
    now = [1000.0]
    store = SessionStore(idle_seconds=60, max_seconds=150, now=lambda: now[0])
    app = create_console(world.svc, sessions=store)
    with TestClient(app, root_path="/ui") as c:
        sign_in(c, tokens[world.curator.principal_id])
        for step in (50, 50, 40):  # active, within the idle limit each time
            now[0] += step
            assert c.get("/ui/queue", follow_redirects=False).status_code == 200
        now[0] += 20  # 160 s after sign-in: past the maximum
        assert c.get("/ui/queue", follow_redirects=False).status_code == 303
        sign_in(c, tokens[world.curator.principal_id])
        now[0] += 61  # idle too long
        assert c.get("/ui/queue", follow_redirects=False).status_code == 303


def test_sign_in_goes_on_only_to_a_console_path(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, _, tokens = setup
    for target, lands in [("//evil.example/x", "/ui/"), ("https://evil.example", "/ui/")]:
        page = client.get("/ui/sign-in", params={"next": target})
        signin_csrf = page.text.split('name="signin_csrf" value="')[1].split('"')[0]
        done = client.post(
            "/ui/sign-in",
            data={"token": tokens[world.curator.principal_id], "signin_csrf": signin_csrf,
                  "next": target},
            follow_redirects=False,
        )  # fmt: skip
        assert done.headers["location"] == lands


def test_what_a_stranger_may_not_read_is_the_same_as_what_does_not_exist(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, s, _ = setup
    token = world.svc.tokens.create(world.admin, world.stranger.principal_id)["token"]
    sign_in(client, token)
    hidden = client.get(f"/ui/elements/{s.sop}")
    missing = client.get("/ui/elements/el_0000000000000000deadbeef")
    assert hidden.status_code == missing.status_code == 404
    assert "NOT_FOUND" in hidden.text
    assert client.get(f"/ui/proposals/{s.proposal}").status_code == 404
    assert client.get(f"/ui/repos/{world.repo}/baselines").status_code == 404
    home = client.get("/ui/")
    assert world.repo not in home.text


def test_the_audit_history_exports_as_csv_and_json_with_the_pages_filters(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, s, tokens = setup
    sign_in(client, tokens[world.auditor.principal_id])
    path = f"/ui/repos/{world.repo}/audit/export"
    as_json = client.get(path, params={"format": "json", "event_type": "proposal.opened"})
    assert as_json.status_code == 200
    assert "attachment" in as_json.headers["content-disposition"]
    events = json.loads(as_json.text)
    assert [e["event_type"] for e in events] == ["proposal.opened", "proposal.opened"]
    assert events[0]["proposal_id"] == s.proposal  # oldest first, like the chain
    as_csv = client.get(path, params={"format": "csv", "event_type": "proposal.opened"})
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert [r["proposal_id"] for r in rows] == [e["proposal_id"] for e in events]
    assert json.loads(rows[0]["payload"]) == events[0]["payload"]
    everything = json.loads(client.get(path, params={"format": "json"}).text)
    assert everything == world.svc.history.history(world.auditor, world.repo, limit=10_000)


def test_a_page_the_console_does_not_have_is_not_found(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    world, _, tokens = setup
    csrf = sign_in(client, tokens[world.curator.principal_id])
    assert csrf
    missing = client.get("/ui/no-such-page")
    assert missing.status_code == 404
    assert csrf_of(missing.text) == csrf  # still signed in: the header keeps sign-out


def test_accept_is_refused_when_the_proposal_was_revised_after_the_page_showed_it(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    """The accept form carries the proposal version the page showed; the agent revises the
    proposal meanwhile, so the curator's click is refused in place and nothing is accepted."""
    world, s, tokens = setup
    svc = world.svc
    rebased = svc.review.rebase(world.agent, s.proposal)["proposal_id"]  # fresh, no conflicts
    csrf = sign_in(client, tokens[world.curator.principal_id])
    page = client.get(f"/ui/proposals/{rebased}")
    shown = svc.curation.proposal_show(world.curator, rebased)["proposal_version_id"]
    assert f'name="expected_version_id" value="{shown}"' in page.text
    svc.curation.revise(world.agent, rebased, body="# Testing SOP\n\nSomething else entirely.\n")
    refused = client.post(
        f"/ui/proposals/{rebased}/accept",
        data={"csrf_token": csrf, "rationale": "looks right", "expected_version_id": shown},
    )
    assert refused.status_code == 409
    assert "revised after version" in refused.text
    assert status_of(world, rebased) == "OPEN"
    # the page shown again carries the new version: accepting that one works
    again = client.get(f"/ui/proposals/{rebased}")
    current = svc.curation.proposal_show(world.curator, rebased)["proposal_version_id"]
    assert current != shown
    assert f'name="expected_version_id" value="{current}"' in again.text
    done = client.post(
        f"/ui/proposals/{rebased}/accept",
        data={"csrf_token": csrf, "rationale": "reviewed", "expected_version_id": current},
    )
    assert done.status_code == 200
    assert status_of(world, rebased) == "ACCEPTED"


def test_the_csv_export_neutralises_formulas_in_every_cell(
    client: TestClient, setup: tuple[World, Stale, dict[str, str]]
) -> None:
    """Issue 28 item 12 (OWASP CSV injection): a purpose sent as ``X-Ameide-Purpose: =cmd|…``
    (or starting with ``+ - @``, a tab or a carriage return) lands in the export as text, a
    single quote before it, never as a formula a spreadsheet would run."""
    world, _, tokens = setup
    formulas = [
        "=cmd|' /C calc'!A0",
        "+1+cmd|' /C calc'!A0",
        "-2+3",
        "@SUM(1+1)*cmd|' /C calc'!A0",
        "\t=1+1",
        "\r=1+1",
    ]
    for i, purpose in enumerate(formulas[:4]):  # over REST, as an attacker would send them
        created = client.post(
            f"/v1/repositories/{world.repo}/elements",
            json={"title": f"F{i}", "body": f"# F{i}\n\nbody\n"},
            headers={
                "Authorization": f"Bearer {tokens[world.curator.principal_id]}",
                "X-Ameide-Purpose": purpose,
            },
        )
        assert created.status_code < 300, created.text
    for i, purpose in enumerate(formulas[4:]):  # control characters no header may carry
        curator = world.curator.__class__(world.curator.principal_id, purpose=purpose)
        world.svc.elements.create_element(curator, world.repo, title=f"G{i}", body=f"# G{i}\n\nb\n")
    sign_in(client, tokens[world.auditor.principal_id])
    path = f"/ui/repos/{world.repo}/audit/export"
    as_csv = client.get(path, params={"format": "csv", "event_type": "element.created"})
    rows = list(csv.DictReader(io.StringIO(as_csv.text, newline="")))
    purposes = [r["purpose"] for r in rows[-len(formulas) :]]
    assert purposes == ["'" + p for p in formulas]
    for r in rows:
        for cell in r.values():
            assert not cell or cell[0] not in "=+-@\t\r", cell
    # the JSON export keeps the values as they are (no spreadsheet reads it)
    as_json = json.loads(client.get(path, params={"format": "json"}).text)
    assert [e["purpose"] for e in as_json if e["event_type"] == "element.created"][
        -len(formulas) :
    ] == formulas
