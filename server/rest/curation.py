"""``/v1`` curation: propose, the queue, accept / reject / rebase / withdraw, revise."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from server.rest.bodies import (
    AcceptRequest,
    ProposeRequest,
    RationaleRequest,
    RejectRequest,
    ReviseRequest,
)
from server.rest.deps import REPO, CallerDep, RepoDep, ServiceDep, drop_none
from server.rest.errors import ERROR_RESPONSES
from server.rest.inputs import (
    ElementIdParam,
    PrincipalParam,
    ProposalId,
    ProposalIdParam,
    ProposalStatusParam,
    QueueOrder,
    QueueOrderParam,
    Since,
    identifier,
)
from service.governance.queue import MAX_LIMIT, QueueFilter
from service.results import AcceptPreview, Proposal

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
    return svc.curation.propose(caller, repo, **drop_none(body.model_dump()))


PAGE_HEADERS = {
    "X-Next-Cursor": {
        "description": "The cursor of the next page (pass it as `cursor`); absent on the last.",
        "schema": identifier("prop", "proposal"),
    },
    "Link": {
        "description": 'RFC 8288 `<…>; rel="next"`: this request continued at the next page.',
        "schema": {"type": "string"},
    },
}


_SAME_REPO = {p: f"$request.path.{p}" for p in ("tenant", "org", "repo")}
NEXT = {
    "NextPage": {
        "operationId": "proposal_list",
        "description": "The next page: the same request with `cursor` = `X-Next-Cursor`.",
        "parameters": {
            **_SAME_REPO,
            "limit": "$request.query.limit",
            "cursor": "$response.header.X-Next-Cursor",
        },
    }
}


@router.get(
    REPO + "/proposals",
    response_model=list[Proposal],
    operation_id="proposal_list",
    responses={
        200: {"description": "One page of the queue.", "headers": PAGE_HEADERS, "links": NEXT}
    },
    **JSON,
)
def proposal_list(
    repo: RepoDep,
    svc: ServiceDep,
    caller: CallerDep,
    request: Request,
    response: Response,
    status: Annotated[
        ProposalStatusParam,
        Query(description="OPEN, ACCEPTED, REJECTED, REBASED or WITHDRAWN (default: all)."),
    ] = None,
    element_id: Annotated[ElementIdParam, Query(description="Only proposals for it.")] = None,
    proposer: Annotated[PrincipalParam, Query(description="Only proposals by them.")] = None,
    stale: Annotated[
        bool | None, Query(description="Only stale (true) or only fresh (false) proposals.")
    ] = None,
    conflicts: Annotated[
        bool | None, Query(description="Only with (true) or without (false) merge conflicts.")
    ] = None,
    since: Annotated[Since, Query(description="Only proposals opened since this instant.")] = None,
    order: Annotated[
        QueueOrderParam, Query(description="oldest (default) or newest first; ties by id.")
    ] = None,
    limit: Annotated[
        int | None,
        Query(ge=1, le=MAX_LIMIT, description=f"A page of at most this many (1-{MAX_LIMIT})."),
    ] = None,
    cursor: Annotated[
        ProposalIdParam, Query(description="Continue after this proposal: a page's X-Next-Cursor.")
    ] = None,
) -> Any:
    """The queue: every proposal for curators, your own for agents (bodies omitted), filtered
    like the CLI and console, in a stable order (opened at, then id).

    With ``limit`` a page: while more follow, ``X-Next-Cursor`` and ``Link: <…>; rel="next"``
    say how to continue; proposals opened meanwhile appear at the end of an oldest-first walk.
    """
    queue = QueueFilter(
        element_id=element_id,
        proposer=proposer,
        stale=stale,
        conflicts=conflicts,
        since=since,
        limit=limit,
        cursor=cursor,
        newest_first=order == QueueOrder.NEWEST,
    )
    out = svc.curation.proposal_page(caller, repo, status, queue)
    nxt = out.next_cursor
    if nxt:
        response.headers["X-Next-Cursor"] = nxt
        response.headers["Link"] = f'<{request.url.include_query_params(cursor=nxt)}>; rel="next"'
    return out.proposals


@router.get(
    "/proposals/{proposal_id}", response_model=Proposal, operation_id="proposal_show", **JSON
)
def proposal_show(proposal_id: ProposalId, svc: ServiceDep, caller: CallerDep) -> Any:
    """A proposal with its staleness, the current head, the selected version and the diff."""
    return svc.curation.proposal_show(caller, proposal_id)


@router.get(
    "/proposals/{proposal_id}/accept-preview",
    response_model=AcceptPreview,
    operation_id="accept_preview",
    **JSON,
)
def accept_preview(proposal_id: ProposalId, svc: ServiceDep, caller: CallerDep) -> Any:
    """What accepting would do, changing nothing (``ameide accept --dry-run``): would it be
    accepted, else the refusal it would give; which head moves; the version to accept."""
    return svc.review.accept_preview(caller, proposal_id)


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
    return svc.review.accept(caller, proposal_id, body.rationale, body.expected_version_id)


@router.post(
    "/proposals/{proposal_id}/reject", response_model=Proposal, operation_id="reject", **JSON
)
def reject(proposal_id: ProposalId, body: RejectRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Reject a proposal with a rationale (curator)."""
    return svc.review.reject(caller, proposal_id, body.rationale)


@router.post(
    "/proposals/{proposal_id}/rebase", response_model=Proposal, operation_id="rebase", **JSON
)
def rebase(proposal_id: ProposalId, svc: ServiceDep, caller: CallerDep) -> Any:
    """Rebase a stale proposal onto the current head: a new OPEN proposal, the old one REBASED."""
    return svc.review.rebase(caller, proposal_id)


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
    return svc.review.withdraw(caller, proposal_id, body.rationale)


@router.post(
    "/proposals/{proposal_id}/revise", response_model=Proposal, operation_id="revise", **JSON
)
def revise(proposal_id: ProposalId, body: ReviseRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Replace the body of an OPEN proposal (its proposer or a curator), e.g. to clear conflicts."""
    return svc.curation.revise(caller, proposal_id, body.body, body.summary, body.title)
