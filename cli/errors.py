"""How the CLI reports failure: the one exit-code table and the CLI's own error conditions.

Service errors keep their taxonomy (``domain.errors``); the few conditions only a command line
has (no database yet, database unreachable) are subclasses of it, so one table maps them all.
"""

from __future__ import annotations

from domain.errors import (
    AlreadyExists,
    AmeideError,
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)


class NotInitialised(FailedPrecondition):
    """The database is missing or not migrated to the code's schema."""

    code = "NOT_INITIALISED"


class Unavailable(AmeideError):
    """The database cannot be reached or opened."""

    code = "UNAVAILABLE"


EXIT_OK = 0
EXIT_INTERNAL = 1
# Verdicts a command still prints in full, then signals with its own exit code:
EXIT_AUDIT_CHAIN_BROKEN = 9
"""``audit verify`` found tampering (``AUDIT_CHAIN_BROKEN``)."""
EXIT_CITATIONS_INVALID = 10
"""``verify-citations`` found a citation that was not in the context."""
EXIT_SMOKE_FAILED = 11
"""``ameide test``: a step of the reference scenario broke (``SMOKE_FAILED``)."""

EXIT_CODES: dict[type[AmeideError], int] = {
    InvalidArgument: 2,  # also bad command-line usage
    NotFound: 3,
    PermissionDenied: 4,
    FailedPrecondition: 5,  # STALE_PROPOSAL, PROPOSAL_HAS_CONFLICTS, LEGAL_HOLD, NOT_INITIALISED
    Conflict: 6,
    AlreadyExists: 6,
    Unauthenticated: 7,
    Unavailable: 8,
}
"""Error class → process exit code; subclasses inherit their parent's code."""

USAGE_ERROR_CODE = "INVALID_ARGUMENT"


def exit_code_for(error: AmeideError) -> int:
    """The exit code of an error: the nearest class in ``EXIT_CODES`` along its MRO."""
    for cls in type(error).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return EXIT_INTERNAL
