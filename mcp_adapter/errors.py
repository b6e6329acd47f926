"""How the MCP adapter reports failure: one table from the error taxonomy to tool errors.

A failed call is a tool result with ``isError: true``, one line of text an agent can act on
(what happened, then what to do) and ``structuredContent`` ``{"error": {code, message,
details}}`` — the same shape as the REST body.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from domain.errors import (
    AlreadyExists,
    AmeideError,
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ProposalConflicted,
    StaleProposal,
    Unauthenticated,
)

NEXT_STEP: dict[type[AmeideError], str] = {
    InvalidArgument: "fix the arguments and call again",
    NotFound: "it does not exist or you may not read it; check the id or find it with "
    "memory.search",
    PermissionDenied: "you lack the role for this; do not retry, ask an administrator",
    Unauthenticated: "configure a valid bearer token (ameide token create) for this server",
    AlreadyExists: "use a new client_request_id, or repeat the original arguments exactly",
    Conflict: "someone changed it at the same moment; read it again and retry once",
    StaleProposal: "read the element again with memory.get_element and propose against its "
    "current head version",
    ProposalConflicted: "revise the proposal with a body free of conflict markers",
    FailedPrecondition: "the current state does not allow this; read it again before retrying",
}
"""Error class → what the agent should do next; subclasses fall back to their parent's."""

MAX_PROBLEMS = 5


def next_step(error: AmeideError) -> str:
    """The advice for an error: the nearest class in ``NEXT_STEP`` along its MRO."""
    for cls in type(error).__mro__:
        if cls in NEXT_STEP:
            return NEXT_STEP[cls]
    return "report this error to the operator"


def one_line(text: str) -> str:
    """Collapse whitespace so a message stays on one line."""
    return " ".join(text.split())


def error_result(code: str, message: str, advice: str, details: dict[str, Any]) -> CallToolResult:
    """A tool error: one actionable line of text plus the error as structured content."""
    body = {"error": {"code": code, "message": message, "details": details}}
    text = one_line(f"{code}: {message.rstrip('.')}. Next: {advice}.")
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=body,
        is_error=True,
    )


def from_service_error(error: AmeideError) -> CallToolResult:
    """The tool error of a service error."""
    details = json.loads(json.dumps(error.details, default=str))
    return error_result(error.code, error.message, next_step(error), details)


def from_validation_error(tool: str, error: ValidationError) -> CallToolResult:
    """The tool error of arguments that do not match the input schema."""
    errors = error.errors()
    problems = []
    for e in errors[:MAX_PROBLEMS]:
        where = ".".join(str(p) for p in e.get("loc", ())) or "arguments"
        message = str(e.get("msg", "invalid")).removeprefix("Value error, ")
        problems.append(f"{where}: {message}")
    if len(errors) > MAX_PROBLEMS:
        problems.append(f"… and {len(errors) - MAX_PROBLEMS} more")
    return error_result(
        InvalidArgument.code,
        f"invalid arguments for {tool}: " + "; ".join(problems),
        "fix them as the tool's input schema says and call again",
        {"problems": problems},
    )


def internal_error(tool: str, trace_id: str) -> CallToolResult:
    """An unexpected failure (a bug): no internals leak, the trace id finds the log entry."""
    return error_result(
        "INTERNAL",
        f"{tool} failed unexpectedly (trace {trace_id})",
        "retry later; report the trace id to the operator if it persists",
        {"trace_id": trace_id},
    )
