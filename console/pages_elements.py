"""The element pages: a repository's elements, and one element — its head or the version as
recorded at an instant (``as_of``), the version history with a diff between any two versions,
relationships (``SUPERSEDES`` and the curation pins included), provenance and lifecycle."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from console.diffs import side_by_side, unified
from console.web import PAGE_SIZE, Signed, SignedDep, instant, render
from edge.results import as_json

router = APIRouter()
Text = Annotated[str | None, Query()]
REPO = "/repos/{tenant}/{org}/{name}"


@router.get(REPO + "/elements", response_class=HTMLResponse)
def elements(
    request: Request, tenant: str, org: str, name: str, signed: SignedDep, cursor: Text = None
) -> Response:
    """A page of the repository's elements the caller may read."""
    repo = f"{tenant}/{org}/{name}"
    page = as_json(
        signed.service.discovery.list_elements(signed.caller, repo, limit=PAGE_SIZE, cursor=cursor)
    )
    return render(request, "elements.html", signed, repo=repo, page=page)


@router.get("/elements/{element_id}", response_class=HTMLResponse)
def element(
    request: Request,
    element_id: str,
    signed: SignedDep,
    version: Text = None,
    as_of: Text = None,
    diff_from: Text = None,
    diff_to: Text = None,
) -> Response:
    """One element as the service shows it to the caller."""
    svc, caller = signed.service, signed.caller
    when = instant(as_of, "as_of")
    shown = as_json(svc.elements.get_element(caller, element_id, version or None, when))
    history = as_json(svc.elements.element_history(caller, element_id))
    relationships = as_json(svc.elements.list_relationships(caller, element_id, when))
    versions = history["versions"]
    diff = _diff(signed, element_id, versions, diff_from, diff_to)
    return render(
        request,
        "element.html",
        signed,
        element=shown["element"],
        version=shown["version"],
        versions=versions,
        relationships=relationships,
        as_of=as_of or "",
        diff=diff,
    )


def _diff(
    signed: Signed,
    element_id: str,
    versions: list[dict[str, Any]],
    diff_from: str | None,
    diff_to: str | None,
) -> dict[str, Any] | None:
    """The diff between two versions the caller picked (default: the last two, if any)."""
    ids = [v["version_id"] for v in versions]
    if not diff_from and not diff_to:
        if len(ids) < 2:
            return None
        diff_from, diff_to = ids[-2], ids[-1]
    old_id, new_id = diff_from or ids[0], diff_to or ids[-1]
    old = as_json(signed.service.elements.get_element(signed.caller, element_id, old_id))["version"]
    new = as_json(signed.service.elements.get_element(signed.caller, element_id, new_id))["version"]
    old_body, new_body = old.get("body") or "", new.get("body") or ""
    return {
        "from": old_id,
        "to": new_id,
        "side": side_by_side(old_body, new_body),
        "unified": unified(old_body, new_body, old_id, new_id),
    }
