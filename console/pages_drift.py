"""The drift page (curated pages citing evidence that moved, with the evidence diff; review one
or open a proposal from it) and the knowledge-gaps report of a repository (docs/drift.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from console.diffs import tagged
from console.pages_review import actions_in
from console.web import OptionalText, PostedDep, Signed, SignedDep, render, see_other
from domain.errors import AmeideError
from edge.errors import rule_for
from edge.results import as_json

router = APIRouter()
REPO = "/repos/{tenant}/{org}/{name}"


@router.get(REPO + "/drift", response_class=HTMLResponse)
def drift(
    request: Request, tenant: str, org: str, name: str, signed: SignedDep,
    topic: Annotated[str | None, Query()] = None,
) -> Response:  # fmt: skip
    """Drifted pages with their evidence diffs, and the gaps report (on a topic)."""
    return drift_page(request, signed, f"{tenant}/{org}/{name}", topic)


def drift_page(
    request: Request,
    signed: Signed,
    repo: str,
    topic: str | None = None,
    error: AmeideError | None = None,
) -> Response:
    """The page (again, with a refusal when an action was refused)."""
    svc, caller = signed.service, signed.caller
    entries: list[dict[str, Any]] = as_json(svc.drift.drift_list(caller, repo))["entries"]
    for e in entries:
        e["lines"] = tagged(e["diff"])
    report = svc.gaps.gaps(caller, repo, topic.strip() or None if topic else None)
    actions = actions_in(signed, repo)
    return render(
        request,
        "drift.html",
        signed,
        rule_for(error).http_status if error else 200,
        repo=repo,
        entries=entries,
        gaps=as_json(report),
        topic=topic or "",
        may_curate="curate" in actions,
        may_propose="propose" in actions,
        error=error,
        done=request.query_params.get("done"),
    )


@router.post(REPO + "/drift/review")
def review(
    request: Request, tenant: str, org: str, name: str, signed: PostedDep,
    page: OptionalText = None, evidence: OptionalText = None, up_to: OptionalText = None,
    note: OptionalText = None,
) -> Response:  # fmt: skip
    """Mark a drift reviewed up to the evidence version the page showed."""
    repo = f"{tenant}/{org}/{name}"
    try:
        signed.service.drift.drift_review(
            signed.caller, page or "", evidence or "", evidence_version_id=up_to or None,
            note=note or None,
        )  # fmt: skip
    except AmeideError as exc:
        return drift_page(request, signed, repo, error=exc)
    return see_other(request, f"/repos/{repo}/drift", done="reviewed")


@router.post(REPO + "/drift/propose")
def propose(
    request: Request, tenant: str, org: str, name: str, signed: PostedDep,
    page: OptionalText = None, evidence: OptionalText = None,
) -> Response:  # fmt: skip
    """Open a proposal on the drifted page (its current body, to revise) and show it."""
    repo = f"{tenant}/{org}/{name}"
    try:
        made = signed.service.drift.drift_propose(signed.caller, page or "", evidence or "")
    except AmeideError as exc:
        return drift_page(request, signed, repo, error=exc)
    return see_other(request, f"/proposals/{made.proposal_id}")
