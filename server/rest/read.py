"""``/v1/context``: read_context (docs/product.md §4), citation verification and replay.

The request body is the service's own ``ReadRequest`` model, so REST documents and validates
exactly what the service accepts.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from server.rest.bodies import ReplayRequest, VerifyCitationsRequest
from server.rest.deps import CallerDep, ServiceDep
from server.rest.errors import ERROR_RESPONSES
from server.rest.inputs import ContextId
from service.reading.request import ReadRequest
from service.reading.results import CitationsVerified, ReadContext, Replay

router = APIRouter(tags=["read"], responses=ERROR_RESPONSES)
JSON: dict[str, Any] = {"response_model_exclude_unset": True}
NOW = ReplayRequest()


@router.post("/context", response_model=ReadContext, operation_id="read_context", **JSON)
def read_context(body: ReadRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Permission-trimmed, version-pinned context for an agent, stored under ``context_id``.

    ``principal`` in the body can only narrow the authenticated caller: its ``principal_id``
    can only be yours (any other is 400 naming ``principal.principal_id``; act for someone else
    with ``on_behalf_of`` and a delegation grant). Give exactly one of ``query``,
    ``element_ids`` or ``version_ids``.
    """
    return svc.reading.read_context(caller, body)


@router.post(
    "/context/{context_id}/verify-citations",
    response_model=CitationsVerified,
    operation_id="verify_citations",
    **JSON,
)
def verify_citations(
    context_id: ContextId, body: VerifyCitationsRequest, svc: ServiceDep, caller: CallerDep
) -> Any:
    """Which citations point into what that context returned (its reader or an auditor)."""
    return svc.reading.verify_citations(caller, context_id, body.citations)


@router.post("/context/{context_id}/replay", response_model=Replay, operation_id="replay", **JSON)
def replay(
    context_id: ContextId, svc: ServiceDep, caller: CallerDep, body: ReplayRequest = NOW
) -> Any:
    """Re-run a stored read as its reader and report what differs (its reader or an auditor)."""
    return svc.reading.replay(caller, context_id, as_recorded=body.as_recorded)
