"""The proposal lifecycle rules of docs/product.md §2: the head rule, acceptability, terminal
states."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import (
    FailedPrecondition,
    InvalidArgument,
    ProposalConflicted,
    StaleProposal,
)
from domain.model import (
    ChangeKind,
    Proposal,
    ProposalStatus,
    Provenance,
    SelectorKind,
    TargetSelector,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)
AGENT = Provenance("agent", "agent:planner-1")
V1, V2 = "ver_000000000001", "ver_000000000002"


def update(pinned: str | None = V1, **kw: object) -> Proposal:
    return Proposal(
        "prop_00000001",
        "acme/eng/platform",
        "el_0000000a",
        ChangeKind.UPDATE,
        "summary",
        AGENT,
        AT,
        target_element_id="el_0000000b",
        target_version_id=pinned,
        **kw,  # type: ignore[arg-type]
    )


def create() -> Proposal:
    return Proposal(
        "prop_00000002", "acme/eng/platform", "el_0000000c", ChangeKind.CREATE, "s", AGENT, AT
    )


def test_a_proposal_pinned_to_the_head_is_fresh_and_acceptable():
    p = update()
    assert not p.is_stale(V1)
    p.ensure_acceptable(V1)


def test_accepting_a_stale_proposal_is_refused_naming_the_current_head():
    p = update()
    with pytest.raises(StaleProposal) as err:
        p.ensure_acceptable(V2)
    assert V2 in err.value.message
    assert V1 in err.value.message
    assert err.value.details["current_head_version_id"] == V2
    assert err.value.details["target_version_id"] == V1
    assert err.value.code == "STALE_PROPOSAL"
    assert isinstance(err.value, FailedPrecondition)


@given(pinned=st.sampled_from([V1, V2, "ver_000000000003"]), head=st.sampled_from([V1, V2]))
def test_an_update_is_stale_exactly_when_its_pinned_version_is_not_the_head(pinned: str, head: str):
    assert update(pinned).is_stale(head) == (pinned != head)


@given(head=st.one_of(st.none(), st.sampled_from([V1, V2])))
def test_a_create_proposal_is_never_stale(head: str | None):
    assert not create().is_stale(head)


def test_an_update_proposal_without_a_pin_cannot_exist():
    with pytest.raises(InvalidArgument, match="pinned"):
        update(None)


def test_a_conflicted_proposal_cannot_be_accepted_even_when_fresh():
    p = update(has_conflicts=True)
    with pytest.raises(ProposalConflicted, match="revise"):
        p.ensure_acceptable(V1)


def test_staleness_is_reported_before_conflicts():
    p = update(has_conflicts=True)
    with pytest.raises(StaleProposal):
        p.ensure_acceptable(V2)


@pytest.mark.parametrize(
    "status",
    [
        ProposalStatus.ACCEPTED,
        ProposalStatus.REJECTED,
        ProposalStatus.REBASED,
        ProposalStatus.WITHDRAWN,
    ],
)
def test_terminal_proposals_cannot_be_accepted_or_closed_again(status: ProposalStatus):
    p = update()
    p.close(status, AT, "user:curator")
    assert p.status is status
    with pytest.raises(FailedPrecondition, match=status.value):
        p.ensure_acceptable(V1)
    with pytest.raises(FailedPrecondition):
        p.close(ProposalStatus.REJECTED, AT, "user:curator")


def test_closing_records_who_and_when():
    p = update()
    p.close(ProposalStatus.REJECTED, AT, "user:curator")
    assert (p.decided_at, p.decided_by) == (AT, "user:curator")


def test_a_proposal_cannot_be_closed_as_open():
    with pytest.raises(InvalidArgument):
        update().close(ProposalStatus.OPEN, AT, "user:curator")


def test_a_baseline_ref_selector_needs_a_baseline_and_published_takes_none():
    with pytest.raises(InvalidArgument, match="baseline_id"):
        TargetSelector(SelectorKind.BASELINE_REF)
    with pytest.raises(InvalidArgument, match="baseline_id"):
        TargetSelector(SelectorKind.PUBLISHED, "bl_00000001")
    assert TargetSelector().kind is SelectorKind.PUBLISHED
