"""The governed write path of the service against the in-memory store (``tests.fakes``): no
database, no index — the use cases' own rules, in milliseconds."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from domain.errors import Conflict, ProposalConflicted, StaleProposal
from domain.model import ProposalStatus
from runtime.compose import compose
from service.app import MemoryService
from service.authz import Caller
from service.clock import Clock
from tests.fakes import FakeDatabase, FakeState

REPO = "acme/eng/platform"
ADMIN = Caller("user:admin", purpose="test setup")
CURATOR = Caller("user:curator", purpose="curate")
AGENT = Caller("agent:planner", purpose="propose")
SOP_V1 = "# Testing SOP\n\nRun phase 0.\n"
SOP_V2 = "# Testing SOP\n\nRun phase 0, then phase 1.\n"


@dataclass
class Home:
    db: FakeDatabase
    svc: MemoryService
    element_id: str
    v1: str


@pytest.fixture
def home() -> Home:
    """A repository with a curator, an agent and one canonical element, in memory."""
    db = FakeDatabase()
    svc, _ = compose(db.uow, Clock())
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    svc.admin.create_repository(ADMIN, REPO)
    svc.admin.grant(ADMIN, CURATOR.principal_id, "curator", REPO)
    svc.admin.grant(ADMIN, AGENT.principal_id, "agent", REPO)
    out = svc.elements.create_element(CURATOR, REPO, title="Testing SOP", body=SOP_V1)
    return Home(db, svc, out["element"]["element_id"], out["version"]["version_id"])


def test_an_accepted_proposal_moves_the_head_and_is_audited(home: Home) -> None:
    opened = home.svc.curation.propose(
        AGENT,
        REPO,
        body=SOP_V2,
        summary="add phase 1",
        element_id=home.element_id,
        target_version_id=home.v1,
    )
    assert (opened["status"], opened["target_version_id"]) == ("OPEN", home.v1)

    accepted = home.svc.review.accept(
        CURATOR, opened["proposal_id"], rationale="matches the runbook"
    )

    shown = home.svc.elements.get_element(CURATOR, home.element_id)
    assert shown["element"]["head_version_id"] == accepted["result_version_id"]
    assert (shown["version"]["seq"], shown["version"]["body"]) == (2, SOP_V2)
    assert shown["version"]["parent_version_id"] == home.v1
    events = [e.event_type for e in home.db.events if e.proposal_id == opened["proposal_id"]]
    assert events[0] == "proposal.opened"
    assert "proposal.accepted" in events


def test_accepting_a_proposal_that_loses_the_race_for_the_head_is_refused_and_writes_nothing(
    home: Home,
) -> None:
    opened = home.svc.curation.propose(
        AGENT,
        REPO,
        body=SOP_V2,
        summary="add phase 1",
        element_id=home.element_id,
        target_version_id=home.v1,
    )
    committed = home.db.commits

    def concurrent_writer(state: FakeState, element_id: str) -> None:
        # Another transaction moved the head between the accept's read and its compare-and-swap.
        if element_id == home.element_id:
            state.elements[element_id].head_version_id = "ver_" + "0" * 24

    home.db.before_cas = concurrent_writer
    with pytest.raises(StaleProposal) as lost:
        home.svc.review.accept(CURATOR, opened["proposal_id"])
    home.db.before_cas = None

    assert lost.value.details["current_head_version_id"] == "ver_" + "0" * 24
    assert home.db.commits == committed
    assert home.db.state.elements[home.element_id].head_version_id == home.v1
    assert home.db.state.proposals[opened["proposal_id"]].status is ProposalStatus.OPEN


def _propose(home: Home, body: str, summary: str) -> dict[str, object]:
    return home.svc.curation.propose(
        AGENT,
        REPO,
        body=body,
        summary=summary,
        element_id=home.element_id,
        target_version_id=home.v1,
    )


def test_rebasing_a_stale_proposal_over_a_conflicting_change_marks_the_conflict(home: Home) -> None:
    first = _propose(home, "# Testing SOP\n\nRun phase 0, then phase 1.\n", "phase 1")
    second = _propose(home, "# Testing SOP\n\nRun phase 0 twice.\n", "twice")
    home.svc.review.accept(CURATOR, str(first["proposal_id"]))
    assert home.svc.curation.proposal_show(AGENT, str(second["proposal_id"]))["stale"] is True

    rebased = home.svc.review.rebase(AGENT, str(second["proposal_id"]))

    assert rebased["has_conflicts"] is True
    assert rebased["rebased_from"] == second["proposal_id"]
    assert "<<<<<<<" in str(rebased["body"])
    old = home.db.state.proposals[str(second["proposal_id"])]
    assert (old.status, old.rebased_to) == (ProposalStatus.REBASED, rebased["proposal_id"])
    kinds = [e.event_type for e in home.db.events if e.proposal_id == second["proposal_id"]]
    assert kinds[-1] == "proposal.rebased"
    with pytest.raises(ProposalConflicted):
        home.svc.review.accept(CURATOR, str(rebased["proposal_id"]))


def test_a_promotion_that_loses_the_race_for_the_published_pointer_changes_nothing(
    home: Home,
) -> None:
    publisher = Caller("user:publisher", purpose="publish")
    home.svc.admin.grant(ADMIN, publisher.principal_id, "publisher", REPO)
    first = home.svc.publishing.create_baseline(publisher, REPO)["baseline_id"]
    second = home.svc.publishing.create_baseline(publisher, REPO)["baseline_id"]
    home.svc.publishing.promote(publisher, first, REPO)
    committed = home.db.commits

    def concurrent_promotion(state: FakeState, key: str) -> None:
        if key == REPO:  # another publisher moved the pointer after this one read it
            published, revision = state.pointers[key]
            state.pointers[key] = (published, revision + 1)

    home.db.before_cas = concurrent_promotion
    with pytest.raises(Conflict, match="another promotion"):
        home.svc.publishing.promote(publisher, second, REPO)
    home.db.before_cas = None

    assert home.db.commits == committed
    assert home.db.state.pointers[REPO][0] == first
    with pytest.raises(Conflict, match="not "):  # what the caller saw is no longer published
        home.svc.publishing.promote(publisher, second, REPO, expected_baseline_id=second)
    assert (
        home.svc.publishing.promote(publisher, second, REPO, expected_baseline_id=first)["to"]
        == second
    )
