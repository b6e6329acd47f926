"""The baselines page: list, create, diff two, promote / roll back, the pointer's history.

Promotion and rollback send the pointer the publisher saw (``expected_baseline_id``): the
service moves it only if it still points there (compare-and-swap), else answers ``CONFLICT``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from console.diffs import tagged
from console.pages_review import actions_in
from console.web import OptionalText, PostedDep, Signed, SignedDep, render, see_other
from domain.errors import AmeideError
from edge.errors import rule_for
from edge.results import as_json

router = APIRouter()
Text = Annotated[str | None, Query()]
REPO = "/repos/{tenant}/{org}/{name}"


@router.get(REPO + "/baselines", response_class=HTMLResponse)
def baselines(
    request: Request, tenant: str, org: str, name: str, signed: SignedDep,
    a: Text = None, b: Text = None,
) -> Response:  # fmt: skip
    """The baselines of a repository, the published pointer and its moves, a diff of two."""
    return baselines_page(request, signed, f"{tenant}/{org}/{name}", a, b)


def baselines_page(
    request: Request,
    signed: Signed,
    repo: str,
    a: str | None = None,
    b: str | None = None,
    error: AmeideError | None = None,
) -> Response:
    """The page (again, with a refusal when an action was refused)."""
    svc, caller = signed.service, signed.caller
    rows = as_json(svc.publishing.list_baselines(caller, repo))
    published = as_json(svc.publishing.published(caller, repo))
    diff = None
    if a and b:
        diff = as_json(svc.publishing.baseline_diff(caller, a, b))
        for group in ("added", "changed", "removed"):
            for entry in diff[group]:
                entry["lines"] = tagged(entry["diff"])
    actions = actions_in(signed, repo)
    return render(
        request,
        "baselines.html",
        signed,
        rule_for(error).http_status if error else 200,
        repo=repo,
        rows=rows,
        published=published,
        diff=diff,
        sel_a=a or "",
        sel_b=b or "",
        may_publish="publish" in actions,
        error=error,
        done=request.query_params.get("done"),
    )


@router.post(REPO + "/baselines")
def create(
    request: Request, tenant: str, org: str, name: str, signed: PostedDep,
    baseline_name: OptionalText = None,
) -> Response:  # fmt: skip
    """Cut a baseline: every canonical element at its head."""
    repo = f"{tenant}/{org}/{name}"
    try:
        signed.service.publishing.create_baseline(signed.caller, repo, baseline_name or None)
    except AmeideError as exc:
        return baselines_page(request, signed, repo, error=exc)
    return see_other(request, f"/repos/{repo}/baselines", done="created")


@router.post(REPO + "/promote")
def promote(
    request: Request, tenant: str, org: str, name: str, signed: PostedDep,
    baseline_id: OptionalText = None, reason: OptionalText = None,
    expected_baseline_id: OptionalText = None,
) -> Response:  # fmt: skip
    """Move the published pointer to a baseline, if it still points where the page showed."""
    repo = f"{tenant}/{org}/{name}"
    try:
        signed.service.publishing.promote(
            signed.caller, baseline_id or "", repo, reason or None, expected_baseline_id or None
        )
    except AmeideError as exc:
        return baselines_page(request, signed, repo, error=exc)
    return see_other(request, f"/repos/{repo}/baselines", done="promoted")


@router.post(REPO + "/rollback")
def rollback(
    request: Request, tenant: str, org: str, name: str, signed: PostedDep,
    to: OptionalText = None, reason: OptionalText = None,
    expected_baseline_id: OptionalText = None,
) -> Response:  # fmt: skip
    """Publish an older baseline again (the previous one when none is chosen)."""
    repo = f"{tenant}/{org}/{name}"
    try:
        signed.service.publishing.rollback(
            signed.caller, repo, to or None, reason or None, expected_baseline_id or None
        )
    except AmeideError as exc:
        return baselines_page(request, signed, repo, error=exc)
    return see_other(request, f"/repos/{repo}/baselines", done="rolled back")
