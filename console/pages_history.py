"""The audit page (history with filters, the chain's verification, CSV/JSON export) and the
context preview (a question asked as yourself, answered exactly as an agent would be)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from console.web import Signed, SignedDep, instant, render
from domain.errors import PermissionDenied
from edge.exports import events_csv, events_json
from edge.reading import read_request
from edge.results import as_json
from service.audit.history import MAX_HISTORY

router = APIRouter()
Text = Annotated[str | None, Query()]
REPO = "/repos/{tenant}/{org}/{name}"
AUDIT_PAGE = 50


def _events(
    signed: Signed, repo: str, filters: dict[str, str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The history the service returns for the filters, newest first; the event types in it.

    The event type narrows what the service returned (display only)."""
    rows = as_json(
        signed.service.history.history(
            signed.caller,
            repo,
            since=instant(filters["since"], "since"),
            until=instant(filters["until"], "until"),
            element_id=filters["element"] or None,
            actor=filters["actor"] or None,
            limit=MAX_HISTORY,
        )
    )
    types = sorted({r["event_type"] for r in rows})
    wanted = filters["event_type"]
    return [r for r in reversed(rows) if not wanted or r["event_type"] == wanted], types


def _filters(**values: str | None) -> dict[str, str]:
    return {k: (v or "").strip() for k, v in values.items()}


@router.get(REPO + "/audit", response_class=HTMLResponse)
def audit(
    request: Request, tenant: str, org: str, name: str, signed: SignedDep,
    since: Text = None, until: Text = None, actor: Text = None, element: Text = None,
    event_type: Text = None, page: Annotated[int, Query(ge=1)] = 1,
) -> Response:  # fmt: skip
    """The repository's audit events, filtered and paged, and the hash chain's verdict."""
    repo = f"{tenant}/{org}/{name}"
    filters = _filters(
        since=since, until=until, actor=actor, element=element, event_type=event_type
    )
    rows, types = _events(signed, repo, filters)
    try:
        verdict: dict[str, Any] | None = as_json(
            signed.service.history.verify_audit(signed.caller, repo)
        )
    except PermissionDenied:  # verifying the chain is the auditor's; the history is not
        verdict = None
    start = (page - 1) * AUDIT_PAGE
    return render(
        request,
        "audit.html",
        signed,
        repo=repo,
        rows=rows[start : start + AUDIT_PAGE],
        total=len(rows),
        page=page,
        pages=max(1, -(-len(rows) // AUDIT_PAGE)),
        types=types,
        filters=filters,
        verdict=verdict,
    )


@router.get(REPO + "/audit/export")
def export(
    tenant: str, org: str, name: str, signed: SignedDep,
    since: Text = None, until: Text = None, actor: Text = None, element: Text = None,
    event_type: Text = None, format: Text = "csv",
) -> Response:  # fmt: skip
    """The filtered history as a file for an auditor: CSV (payload as JSON) or JSON."""
    repo = f"{tenant}/{org}/{name}"
    filters = _filters(
        since=since, until=until, actor=actor, element=element, event_type=event_type
    )
    rows, _ = _events(signed, repo, filters)
    rows.reverse()  # files read oldest first, like the chain
    stem = "audit-" + repo.replace("/", "_")
    if format == "json":
        return _attachment(events_json(rows), "application/json", f"{stem}.json")
    return _attachment(events_csv(rows), "text/csv; charset=utf-8", f"{stem}.csv")


def _attachment(body: str, media_type: str, filename: str) -> Response:
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(body, media_type=media_type, headers=headers)


@router.get("/context", response_class=HTMLResponse)
def context(
    request: Request, signed: SignedDep, repo: Text = None, question: Text = None,
    as_of: Text = None, max_items: Annotated[int, Query(ge=1, le=50)] = 5,
) -> Response:  # fmt: skip
    """Ask as yourself: the items, citations and score breakdown an agent would get."""
    repos = [
        r["repository_id"]
        for r in as_json(signed.service.discovery.list_repositories(signed.caller))
    ]
    answer = None
    if repo and question and question.strip():
        read = read_request(repo, question, as_of=as_of, max_items=max_items, explain=True)
        answer = as_json(signed.service.reading.read_context(signed.caller, read))
    return render(
        request,
        "context.html",
        signed,
        repos=repos,
        repo=repo or (repos[0] if repos else ""),
        question=question or "",
        as_of=as_of or "",
        max_items=max_items,
        answer=answer,
    )
