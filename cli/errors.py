"""How the CLI reports failure: the one error table's exit codes, and the CLI's own conditions.

Service errors keep their taxonomy (``domain.errors``); the exit code of each class is the one
table's (``edge.errors``: 2 invalid, 3 not found, 4 denied, 5 failed precondition, 6 conflict or
already exists, 7 unauthenticated, 8 unavailable, 1 anything else). The few conditions only a
command line meets — no database yet (``NotInitialised``, here), database unreachable
(``edge.errors.Unavailable``) — are subclasses of the taxonomy, so the table maps them too.
"""

from __future__ import annotations

from domain.errors import AmeideError, FailedPrecondition, InvalidArgument
from edge.errors import INTERNAL, rule_for


class NotInitialised(FailedPrecondition):
    """The database is missing or not migrated to the code's schema."""

    code = "NOT_INITIALISED"


class LocalOnly(InvalidArgument):
    """A command (or option) remote mode cannot run: it needs the database or the home."""

    code = "LOCAL_ONLY"


EXIT_OK = 0
EXIT_INTERNAL = INTERNAL.exit_code
EXIT_USAGE = rule_for(InvalidArgument).exit_code
# Verdicts a command still prints in full, then signals with its own exit code:
EXIT_AUDIT_CHAIN_BROKEN = 9
"""``audit verify`` found tampering (``AUDIT_CHAIN_BROKEN``)."""
EXIT_CITATIONS_INVALID = 10
"""``verify-citations`` found a citation that was not in the context."""
EXIT_SMOKE_FAILED = 11
"""``ameide test``: a step of the reference scenario broke (``SMOKE_FAILED``)."""

USAGE_ERROR_CODE = InvalidArgument.code


def exit_code_for(error: AmeideError) -> int:
    """The exit code of an error (the one table, nearest class along its MRO)."""
    return rule_for(error).exit_code


def error_class(code: str) -> type[AmeideError] | None:
    """The taxonomy's class with this wire ``code`` (None when no class has it)."""
    found: list[type[AmeideError]] = [AmeideError]
    while found:
        cls = found.pop()
        if cls.code == code:
            return cls
        found.extend(cls.__subclasses__())
    return None


def exit_code_of(code: str) -> int:
    """The exit code of an error known only by its wire ``code`` (``STALE_PROPOSAL`` → 5), as in
    a verdict the service reports rather than raises (``accept --dry-run``'s refusal)."""
    cls = error_class(code)
    return EXIT_INTERNAL if cls is None else rule_for(cls).exit_code


def local_only(command: str, why: str = "it needs the database") -> LocalOnly:
    """The refusal of a command (or option) remote mode cannot run."""
    return LocalOnly(
        f"`{command}` is local-only ({why}): run it without --server / AMEIDE_SERVER, "
        "on the server's home or database",
        command=command,
    )
