"""The reference scenario up to the stale proposal, for the console tests.

``stale_scenario(world)`` writes the Testing SOP (v1), publishes it, has the agent propose
phase 3 pinned to v1, and has a curator accept another change first — so the agent's proposal
is OPEN and stale, exactly where a curator opens the console in docs/product.md §9.
``conflict_scenario(world)`` adds, to that, a second proposal of the agent pinned to v1 that
rewrites the very line the accepted v2 changed: stale, and its three-way merge conflicts.
``sign_in(client, token)`` signs an httpx-style TestClient in through the sign-in form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapi.testclient import TestClient

from smoke.content import SOP_CLARIFIED, SOP_TITLE, SOP_TYPE, SOP_V1, SOP_WITH_PHASE_3
from tests.conftest import World

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
SIGNIN_CSRF = re.compile(r'name="signin_csrf" value="([^"]+)"')


@dataclass(frozen=True)
class Stale:
    """Ids of the scenario: the SOP, its versions, the first baseline, the stale proposal."""

    sop: str
    v1: str
    v2: str
    first_baseline: str
    proposal: str


def stale_scenario(world: World) -> Stale:
    """The reference scenario up to the agent's stale proposal (see the module docstring)."""
    svc = world.svc
    sop, v1 = world.canonical(title=SOP_TITLE, body=SOP_V1, type_key=SOP_TYPE)
    first = svc.publishing.create_baseline(world.publisher, world.repo, "SOP v1")["baseline_id"]
    svc.publishing.promote(world.publisher, first, world.repo, "first publication")
    mine = svc.curation.propose(
        world.agent, world.repo, body=SOP_WITH_PHASE_3, summary="Add phase 3 (end-to-end tests)",
        element_id=sop, target_version_id=v1,
    )["proposal_id"]  # fmt: skip
    other = svc.curation.propose(
        world.agent, world.repo, body=SOP_CLARIFIED, summary="Say what lint runs",
        element_id=sop, target_version_id=v1,
    )["proposal_id"]  # fmt: skip
    v2 = svc.review.accept(world.curator, other, "clearer")["result_version_id"]
    return Stale(sop, v1, v2, first, mine)


LINT_TYPED = "Run `make lint` and `make typecheck`."
"""The agent's line that collides with the accepted ``Run `make lint` (ruff and mypy).``"""


@dataclass(frozen=True)
class Conflicting:
    """The stale scenario plus the agent's stale proposal whose merge conflicts."""

    stale: Stale
    proposal: str


def conflict_scenario(world: World) -> Conflicting:
    """The stale scenario and a second agent proposal whose merge onto v2 conflicts."""
    s = stale_scenario(world)
    body = SOP_V1.replace("Run `make lint`.", LINT_TYPED)
    clash = world.svc.curation.propose(
        world.agent, world.repo, body=body, summary="Typecheck in phase 0",
        element_id=s.sop, target_version_id=s.v1,
    )["proposal_id"]  # fmt: skip
    return Conflicting(s, clash)


def sign_in(client: TestClient, token: str) -> str:
    """Sign ``client`` in through the form; return the session's CSRF token."""
    page = client.get("/ui/sign-in")
    assert page.status_code == 200, page.text
    csrf = SIGNIN_CSRF.search(page.text)
    assert csrf is not None
    done = client.post(
        "/ui/sign-in", data={"token": token, "signin_csrf": csrf.group(1), "next": "/queue"}
    )
    assert done.status_code == 200, done.text  # followed the 303 to the queue
    return csrf_of(done.text)


def csrf_of(html: str) -> str:
    """The CSRF token a page's forms carry."""
    found = CSRF.search(html)
    assert found is not None, "the page has no form with a CSRF token"
    return found.group(1)
