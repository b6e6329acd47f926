"""The one error table: each class of the taxonomy → what every surface answers.

    AmeideError class    HTTP  gRPC                 exit  codes seen on the wire
    InvalidArgument       400  INVALID_ARGUMENT        2  INVALID_ARGUMENT (also bad usage)
    Unauthenticated       401  UNAUTHENTICATED         7  UNAUTHENTICATED
    PermissionDenied      403  PERMISSION_DENIED       4  PERMISSION_DENIED
    NotFound              404  NOT_FOUND               3  NOT_FOUND (missing or unreadable)
    AlreadyExists         409  ALREADY_EXISTS          6  ALREADY_EXISTS
    Conflict              409  ABORTED                 6  CONFLICT (lost a race; re-read, retry)
    FailedPrecondition    412  FAILED_PRECONDITION     5  FAILED_PRECONDITION, STALE_PROPOSAL,
                                                          PROPOSAL_HAS_CONFLICTS, LEGAL_HOLD,
                                                          NOT_INITIALISED
    Unavailable           503  UNAVAILABLE             8  UNAVAILABLE (database unreachable)
    anything else         500  INTERNAL                1  INTERNAL (a bug)

A subclass takes its nearest listed ancestor's row (:func:`rule_for`); the MCP advice alone is
finer (a stale proposal and a conflicted one say what to do next, and a NOT_FOUND what kind of id
it missed: :func:`advice_for`). Every failure, on every
surface that sends JSON, has the body ``{"error": {"code", "message", "details"}}``
(:func:`error_body`); gRPC sends the code and details as trailing metadata instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from domain.errors import (
    AlreadyExists,
    AmeideError,
    Conflict,
    FailedPrecondition,
    IndexBuilding,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ProposalConflicted,
    StaleProposal,
    Unauthenticated,
)
from domain.values import describe_problem


class Unavailable(AmeideError):
    """The database cannot be reached or opened (met by the command line, which opens it)."""

    code = "UNAVAILABLE"


@dataclass(frozen=True)
class ErrorRule:
    """What one class of error becomes on each surface."""

    http_status: int
    grpc_status: str
    """The name of the ``grpc.StatusCode`` member (the gRPC adapter looks it up)."""
    exit_code: int
    advice: str
    """What an agent should do next (the MCP tool error's ``Next:``)."""


_FAILED_PRECONDITION = ErrorRule(
    412,
    "FAILED_PRECONDITION",
    5,
    "the current state does not allow this; read it again before retrying",
)

ERROR_TABLE: Mapping[type[AmeideError], ErrorRule] = {
    InvalidArgument: ErrorRule(400, "INVALID_ARGUMENT", 2, "fix the arguments and call again"),
    Unauthenticated: ErrorRule(
        401,
        "UNAUTHENTICATED",
        7,
        "configure a valid bearer token (ameide token create) for this server",
    ),
    PermissionDenied: ErrorRule(
        403,
        "PERMISSION_DENIED",
        4,
        "you lack the role for this; do not retry, ask an administrator",
    ),
    NotFound: ErrorRule(
        404,
        "NOT_FOUND",
        3,
        "it does not exist or you may not read it; check the id or find it with memory.search",
    ),
    AlreadyExists: ErrorRule(
        409,
        "ALREADY_EXISTS",
        6,
        "use a new client_request_id, or repeat the original arguments exactly",
    ),
    Conflict: ErrorRule(
        409,
        "ABORTED",  # a lost compare-and-swap: re-read and retry
        6,
        "someone changed it at the same moment; read it again and retry once",
    ),
    FailedPrecondition: _FAILED_PRECONDITION,
    StaleProposal: replace(
        _FAILED_PRECONDITION,
        advice="read the element again with memory.get_element and propose against its "
        "current head version",
    ),
    ProposalConflicted: replace(
        _FAILED_PRECONDITION,
        advice="revise the proposal with a body free of conflict markers",
    ),
    Unavailable: ErrorRule(
        503, "UNAVAILABLE", 8, "retry later; report it to the operator if it persists"
    ),
    IndexBuilding: ErrorRule(
        503,
        "UNAVAILABLE",
        8,
        "the search index is being built from the database; retry in a minute "
        "(ameide index status shows its progress)",
    ),
}
"""Error class → its rule; a class not listed takes its nearest listed ancestor's."""

NOT_FOUND_ADVICE: Mapping[str, str] = {
    "repository": "it does not exist or you may not read it; memory.health lists the "
    "repositories you may read: use one of those (TENANT/ORG/REPO) as repository",
    "organization": "it does not exist or you may not read it; memory.health lists the "
    "repositories you may read: use one of those, or its TENANT/ORG",
    "context_id": "it does not exist or is not yours (a context is readable by the principal "
    "that read it and by auditors); use the context_id memory.get_context returned to you, or "
    "call memory.get_context again for a new one",
    "proposal_id": "it does not exist or you may not read it; use the proposal_id "
    "memory.propose returned to you",
    "baseline_id": "it does not exist or you may not read it; check the id, or leave it out "
    "to read the published baseline",
}
"""The advice of a NOT_FOUND by the kind of id it names (its details' key): searching finds
elements and versions, not repositories, contexts, proposals or baselines."""

INTERNAL = ErrorRule(500, "INTERNAL", 1, "report this error to the operator")
"""The rule of anything the table does not know: a bug."""

MAX_DETAILS_CHARS = 4096
"""Details longer than this, as JSON, are replaced by ``{"truncated": true}`` where they travel
in headers (gRPC trailing metadata shares HTTP/2 header limits)."""


def rule_for(error: AmeideError | type[AmeideError]) -> ErrorRule:
    """The rule of an error: the nearest class in ``ERROR_TABLE`` along its MRO."""
    cls = error if isinstance(error, type) else type(error)
    for base in cls.__mro__:
        if base in ERROR_TABLE:
            return ERROR_TABLE[base]
    return INTERNAL


def advice_for(error: AmeideError) -> str:
    """What an agent should do next: the error's rule's advice, made finer for a NOT_FOUND by
    the kind of id it names (:data:`NOT_FOUND_ADVICE`)."""
    if isinstance(error, NotFound):
        for key, advice in NOT_FOUND_ADVICE.items():
            if key in error.details:
                return advice
    return rule_for(error).advice


def error_body(code: str, message: str, details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The one JSON shape of a failure: ``{"error": {"code", "message", "details"}}``."""
    return {"error": {"code": code, "message": message, "details": dict(details or {})}}


def json_details(error: AmeideError) -> dict[str, Any]:
    """An error's details as plain JSON values (ids, datetimes and the like become text)."""
    details: dict[str, Any] = json.loads(json.dumps(error.details, default=str))
    return details


def details_text(error: AmeideError) -> str:
    """An error's details as compact, key-sorted ASCII JSON, at most ``MAX_DETAILS_CHARS``."""
    text = json.dumps(error.details, default=str, sort_keys=True)
    return text if len(text) <= MAX_DETAILS_CHARS else json.dumps({"truncated": True})


def problems(
    errors: Iterable[Mapping[str, Any]], *, limit: int, where: str = "", count_more: bool = False
) -> list[str]:
    """Validation errors (pydantic's ``errors()``) as at most ``limit`` lines ``where: what``.

    ``where`` names the place of a problem without a location; with ``count_more`` a last line
    says how many were left out.
    """
    found = list(errors)
    lines = [describe_problem(e, where) for e in found[:limit]]
    if count_more and len(found) > limit:
        lines.append(f"… and {len(found) - limit} more")
    return lines


def one_line(text: str) -> str:
    """Collapse whitespace so a message never spans lines."""
    return " ".join(str(text).split())
