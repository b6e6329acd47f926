"""``/v1`` publishing: baselines, diff, promote / roll back, the published pointer."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from server.rest.bodies import CreateBaseline, PromoteRequest, RollbackRequest
from server.rest.deps import REPO, CallerDep, RepoDep, ServiceDep
from server.rest.errors import ERROR_RESPONSES
from server.rest.inputs import AsOf as AsOfParam
from server.rest.inputs import BaselineId
from service.results import (
    Baseline,
    BaselineDiff,
    BaselineRow,
    PointerMove,
    Published,
)

router = APIRouter(tags=["publishing"], responses=ERROR_RESPONSES)
JSON: dict[str, Any] = {"response_model_exclude_unset": True}
ALL_PINS = CreateBaseline()

Instant = Annotated[AsOfParam, Query(description="RFC 3339 instant with a zone, e.g. …Z.")]


@router.post(
    REPO + "/baselines",
    response_model=Baseline,
    status_code=201,
    operation_id="create_baseline",
    **JSON,
)
def create_baseline(
    repo: RepoDep, svc: ServiceDep, caller: CallerDep, body: CreateBaseline = ALL_PINS
) -> Any:
    """Cut a baseline (publisher): every canonical element at its head, or explicit pins."""
    return svc.publishing.create_baseline(caller, repo, body.name, body.pins)


@router.get(
    REPO + "/baselines",
    response_model=list[BaselineRow],
    operation_id="list_baselines",
    **JSON,
)
def list_baselines(repo: RepoDep, svc: ServiceDep, caller: CallerDep) -> Any:
    """Baselines of a repository, newest first."""
    return svc.publishing.list_baselines(caller, repo)


@router.get(
    "/baselines/{baseline_id}",
    response_model=Baseline,
    operation_id="baseline_show",
    **JSON,
)
def baseline_show(baseline_id: BaselineId, svc: ServiceDep, caller: CallerDep) -> Any:
    """A baseline with the pins you may read and whether it is published."""
    return svc.publishing.baseline_show(caller, baseline_id)


@router.get(
    "/baselines/{baseline_id}/diff/{other_baseline_id}",
    response_model=BaselineDiff,
    operation_id="baseline_diff",
    **JSON,
)
def baseline_diff(
    baseline_id: BaselineId, other_baseline_id: BaselineId, svc: ServiceDep, caller: CallerDep
) -> Any:
    """Versions added, changed and removed from the first baseline to the second, with diffs."""
    return svc.publishing.baseline_diff(caller, baseline_id, other_baseline_id)


@router.post(
    REPO + "/promote",
    response_model=PointerMove,
    operation_id="promote",
    **JSON,
)
def promote(repo: RepoDep, body: PromoteRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Move the repository's published pointer to a baseline (publisher)."""
    return svc.publishing.promote(
        caller, body.baseline_id, repo, body.reason, body.expected_baseline_id
    )


@router.post(
    REPO + "/rollback",
    response_model=PointerMove,
    operation_id="rollback",
    **JSON,
)
def rollback(repo: RepoDep, body: RollbackRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Publish an older baseline again (publisher); recorded like any promotion."""
    return svc.publishing.rollback(caller, repo, body.to, body.reason)


@router.get(
    REPO + "/published",
    response_model=Published,
    operation_id="published",
    **JSON,
)
def published(repo: RepoDep, svc: ServiceDep, caller: CallerDep, as_of: Instant = None) -> Any:
    """The published baseline now (or as recorded at as_of) and the pointer's moves until then."""
    return svc.publishing.published(caller, repo, as_of)
