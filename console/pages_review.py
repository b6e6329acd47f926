"""The review pages: the proposal queue, one proposal with its diffs, accept / reject / rebase,
and the conflicted path: the conflict blocks side by side, revise, withdraw.

Accepting sends what the curator saw: the proposal is pinned to a target version, and the
service moves the head only by compare-and-swap on that pin — a lost race comes back as the
typed ``STALE_PROPOSAL`` answer, shown on the page with the rebase button. A proposal carrying
merge conflicts (a rebase whose three-way merge overlapped) shows no Accept but its conflict
blocks and a revise form prefilled with its body, the merge with its markers; the proposer
signed in to the console sees withdraw, rebase and revise for their own proposals. The page only
chooses which forms to show; the service decides every action.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from console.diffs import conflict_hunks, side_by_side, unified
from console.web import (
    PAGE_SIZE,
    OptionalText,
    PostedDep,
    Signed,
    SignedDep,
    error_page,
    instant,
    render,
    see_other,
)
from domain.errors import AmeideError, InvalidArgument
from domain.merge import three_way_merge
from domain.model import has_conflict_markers
from domain.values import normalize_line_endings
from edge.errors import rule_for
from edge.results import as_json
from service.audit.history import MAX_HISTORY
from service.governance.queue import QueueFilter

router = APIRouter()
QUEUE_ACTIONS = {"curate", "audit", "propose"}
Text = Annotated[str | None, Query()]


def repositories(signed: Signed) -> list[dict[str, Any]]:
    """The repositories the caller may read (with its actions there), from the service."""
    rows: list[dict[str, Any]] = as_json(signed.service.discovery.list_repositories(signed.caller))
    return rows


def actions_in(signed: Signed, repo: str) -> set[str]:
    """What the service says the caller may do in ``repo`` (decides which buttons show)."""
    for row in repositories(signed):
        if row["repository_id"] == repo:
            return set(row["actions"])
    return set()


def _tristate(value: str | None) -> bool | None:
    return {"yes": True, "no": False}.get(value or "")


@router.get("/queue", response_class=HTMLResponse)
def queue(
    request: Request,
    signed: SignedDep,
    repo: Text = None,
    element: Text = None,
    proposer: Text = None,
    stale: Text = None,
    conflicts: Text = None,
    since: Text = None,
    order: Text = None,
    cursor: Text = None,
) -> Response:
    """Open proposals of one repository, or of every repository the caller may list."""
    listed = [r for r in repositories(signed) if QUEUE_ACTIONS & set(r["actions"])]
    names = [r["repository_id"] for r in listed]
    chosen = [repo] if repo else names
    wanted = QueueFilter(
        element_id=element or None,
        proposer=proposer or None,
        stale=_tristate(stale),
        conflicts=_tristate(conflicts),
        since=instant(since, "since"),
        limit=PAGE_SIZE + 1,
        cursor=cursor or None if repo else None,
        newest_first=order == "newest",
    )
    rows: list[dict[str, Any]] = []
    for key in chosen:
        found = as_json(signed.service.curation.proposal_list(signed.caller, key, "OPEN", wanted))
        purposes = _purposes(signed, key) if found else {}
        rows += [{**r, "purpose": purposes.get(r["proposal_id"])} for r in found]
    rows.sort(key=lambda r: (r["created_at"], r["proposal_id"]), reverse=wanted.newest_first)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    filters = {
        "repo": repo or "",
        "element": element or "",
        "proposer": proposer or "",
        "stale": stale or "",
        "conflicts": conflicts or "",
        "since": since or "",
        "order": order or "oldest",
    }
    next_cursor = rows[-1]["proposal_id"] if more and repo else None
    return render(
        request,
        "queue.html",
        signed,
        rows=rows,
        repos=names,
        filters=filters,
        more=more,
        next_cursor=next_cursor,
    )


def _purposes(signed: Signed, repo: str) -> dict[str, str | None]:
    """The purpose each proposal was opened with, as its audit event recorded it."""
    events = as_json(signed.service.history.history(signed.caller, repo, limit=MAX_HISTORY))
    return {e["proposal_id"]: e["purpose"] for e in events if e["event_type"] == "proposal.opened"}


def proposal_page(
    request: Request,
    signed: Signed,
    proposal_id: str,
    *,
    error: AmeideError | None = None,
    draft: str | None = None,
) -> Response:
    """A proposal: summary, diffs against its pin and (stale) the current head, the merge
    preview, its conflict blocks, what accepting would do, and the forms the caller may use
    (``draft``: a refused revision's text, offered again in the revise form)."""
    svc, caller = signed.service, signed.caller
    p = as_json(svc.curation.proposal_show(caller, proposal_id))
    preview = as_json(svc.review.accept_preview(caller, proposal_id))
    pinned = head = None
    if p.get("target_element_id") and p.get("target_version_id"):
        el = p["target_element_id"]
        pinned = as_json(svc.elements.get_element(caller, el, p["target_version_id"]))["version"]
        head = as_json(svc.elements.get_element(caller, el))["version"]
    diffs = _diffs(p, pinned, head)
    actions = actions_in(signed, p["repository_id"])
    mine = _is_mine(p, signed) and "propose" in actions
    return render(
        request,
        "proposal.html",
        signed,
        _status(error),
        p=p,
        preview=preview,
        pinned=pinned,
        head=head,
        diffs=diffs,
        may_curate="curate" in actions,
        mine=mine,
        may_change="curate" in actions or mine,
        conflicts=conflict_hunks(p.get("body") or "") if p.get("has_conflicts") else [],
        draft=(p.get("body") or "") if draft is None else draft,
        revising=draft is not None,
        error=error,
        done=request.query_params.get("done"),
    )


def _is_mine(p: dict[str, Any], signed: Signed) -> bool:
    """Whether the caller proposed ``p`` (made by it, or for it): shows the proposer's forms;
    the service checks ownership itself (``gate.owns``) when one is used."""
    by = p["proposed_by"]
    return bool((by.get("on_behalf_of") or by["actor_id"]) == signed.caller.principal_id)


def _status(error: AmeideError | None) -> int:
    return rule_for(error).http_status if error is not None else 200


def _diffs(
    p: dict[str, Any], pinned: dict[str, Any] | None, head: dict[str, Any] | None
) -> dict[str, Any]:
    proposed = p.get("body") or ""
    base = (pinned or {}).get("body") or ""
    out: dict[str, Any] = {
        "pinned_side": side_by_side(base, proposed),
        "pinned_unified": unified(base, proposed, p.get("target_version_id") or "new", "proposal"),
    }
    if p.get("stale") and head is not None:
        current = head.get("body") or ""
        out["head_side"] = side_by_side(current, proposed)
        out["head_unified"] = unified(current, proposed, head["version_id"], "proposal")
        merged = three_way_merge(base, current, proposed)
        out["merge"] = {
            "body": merged.body,
            "has_conflicts": merged.has_conflicts,
            "hunks": conflict_hunks(merged.body) if merged.has_conflicts else [],
        }
    return out


@router.get("/proposals/{proposal_id}", response_class=HTMLResponse)
def proposal(request: Request, proposal_id: str, signed: SignedDep) -> Response:
    """One proposal."""
    return proposal_page(request, signed, proposal_id)


@router.post("/proposals/{proposal_id}/accept")
def accept(
    request: Request,
    proposal_id: str,
    signed: PostedDep,
    rationale: OptionalText = None,
    expected_version_id: OptionalText = None,
) -> Response:
    """Accept with the service's two compare-and-swaps: on the pinned head (a lost race is the
    typed stale answer, with rebase offered) and on the proposal version the page showed (a
    proposal revised since is refused); a refusal is shown in place."""
    try:
        signed.service.review.accept(
            signed.caller, proposal_id, rationale or None, expected_version_id or None
        )
    except AmeideError as exc:
        return _refused(request, signed, proposal_id, exc)
    return see_other(request, f"/proposals/{proposal_id}", done="accepted")


@router.post("/proposals/{proposal_id}/reject")
def reject(
    request: Request, proposal_id: str, signed: PostedDep, rationale: OptionalText = None
) -> Response:
    """Reject with a rationale (the service refuses an empty one)."""
    try:
        signed.service.review.reject(signed.caller, proposal_id, rationale or "")
    except AmeideError as exc:
        return _refused(request, signed, proposal_id, exc)
    return see_other(request, f"/proposals/{proposal_id}", done="rejected")


@router.post("/proposals/{proposal_id}/rebase")
def rebase(request: Request, proposal_id: str, signed: PostedDep) -> Response:
    """Rebase onto the current head; go on to the new proposal."""
    try:
        out = as_json(signed.service.review.rebase(signed.caller, proposal_id))
    except AmeideError as exc:
        return _refused(request, signed, proposal_id, exc)
    return see_other(request, f"/proposals/{out['proposal_id']}", done="rebased")


@router.post("/proposals/{proposal_id}/withdraw")
def withdraw(
    request: Request, proposal_id: str, signed: PostedDep, rationale: OptionalText = None
) -> Response:
    """The proposer withdraws their own OPEN proposal (the service refuses anyone else)."""
    try:
        signed.service.review.withdraw(signed.caller, proposal_id, rationale or None)
    except AmeideError as exc:
        return _refused(request, signed, proposal_id, exc)
    return see_other(request, f"/proposals/{proposal_id}", done="withdrawn")


@router.post("/proposals/{proposal_id}/revise")
def revise(
    request: Request,
    proposal_id: str,
    signed: PostedDep,
    body: OptionalText = None,
    expected_version_id: OptionalText = None,
) -> Response:
    """Replace the proposal's body (its proposer or a curator, as the service decides) with the
    text of the revise form. Refused, with the text kept in the form: a body still carrying a
    conflict block (this form resolves conflicts; the service would store it and accepting it
    would stay refused), and a proposal revised since the page showed it."""
    text = normalize_line_endings(body or "")
    try:
        if has_conflict_markers(text):
            raise InvalidArgument(
                "the body still has conflict markers (<<<<<<<, =======, >>>>>>>): keep the "
                "lines each conflict should end with and delete the markers, then save again",
                field="body",
            )
        signed.service.curation.revise(
            signed.caller, proposal_id, text, expected_version_id=expected_version_id or None
        )
    except AmeideError as exc:
        return _refused(request, signed, proposal_id, exc, draft=text)
    return see_other(request, f"/proposals/{proposal_id}", done="revised")


def _refused(
    request: Request,
    signed: Signed,
    proposal_id: str,
    exc: AmeideError,
    draft: str | None = None,
) -> Response:
    """The proposal page again with the service's refusal (or an error page if it is gone)."""
    try:
        return proposal_page(request, signed, proposal_id, error=exc, draft=draft)
    except AmeideError:
        return error_page(request, signed, exc)
