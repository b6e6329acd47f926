"""``/v1`` auditing: repository history, the access log, hash-chain verification."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from server.rest.deps import REPO, CallerDep, RepoDep, ServiceDep
from server.rest.errors import ERROR_RESPONSES
from server.rest.inputs import ElementIdParam, PrincipalParam, Since, Until
from service.audit.history import MAX_HISTORY
from service.results import AccessRow, AuditEvent, AuditVerdict

router = APIRouter(tags=["audit"], responses=ERROR_RESPONSES)
JSON: dict[str, Any] = {"response_model_exclude_unset": True}

SinceParam = Annotated[Since, Query(description="RFC 3339 instant with a zone, e.g. …Z.")]
UntilParam = Annotated[Until, Query(description="RFC 3339 instant with a zone, e.g. …Z.")]
Limit = Annotated[
    int, Query(ge=1, le=MAX_HISTORY, description=f"At most this many rows (1-{MAX_HISTORY}).")
]


HISTORY_HEADERS = {
    "X-Prev-Cursor": {
        "description": "Older events match: pass this as `before` for the page before.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "X-Next-Cursor": {
        "description": "Newer events match: pass this as `after` for the page after.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "Link": {
        "description": 'RFC 8288 `<…>; rel="prev"` and / or `<…>; rel="next"`: this request, '
        "continued at the older or the newer page.",
        "schema": {"type": "string"},
    },
}
Cursor = Annotated[int | None, Query(ge=0, le=2**62)]
_SAME = {p: f"$request.path.{p}" for p in ("tenant", "org", "repo")} | {
    "limit": "$request.query.limit"
}
LINKS = {
    "OlderPage": {
        "operationId": "history",
        "description": "The page before: the same request with `before` = `X-Prev-Cursor`.",
        "parameters": {**_SAME, "before": "$response.header.X-Prev-Cursor"},
    },
    "NewerPage": {
        "operationId": "history",
        "description": "The page after: the same request with `after` = `X-Next-Cursor`.",
        "parameters": {**_SAME, "after": "$response.header.X-Next-Cursor"},
    },
}


@router.get(
    REPO + "/history",
    response_model=list[AuditEvent],
    operation_id="history",
    responses={
        200: {"description": "One page of events.", "headers": HISTORY_HEADERS, "links": LINKS}
    },
    **JSON,
)
def history(
    repo: RepoDep,
    svc: ServiceDep,
    caller: CallerDep,
    request: Request,
    response: Response,
    since: SinceParam = None,
    until: UntilParam = None,
    element_id: Annotated[ElementIdParam, Query(description="Only events about it.")] = None,
    actor: Annotated[PrincipalParam, Query(description="Only events by this principal.")] = None,
    limit: Limit = 1000,
    before: Annotated[
        Cursor, Query(description="The newest `limit` events before this chain position.")
    ] = None,
    after: Annotated[
        Cursor, Query(description="The oldest `limit` events after this chain position.")
    ] = None,
) -> Any:
    """Audit events of a repository, oldest first: the newest ``limit``, or a page before /
    after a chain position; ``X-Prev-Cursor`` / ``X-Next-Cursor`` and ``Link`` (``rel="prev"``,
    ``rel="next"``) lead to the older and the newer page while there is one."""
    out = svc.history.history_page(
        caller,
        repo,
        since=since,
        until=until,
        element_id=element_id,
        actor=actor,
        limit=limit,
        before=before,
        after=after,
    )
    links = []
    for rel, cursor, header, param, other in (
        ("prev", out.prev_cursor, "X-Prev-Cursor", "before", "after"),
        ("next", out.next_cursor, "X-Next-Cursor", "after", "before"),
    ):
        if cursor is not None:
            response.headers[header] = str(cursor)
            url = request.url.remove_query_params(other).include_query_params(**{param: cursor})
            links.append(f'<{url}>; rel="{rel}"')
    if links:
        response.headers["Link"] = ", ".join(links)
    return out.events


@router.get(
    REPO + "/access-log",
    response_model=list[AccessRow],
    operation_id="access_log",
    **JSON,
)
def access_log(repo: RepoDep, svc: ServiceDep, caller: CallerDep, limit: Limit = 1000) -> Any:
    """Who read what, on behalf of whom and why (auditor), newest first."""
    return svc.history.access_log(caller, repo, limit)


@router.get(
    REPO + "/audit/verify",
    response_model=AuditVerdict,
    operation_id="verify_audit",
    **JSON,
)
def verify_audit(repo: RepoDep, svc: ServiceDep, caller: CallerDep) -> Any:
    """Check a repository's hash chain; ``ok: false`` names the first broken event."""
    return svc.history.verify_audit(caller, repo)


@router.get(
    "/audit/verify",
    response_model=AuditVerdict,
    operation_id="verify_global_audit",
    **JSON,
)
def verify_global_audit(svc: ServiceDep, caller: CallerDep) -> Any:
    """Check the global chain (grants above repositories, tokens)."""
    return svc.history.verify_audit(caller, None)
