"""One error taxonomy for every surface.

    AmeideError
     ├── InvalidArgument        bad input at the edge (400 / INVALID_ARGUMENT)
     ├── NotFound               missing *or* not readable — never tells which (404 / NOT_FOUND)
     ├── PermissionDenied       readable, but the action is not allowed (403 / PERMISSION_DENIED)
     ├── Unauthenticated        no or bad credentials (401 / UNAUTHENTICATED)
     ├── AlreadyExists          a unique thing exists already (409 / ALREADY_EXISTS)
     ├── Conflict               a compare-and-swap lost a race (409 / ABORTED)
     ├── FailedPrecondition     the state forbids it (412 / FAILED_PRECONDITION)
     │    ├── StaleProposal     the proposal's pinned version is no longer the head
     │    ├── ProposalConflicted  the proposal body still has merge conflicts
     │    └── LegalHoldActive   the repository is under legal hold
     └── IndexBuilding          the keyword index is being built: retry (503 / UNAVAILABLE)

One table maps these for every adapter (``edge.errors``: HTTP status, gRPC code, MCP advice, CLI
exit code).
"""

from __future__ import annotations

from typing import Any


class AmeideError(Exception):
    """Base of every error the service layer raises on purpose."""

    code = "INTERNAL"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details

    def to_dict(self) -> dict[str, Any]:
        """The wire shape shared by every surface: ``{code, message, details}``."""
        return {"code": self.code, "message": self.message, "details": dict(self.details)}


class InvalidArgument(AmeideError):
    """The request is malformed; nothing was changed."""

    code = "INVALID_ARGUMENT"


class NotFound(AmeideError):
    """The thing does not exist or the caller may not read it (deliberately indistinguishable)."""

    code = "NOT_FOUND"


class PermissionDenied(AmeideError):
    """The caller can see the thing but may not perform this action on it."""

    code = "PERMISSION_DENIED"


class Unauthenticated(AmeideError):
    """No valid credentials were presented."""

    code = "UNAUTHENTICATED"


class AlreadyExists(AmeideError):
    """Something unique already exists."""

    code = "ALREADY_EXISTS"


class Conflict(AmeideError):
    """A concurrent writer won a compare-and-swap; retry after re-reading."""

    code = "CONFLICT"


class FailedPrecondition(AmeideError):
    """The current state does not allow the operation."""

    code = "FAILED_PRECONDITION"


class StaleProposal(FailedPrecondition):
    """The proposal is pinned to a version that is no longer the target's head."""

    code = "STALE_PROPOSAL"


class ProposalConflicted(FailedPrecondition):
    """The proposal carries unresolved merge conflicts and must be revised first."""

    code = "PROPOSAL_HAS_CONFLICTS"


class LegalHoldActive(FailedPrecondition):
    """The repository is under legal hold: no retirement, erasure or deletion."""

    code = "LEGAL_HOLD"


class IndexBuilding(AmeideError):
    """The keyword index is being built from the database (a new home, a switch of engine, a
    rebuild after its files were lost) and cannot answer yet: a read is refused rather than
    answered from a partial index. Retry shortly."""

    code = "UNAVAILABLE"
