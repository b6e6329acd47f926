"""``/v1`` auditing: repository history, the access log, hash-chain verification."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from server.rest_deps import REPO, CallerDep, RepoDep, ServiceDep
from server.rest_errors import ERROR_RESPONSES
from server.rest_types import ElementIdParam, PrincipalParam, Since, Until
from service.history import MAX_HISTORY
from service.results import AccessRow, AuditEvent, AuditVerdict

router = APIRouter(tags=["audit"], responses=ERROR_RESPONSES)
JSON: dict[str, Any] = {"response_model_exclude_unset": True}

SinceParam = Annotated[Since, Query(description="RFC 3339 instant with a zone, e.g. …Z.")]
UntilParam = Annotated[Until, Query(description="RFC 3339 instant with a zone, e.g. …Z.")]
Limit = Annotated[
    int, Query(ge=1, le=MAX_HISTORY, description=f"At most this many rows (1-{MAX_HISTORY}).")
]


@router.get(
    REPO + "/history",
    response_model=list[AuditEvent],
    operation_id="history",
    **JSON,
)
def history(
    repo: RepoDep,
    svc: ServiceDep,
    caller: CallerDep,
    since: SinceParam = None,
    until: UntilParam = None,
    element_id: Annotated[ElementIdParam, Query(description="Only events about it.")] = None,
    actor: Annotated[PrincipalParam, Query(description="Only events by this principal.")] = None,
    limit: Limit = 1000,
) -> Any:
    """Audit events of a repository, oldest first (the newest ``limit``)."""
    return svc.history(
        caller, repo, since=since, until=until, element_id=element_id, actor=actor, limit=limit
    )


@router.get(
    REPO + "/access-log",
    response_model=list[AccessRow],
    operation_id="access_log",
    **JSON,
)
def access_log(repo: RepoDep, svc: ServiceDep, caller: CallerDep, limit: Limit = 1000) -> Any:
    """Who read what, on behalf of whom and why (auditor), newest first."""
    return svc.access_log(caller, repo, limit)


@router.get(
    REPO + "/audit/verify",
    response_model=AuditVerdict,
    operation_id="verify_audit",
    **JSON,
)
def verify_audit(repo: RepoDep, svc: ServiceDep, caller: CallerDep) -> Any:
    """Check a repository's hash chain; ``ok: false`` names the first broken event."""
    return svc.verify_audit(caller, repo)


@router.get(
    "/audit/verify",
    response_model=AuditVerdict,
    operation_id="verify_global_audit",
    **JSON,
)
def verify_global_audit(svc: ServiceDep, caller: CallerDep) -> Any:
    """Check the global chain (grants above repositories, tokens)."""
    return svc.verify_audit(caller, None)
