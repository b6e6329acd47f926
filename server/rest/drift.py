"""``/v1`` drift and knowledge gaps (docs/drift.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from server.rest.bodies import DriftProposeRequest, DriftReviewRequest
from server.rest.deps import REPO, CallerDep, RepoDep, ServiceDep
from server.rest.errors import ERROR_RESPONSES
from server.rest.inputs import ElementId
from service.freshness.results import DriftList, DriftReviewed, GapsReport
from service.results import Proposal

router = APIRouter(tags=["drift"], responses=ERROR_RESPONSES)
JSON: dict[str, Any] = {"response_model_exclude_unset": True}
NO_NOTE = DriftReviewRequest()
CURRENT_BODY = DriftProposeRequest()
DRIFT = "/elements/{element_id}/drift/{evidence_element_id}"

Topic = Annotated[
    str | None,
    Query(max_length=200, description="Count only elements mentioning every word."),
]


@router.get(REPO + "/drift", response_model=DriftList, operation_id="drift_list", **JSON)
def drift_list(repo: RepoDep, svc: ServiceDep, caller: CallerDep) -> Any:
    """Curated pages citing evidence that moved since the pinned version, with the diff."""
    return svc.drift.drift_list(caller, repo)


@router.post(
    DRIFT + "/review",
    response_model=DriftReviewed,
    status_code=201,
    operation_id="drift_review",
    **JSON,
)
def drift_review(
    element_id: ElementId,
    evidence_element_id: ElementId,
    svc: ServiceDep,
    caller: CallerDep,
    body: DriftReviewRequest = NO_NOTE,
) -> Any:
    """Mark a drift reviewed (curator); it returns when the evidence moves again."""
    return svc.drift.drift_review(
        caller,
        element_id,
        evidence_element_id,
        evidence_version_id=body.evidence_version_id,
        note=body.note,
    )


@router.post(
    DRIFT + "/propose",
    response_model=Proposal,
    status_code=201,
    operation_id="drift_propose",
    **JSON,
)
def drift_propose(
    element_id: ElementId,
    evidence_element_id: ElementId,
    svc: ServiceDep,
    caller: CallerDep,
    body: DriftProposeRequest = CURRENT_BODY,
) -> Any:
    """Open an UPDATE proposal on a drifted page citing the evidence's new version."""
    return svc.drift.drift_propose(
        caller, element_id, evidence_element_id, body=body.body, summary=body.summary
    )


@router.get(REPO + "/gaps", response_model=GapsReport, operation_id="gaps", **JSON)
def gaps(repo: RepoDep, svc: ServiceDep, caller: CallerDep, topic: Topic = None) -> Any:
    """Counts and dates of what the repository holds (on a topic): curated vs evidence,
    superseded, newest times, drifted pages, questions without a curated answer."""
    return svc.gaps.gaps(caller, repo, topic)
