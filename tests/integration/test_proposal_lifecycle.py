"""Idempotent proposing, withdrawing by the proposer only, rejecting with a rationale."""

from __future__ import annotations

import pytest

from domain.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from domain.model import DECISION_TYPE, REJECTED_BECAUSE
from service.authz import Caller
from tests.conftest import World

BODY = "# Testing SOP\n\nRun it twice.\n"


def open_proposal(w: World, caller: Caller | None = None, **kw: object) -> dict:
    el, v1 = kw.pop("target", None) or w.canonical()  # type: ignore[misc]
    return w.svc.curation.propose(
        caller or w.agent,
        w.repo,
        body=kw.pop("body", BODY),
        summary=kw.pop("summary", "twice"),
        element_id=el,
        target_version_id=v1,
        **kw,
    )


def test_repeating_a_proposal_with_the_same_client_request_id_returns_the_original(
    any_world: World,
):
    w = any_world
    target = w.canonical()
    first = open_proposal(w, target=target, client_request_id="req-1")
    again = open_proposal(w, target=target, client_request_id="req-1")
    assert first["replay"] is False
    assert again["replay"] is True
    assert again["proposal_id"] == first["proposal_id"]
    assert again["client_request_id"] == "req-1"
    assert len(w.svc.curation.proposal_list(w.curator, w.repo)) == 1
    opened = [
        e for e in w.svc.history.history(w.auditor, w.repo) if e["event_type"] == "proposal.opened"
    ]
    assert len(opened) == 1


def test_a_different_request_reusing_a_client_request_id_is_refused(any_world: World):
    w = any_world
    target = w.canonical()
    open_proposal(w, target=target, client_request_id="req-2")
    with pytest.raises(AlreadyExists, match="client_request_id") as err:
        open_proposal(w, target=target, client_request_id="req-2", body=BODY + "changed\n")
    assert err.value.details["client_request_id"] == "req-2"
    assert len(w.svc.curation.proposal_list(w.curator, w.repo)) == 1


def test_client_request_ids_are_scoped_to_the_principal(any_world: World):
    w = any_world
    target = w.canonical()
    w.svc.admin.grant(w.admin, "agent:second", "agent", w.repo)
    mine = open_proposal(w, target=target, client_request_id="req-3")
    theirs = open_proposal(w, Caller("agent:second"), target=target, client_request_id="req-3")
    assert theirs["replay"] is False
    assert theirs["proposal_id"] != mine["proposal_id"]


def test_the_proposer_can_withdraw_their_own_open_proposal(any_world: World):
    w = any_world
    p = open_proposal(w)
    out = w.svc.review.withdraw(w.agent, p["proposal_id"], rationale="no longer needed")
    assert out["status"] == "WITHDRAWN"
    assert out["decided_by"] == w.agent.principal_id
    decision = w.svc.elements.get_element(w.curator, out["decision_element_id"])
    assert decision["element"]["type_key"] == DECISION_TYPE
    with pytest.raises(FailedPrecondition, match="WITHDRAWN"):
        w.svc.review.withdraw(w.agent, p["proposal_id"])


def test_nobody_but_the_proposer_can_withdraw_a_proposal(any_world: World):
    w = any_world
    p = open_proposal(w)
    w.svc.admin.grant(w.admin, "agent:other", "agent", w.repo)
    with pytest.raises(PermissionDenied, match="only the proposer"):
        w.svc.review.withdraw(w.curator, p["proposal_id"])
    with pytest.raises(PermissionDenied, match="only the proposer"):
        w.svc.review.withdraw(w.admin, p["proposal_id"])
    # Another agent cannot even see someone else's proposal.
    with pytest.raises(NotFound):
        w.svc.review.withdraw(Caller("agent:other"), p["proposal_id"])
    assert w.svc.curation.proposal_show(w.curator, p["proposal_id"])["status"] == "OPEN"


@pytest.mark.parametrize("rationale", ["", "   ", None])
def test_rejecting_without_a_rationale_is_refused_and_changes_nothing(
    any_world: World, rationale: str | None
):
    w = any_world
    p = open_proposal(w)
    with pytest.raises(InvalidArgument, match="rationale is required"):
        w.svc.review.reject(w.curator, p["proposal_id"], rationale)  # type: ignore[arg-type]
    assert w.svc.curation.proposal_show(w.curator, p["proposal_id"])["status"] == "OPEN"


def test_rejecting_links_the_proposal_to_its_decision_by_rejected_because(any_world: World):
    w = any_world
    p = open_proposal(w)
    out = w.svc.review.reject(w.curator, p["proposal_id"], "duplicates the existing SOP")
    assert out["status"] == "REJECTED"
    decision = w.svc.elements.get_element(w.curator, out["decision_element_id"])
    assert decision["element"]["type_key"] == DECISION_TYPE
    assert decision["element"]["source_kind"] == "DECISION"
    assert "duplicates the existing SOP" in decision["version"]["body"]
    links = [
        r
        for r in w.svc.elements.list_relationships(w.curator, p["proposal_element_id"])
        if r["type_key"] == REJECTED_BECAUSE
    ]
    assert [(r["source_element_id"], r["target_element_id"]) for r in links] == [
        (p["proposal_element_id"], out["decision_element_id"])
    ]
    assert links[0]["metadata"]["target_version_id"] == decision["version"]["version_id"]
    event = [
        e
        for e in w.svc.history.history(w.auditor, w.repo)
        if e["event_type"] == "proposal.rejected"
    ]
    assert event[0]["payload"]["rationale"] == "duplicates the existing SOP"


def test_an_agent_sees_only_its_own_proposals_in_the_queue(any_world: World):
    w = any_world
    target = w.canonical()
    w.svc.admin.grant(w.admin, "agent:other", "agent", w.repo)
    mine = open_proposal(w, target=target)
    open_proposal(w, Caller("agent:other"), target=target)
    assert [p["proposal_id"] for p in w.svc.curation.proposal_list(w.agent, w.repo)] == [
        mine["proposal_id"]
    ]
    assert len(w.svc.curation.proposal_list(w.curator, w.repo)) == 2


def test_a_create_request_differing_only_in_classification_is_not_a_replay(any_world: World):
    w = any_world

    def create(classification: str) -> dict:
        return w.svc.curation.propose(
            w.agent,
            w.repo,
            change_kind="CREATE",
            title="Runbook",
            body="# Runbook\n",
            summary="new",
            classification=classification,
            client_request_id="create-1",
        )

    first = create("internal")
    assert create("internal")["replay"] is True
    with pytest.raises(AlreadyExists, match="client_request_id"):
        create("public")
    assert [p["proposal_id"] for p in w.svc.curation.proposal_list(w.curator, w.repo)] == [
        first["proposal_id"]
    ]
