"""The curator console in a real headless Chromium (issue 13's acceptance): a curator finds the
stale proposal of the reference scenario in the queue, sees its diff against the current head,
is refused the stale accept, rebases, accepts; a publisher promotes a baseline; the audit page
shows the entries and an auditor sees the chain verified; a reader sees no curation controls;
a CSRF-less post and a forged cookie are refused. The conflicted path (issue 30 §4): a curator
rebases a proposal whose merge conflicts, sees the conflict blocks side by side and no Accept,
is refused a revision that keeps the markers, resolves them in the prefilled form and accepts;
an agent rebases and withdraws its own proposals, another agent can do neither. Every page is
saved as a screenshot.

The server is the real REST app (``create_app``, which mounts the console at ``/ui``) under
uvicorn on a loopback port; see ``tests/e2e/browser_harness.py`` for the browser.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from server.rest.app import create_app
from smoke.content import SOP_CLARIFIED
from tests.conftest import World
from tests.e2e.browser_harness import ARTEFACTS, Browser, chromium
from tests.e2e.console_harness import (
    LINT_TYPED,
    Conflicting,
    Stale,
    conflict_scenario,
    stale_scenario,
)
from tests.e2e.rest_harness import running, tokens_for

__all__ = ["chromium"]  # the module-scoped browser fixture


@pytest.fixture
def served(world: World) -> Iterator[tuple[World, Stale, dict[str, str], str]]:
    """The stale scenario in a fresh world, served over HTTP; tokens per principal."""
    scenario = stale_scenario(world)
    app = create_app(world.svc, settings=world.app.settings)
    with running(app) as base:
        yield world, scenario, tokens_for(world), base


@pytest.fixture
def ui(chromium: WebDriver, served: tuple[World, Stale, dict[str, str], str]) -> Browser:
    chromium.delete_all_cookies()
    return Browser(chromium, served[3])


@pytest.fixture
def clash(world: World) -> Iterator[tuple[World, Conflicting, dict[str, str], str]]:
    """The conflict scenario in a fresh world, served over HTTP; tokens per principal."""
    scenario = conflict_scenario(world)
    app = create_app(world.svc, settings=world.app.settings)
    with running(app) as base:
        yield world, scenario, tokens_for(world), base


@pytest.fixture
def ui_clash(chromium: WebDriver, clash: tuple[World, Conflicting, dict[str, str], str]) -> Browser:
    chromium.delete_all_cookies()
    return Browser(chromium, clash[3])


def test_a_curator_rebases_and_accepts_the_stale_proposal_and_a_publisher_promotes_it(
    ui: Browser, served: tuple[World, Stale, dict[str, str], str]
) -> None:
    world, s, tokens, _ = served
    ui.go("/ui/queue")
    assert ui.path.startswith("/ui/sign-in"), "an anonymous browser is sent to sign in"
    ui.shot("01-sign-in")
    ui.sign_in(tokens[world.curator.principal_id])

    # the queue: the agent's proposal, with a stale badge naming the current head
    ui.go("/ui/queue?stale=yes")
    row = ui.text("[data-testid=queue]")
    assert "Add phase 3 (end-to-end tests)" in row
    assert f"stale: head is {s.v2}" in row
    ui.shot("02-queue")

    # the proposal page: the diff against the current head and the merge preview
    ui.find(f"a[href='/ui/proposals/{s.proposal}']").click()
    assert ui.path == f"/ui/proposals/{s.proposal}"
    against_head = ui.text("[data-testid=diff-vs-head]")
    assert s.v2 in against_head
    assert "Phase 3: end-to-end tests" in against_head
    assert "merges cleanly" in ui.text("[data-testid=merge-preview]")
    assert "STALE_PROPOSAL" in ui.text("[data-testid=would-refuse]")
    ui.shot("03-proposal-stale")
    ui.driver.execute_script("document.getElementById('d-head').scrollIntoView()")
    ui.shot("03-proposal-vs-head-window", full=False)  # the README's one (docs/console.png)

    # accepting it is refused with the typed stale answer, which offers the rebase
    ui.fill("#accept-rationale", "looks right")
    ui.press("Accept")
    assert "STALE_PROPOSAL" in ui.text("[data-testid=error]")
    ui.shot("04-accept-refused")
    ui.press("Rebase onto the current head")
    assert "rebased" in ui.text(".notice")
    rebased = ui.path.split("/")[-1].split("?")[0]
    assert rebased != s.proposal
    assert ui.text("[data-testid=status]") == "OPEN"
    assert "would-accept" in ui.driver.page_source
    ui.shot("05-rebased")
    ui.fill("#accept-rationale", "phase 3 is real now")
    ui.press("Accept")
    assert ui.text("[data-testid=status]") == "ACCEPTED"
    ui.shot("06-accepted")
    assert world.svc.curation.proposal_show(world.curator, rebased)["status"] == "ACCEPTED"

    # the element: three versions, the diff between the last two, provenance
    ui.go(f"/ui/elements/{s.sop}")
    assert len(ui.all("[data-testid=versions] tbody tr")) == 3
    assert "ameide-console" not in ui.text("[data-testid=provenance]")  # the agent wrote it
    ui.shot("07-element")
    ui.sign_out()

    # a publisher cuts a baseline and promotes it, with a reason and the expected pointer
    ui.sign_in(tokens[world.publisher.principal_id])
    ui.go(f"/ui/repos/{world.repo}/baselines")
    assert ui.text("[data-testid=published]") == s.first_baseline
    ui.fill("#bl-name", "SOP v3")
    ui.press("Create baseline")
    ui.fill("#promote-reason", "phase 3 added")
    ui.press("Promote")
    assert "promoted" in ui.text(".notice")
    now = ui.text("[data-testid=published]")
    assert now != s.first_baseline
    assert "phase 3 added" in ui.text("[data-testid=moves]")
    ui.press("Compare")
    assert "Phase 3" in ui.text("[data-testid=baseline-diff]")
    ui.shot("08-baselines")
    assert world.svc.publishing.published(world.auditor, world.repo)["baseline_id"] == now

    # the audit entries of what was just done, and the chain verified for an auditor
    ui.go(f"/ui/repos/{world.repo}/audit")
    events = ui.text("[data-testid=audit]")
    for event in ("proposal.rebased", "proposal.accepted", "baseline.created", "pointer.moved"):
        assert event in events
    ui.sign_out()
    ui.sign_in(tokens[world.auditor.principal_id])
    ui.go(f"/ui/repos/{world.repo}/audit?event_type=pointer.moved")
    assert "verified" in ui.text("[data-testid=verdict]")
    assert len(ui.all("[data-testid=audit] tbody tr")) == 2
    ui.shot("09-audit")
    ui.go(f"/ui/context?repo={world.repo}&question=how+do+I+run+phase+0%2F1%2F2+tests%3F")
    assert "Testing SOP" in ui.text("[data-testid=context-items]")
    ui.shot("10-context")


def test_a_reader_sees_no_curation_controls(
    ui: Browser, served: tuple[World, Stale, dict[str, str], str]
) -> None:
    world, s, tokens, _ = served
    ui.sign_in(tokens[world.reader.principal_id])
    ui.go("/ui/")
    ui.shot("11-reader-home")
    for path in (
        f"/ui/elements/{s.sop}",
        f"/ui/repos/{world.repo}/baselines",
        f"/ui/repos/{world.repo}/audit",
        "/ui/queue",
    ):
        ui.go(path)
        assert ui.all("[data-testid=curation], [data-testid=publishing]") == []
        labels = {b.text for b in ui.all("button")}
        assert not labels & {"Accept", "Reject", "Promote", "Roll back", "Create baseline"}
    assert "No open proposal" in ui.text("[data-testid=queue]")
    ui.go(f"/ui/proposals/{s.proposal}")  # not hers to see: the same as absent
    assert "NOT_FOUND" in ui.text("[data-testid=error]")
    ui.shot("12-reader-proposal-not-found")


def test_a_post_without_the_csrf_token_and_a_forged_cookie_are_refused(
    ui: Browser, served: tuple[World, Stale, dict[str, str], str]
) -> None:
    world, s, tokens, _ = served
    ui.sign_in(tokens[world.curator.principal_id])
    # a form posted from the console's own origin, with the session cookie but no CSRF token
    ui.go(f"/ui/proposals/{s.proposal}")
    ui.post_form(f"/ui/proposals/{s.proposal}/reject", {"rationale": "forged"})
    assert "CSRF" in ui.text("[data-testid=error]")
    ui.shot("13-csrf-refused")
    assert world.svc.curation.proposal_show(world.curator, s.proposal)["status"] == "OPEN"

    # a cookie the server never issued is no session: back to sign-in, nothing done
    ui.driver.delete_all_cookies()
    ui.driver.add_cookie({"name": "ameide_console", "value": "forged-session", "path": "/ui"})
    ui.go(f"/ui/proposals/{s.proposal}")
    assert ui.path.startswith("/ui/sign-in")
    ui.post_form(
        f"/ui/proposals/{s.proposal}/reject", {"rationale": "forged", "csrf_token": "guess"}
    )
    assert ui.path.startswith("/ui/sign-in")
    assert world.svc.curation.proposal_show(world.curator, s.proposal)["status"] == "OPEN"
    assert (ARTEFACTS / "13-csrf-refused.png").stat().st_size > 0


HEAD_LINE = "Run `make lint` (ruff and mypy)."
RESOLVED = SOP_CLARIFIED.replace(
    HEAD_LINE, "Run `make lint` (ruff and mypy), then `make typecheck`."
)


def test_a_curator_resolves_the_conflicts_of_a_rebased_proposal_in_the_form_and_accepts_it(
    ui_clash: Browser, clash: tuple[World, Conflicting, dict[str, str], str]
) -> None:
    ui, (world, c, tokens, _) = ui_clash, clash
    ui.sign_in(tokens[world.curator.principal_id])

    # the stale proposal: its merge preview has the conflict side by side; rebasing keeps it
    ui.go(f"/ui/proposals/{c.proposal}")
    preview = ui.find("[data-testid=merge-preview]")
    assert "conflicts" in preview.find_element("css selector", "h2").text
    block = preview.find_element("css selector", "table").text
    assert HEAD_LINE in block
    assert LINT_TYPED in block
    ui.shot("20-stale-merge-conflicts")
    ui.press("Rebase onto the current head")
    conflicted = ui.path.split("/")[-1].split("?")[0]
    assert conflicted != c.proposal

    # the conflicted proposal: the blocks side by side, no Accept, the form prefilled
    cells = ui.all("[data-testid=conflicts] tr.replace td pre")
    assert [cell.text for cell in cells] == [HEAD_LINE, LINT_TYPED]  # left: head, right: proposal
    labels = {b.text for b in ui.all("button")}
    assert "Accept" not in labels
    assert "Reject" in labels
    assert "resolve them in the revise form" in ui.text("[data-testid=accept-blocked]")
    merged = world.svc.curation.proposal_show(world.curator, conflicted)["body"]
    assert ui.find("#revise-body").get_attribute("value") == merged
    assert "<<<<<<< current head" in merged
    ui.shot("21-conflicted")

    # saving with the markers left in is refused, and the text stays in the form
    ui.press("Save revision")
    assert "still has conflict markers" in ui.text("[data-testid=error]")
    assert ui.find("#revise-body").get_attribute("value") == merged
    assert world.svc.curation.proposal_show(world.curator, conflicted)["has_conflicts"] is True
    ui.shot("22-revision-refused")

    # resolved: the revision is clean, Accept is back, and accepting writes the resolved body
    ui.fill("#revise-body", RESOLVED)
    ui.press("Save revision")
    assert "revised" in ui.text(".notice")
    assert ui.all("[data-testid=conflicts]") == []
    assert "would-accept" in ui.driver.page_source
    ui.fill("#accept-rationale", "both: clarified and typechecked")
    ui.press("Accept")
    assert ui.text("[data-testid=status]") == "ACCEPTED"
    ui.shot("23-resolved-accepted")
    assert world.svc.elements.get_element(world.curator, c.stale.sop)["version"]["body"] == RESOLVED


def test_an_agent_rebases_and_withdraws_its_own_proposals_and_another_agent_can_not(
    ui_clash: Browser, clash: tuple[World, Conflicting, dict[str, str], str]
) -> None:
    ui, (world, c, tokens, _) = ui_clash, clash
    other = f"agent:other-{world.repo.split('/')[0]}"
    world.svc.admin.grant(world.admin, other, "agent", world.repo)
    ui.sign_in(world.svc.tokens.create(world.admin, other)["token"])
    ui.go(f"/ui/proposals/{c.proposal}")  # not its proposal: the same as absent
    assert "NOT_FOUND" in ui.text("[data-testid=error]")
    csrf = str(ui.find("input[name=csrf_token]").get_attribute("value"))
    ui.post_form(f"/ui/proposals/{c.proposal}/withdraw", {"csrf_token": csrf})
    assert "NOT_FOUND" in ui.text("[data-testid=error]")
    ui.post_form(f"/ui/proposals/{c.stale.proposal}/rebase", {"csrf_token": csrf})
    assert "NOT_FOUND" in ui.text("[data-testid=error]")
    ui.shot("24-other-agent-refused")
    assert world.svc.curation.proposal_show(world.curator, c.proposal)["status"] == "OPEN"
    assert world.svc.curation.proposal_show(world.curator, c.stale.proposal)["status"] == "OPEN"
    ui.sign_out()

    ui.sign_in(tokens[world.agent.principal_id])
    ui.go("/ui/queue")
    ui.find(f"a[href='/ui/proposals/{c.stale.proposal}']").click()
    labels = {b.text for b in ui.all("button")}
    assert not labels & {"Accept", "Reject"}  # an agent decides nothing
    assert {"Rebase onto the current head", "Withdraw"} <= labels
    ui.shot("25-agent-own-stale")
    ui.press("Rebase onto the current head")
    assert "rebased" in ui.text(".notice")
    assert ui.text("[data-testid=status]") == "OPEN"
    assert world.svc.curation.proposal_show(world.curator, c.stale.proposal)["status"] == "REBASED"

    ui.go(f"/ui/proposals/{c.proposal}")
    ui.fill("#withdraw-rationale", "typecheck belongs in phase 1")
    ui.press("Withdraw")
    assert ui.text("[data-testid=status]") == "WITHDRAWN"
    assert "Withdraw" not in {b.text for b in ui.all("button")}
    ui.shot("26-agent-withdrew")
    assert world.svc.curation.proposal_show(world.curator, c.proposal)["status"] == "WITHDRAWN"
