"""The proposal state transitions the curation use cases call: accepted_as, rebased_onto."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.errors import FailedPrecondition
from domain.model import (
    ChangeKind,
    ElementVersion,
    Proposal,
    ProposalStatus,
    Provenance,
    SelectorKind,
    TargetSelector,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)
LATER = AT + timedelta(minutes=5)
AGENT = Provenance("agent", "agent:planner-1")
V1, V2 = "ver_000000000001", "ver_000000000002"


def update(**kw: object) -> Proposal:
    return Proposal(
        "prop_00000001",
        "acme/eng/platform",
        "el_0000000a",
        ChangeKind.UPDATE,
        "tighten the runbook",
        AGENT,
        AT,
        TargetSelector(SelectorKind.BASELINE_REF, "bl_0000001"),
        target_element_id="el_0000000b",
        target_version_id=V1,
        **kw,  # type: ignore[arg-type]
    )


def create() -> Proposal:
    return Proposal(
        "prop_00000002",
        "acme/eng/platform",
        "el_0000000c",
        ChangeKind.CREATE,
        "new page",
        AGENT,
        AT,
    )


def version_of(element_id: str) -> ElementVersion:
    return ElementVersion(
        "ver_000000000009", element_id, 2, V1, "T", "# T\n", {}, "sha", LATER, AGENT
    )


def test_accepting_records_the_result_and_closes_the_proposal() -> None:
    p = update()
    p.accepted_as(version_of("el_0000000b"), LATER, "user:curator")
    assert p.status is ProposalStatus.ACCEPTED
    assert (p.decided_at, p.decided_by) == (LATER, "user:curator")
    assert p.result_version_id == "ver_000000000009"
    assert p.is_stale("ver_999") is False  # decided proposals are never stale


def test_accepting_a_create_makes_the_new_element_its_target() -> None:
    p = create()
    p.accepted_as(version_of("el_0000000n"), LATER, "user:curator")
    assert p.target_element_id == "el_0000000n"


def test_a_decided_proposal_cannot_be_accepted_again() -> None:
    p = update()
    p.accepted_as(version_of("el_0000000b"), LATER, "user:curator")
    with pytest.raises(FailedPrecondition, match="ACCEPTED, not OPEN"):
        p.accepted_as(version_of("el_0000000b"), LATER, "user:curator")


def test_rebasing_closes_the_old_and_opens_a_successor_on_the_head() -> None:
    old = update()
    new = old.rebased_onto(V2, at=LATER, by="user:curator", has_conflicts=True)
    assert old.status is ProposalStatus.REBASED
    assert old.rebased_to == new.proposal_id
    assert (old.decided_at, old.decided_by) == (LATER, "user:curator")
    assert new.status is ProposalStatus.OPEN
    assert new.proposal_id != old.proposal_id
    assert new.element_id != old.element_id
    assert (new.target_element_id, new.target_version_id) == ("el_0000000b", V2)
    assert new.rebased_from == old.proposal_id
    assert new.has_conflicts is True
    assert (new.summary, new.proposed_by, new.target_selector) == (
        old.summary,
        old.proposed_by,
        old.target_selector,
    )
    assert new.created_at == LATER


def test_a_fresh_proposal_is_not_rebased() -> None:
    old = update()
    with pytest.raises(FailedPrecondition, match="already on the current head"):
        old.rebased_onto(V1, at=LATER, by="user:curator", has_conflicts=False)
    assert old.status is ProposalStatus.OPEN


def test_only_open_updates_are_rebased() -> None:
    with pytest.raises(FailedPrecondition, match="only UPDATE"):
        create().ensure_rebasable(V2)
    closed = update()
    closed.close(ProposalStatus.WITHDRAWN, LATER, "agent:planner-1")
    with pytest.raises(FailedPrecondition, match="WITHDRAWN, not OPEN"):
        closed.ensure_rebasable(V2)
