"""``/v1`` curation: propose, the queue, accept / reject / rebase / withdraw, revise."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from server.rest_deps import REPO, CallerDep, RepoDep, ServiceDep, drop_none
from server.rest_errors import ERROR_RESPONSES
from server.rest_requests import (
    AcceptRequest,
    ProposeRequest,
    RationaleRequest,
    RejectRequest,
    ReviseRequest,
)
from server.rest_types import ProposalId, ProposalStatusParam
from service.results import Proposal

router = APIRouter(tags=["curation"], responses=ERROR_RESPONSES)
JSON: dict[str, Any] = {"response_model_exclude_unset": True}
NO_RATIONALE = RationaleRequest()
NO_ACCEPT_BODY = AcceptRequest()


@router.post(
    REPO + "/proposals", response_model=Proposal, status_code=201, operation_id="propose", **JSON
)
def propose(repo: RepoDep, body: ProposeRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Open a proposal: an UPDATE pinned to target_version_id, or a CREATE.

    With ``client_request_id`` a repeat returns the original proposal with ``replay: true``.
    """
    return svc.propose(caller, repo, **drop_none(body.model_dump()))


@router.get(
    REPO + "/proposals", response_model=list[Proposal], operation_id="proposal_list", **JSON
)
def proposal_list(
    repo: RepoDep,
    svc: ServiceDep,
    caller: CallerDep,
    status: Annotated[
        ProposalStatusParam,
        Query(description="OPEN, ACCEPTED, REJECTED, REBASED or WITHDRAWN (default: all)."),
    ] = None,
) -> Any:
    """The queue: every proposal for curators, your own for agents (bodies omitted)."""
    return svc.proposal_list(caller, repo, status)


@router.get(
    "/proposals/{proposal_id}", response_model=Proposal, operation_id="proposal_show", **JSON
)
def proposal_show(proposal_id: ProposalId, svc: ServiceDep, caller: CallerDep) -> Any:
    """A proposal with its staleness, the current head, the selected version and the diff."""
    return svc.proposal_show(caller, proposal_id)


@router.post(
    "/proposals/{proposal_id}/accept", response_model=Proposal, operation_id="accept", **JSON
)
def accept(
    proposal_id: ProposalId,
    svc: ServiceDep,
    caller: CallerDep,
    body: AcceptRequest = NO_ACCEPT_BODY,
) -> Any:
    """Accept a fresh, clean, OPEN proposal (curator); a stale one is refused (412), and one
    revised after the ``expected_version_id`` you reviewed is refused (409)."""
    return svc.accept(caller, proposal_id, body.rationale, body.expected_version_id)


@router.post(
    "/proposals/{proposal_id}/reject", response_model=Proposal, operation_id="reject", **JSON
)
def reject(proposal_id: ProposalId, body: RejectRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Reject a proposal with a rationale (curator)."""
    return svc.reject(caller, proposal_id, body.rationale)


@router.post(
    "/proposals/{proposal_id}/rebase", response_model=Proposal, operation_id="rebase", **JSON
)
def rebase(proposal_id: ProposalId, svc: ServiceDep, caller: CallerDep) -> Any:
    """Rebase a stale proposal onto the current head: a new OPEN proposal, the old one REBASED."""
    return svc.rebase(caller, proposal_id)


@router.post(
    "/proposals/{proposal_id}/withdraw", response_model=Proposal, operation_id="withdraw", **JSON
)
def withdraw(
    proposal_id: ProposalId,
    svc: ServiceDep,
    caller: CallerDep,
    body: RationaleRequest = NO_RATIONALE,
) -> Any:
    """Withdraw your own OPEN proposal."""
    return svc.withdraw(caller, proposal_id, body.rationale)


@router.post(
    "/proposals/{proposal_id}/revise", response_model=Proposal, operation_id="revise", **JSON
)
def revise(proposal_id: ProposalId, body: ReviseRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Replace the body of an OPEN proposal (its proposer or a curator), e.g. to clear conflicts."""
    return svc.revise(caller, proposal_id, body.body, body.summary, body.title)
