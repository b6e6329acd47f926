"""How the MCP adapter reports failure: the one error table (``edge.errors``) as tool errors.

A failed call is a tool result with ``isError: true`` and two text blocks: one line an agent can
act on (what happened, then what to do: the table's advice), then the error as JSON ``{"error":
{code, message, details}}`` — the same shape as the REST body. It carries no
``structuredContent``: a client validates structured content against the tool's
``outputSchema`` (the TypeScript SDK does so even on errors), and an error is not the tool's
output, so the error travels as text every client shows.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from domain.errors import AmeideError, InvalidArgument
from edge.errors import advice_for, error_body, json_details, one_line, problems

MAX_PROBLEMS = 5


def next_step(error: AmeideError) -> str:
    """The advice for an error (the one table, nearest class along its MRO; a NOT_FOUND's by
    the kind of id it names)."""
    return advice_for(error)


def error_result(code: str, message: str, advice: str, details: dict[str, Any]) -> CallToolResult:
    """A tool error: one actionable line of text, then the error body as JSON text."""
    text = one_line(f"{code}: {message.rstrip('.')}. Next: {advice}.")
    body = json.dumps(error_body(code, message, details), ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text), TextContent(type="text", text=body)],
        is_error=True,
    )


def from_service_error(error: AmeideError) -> CallToolResult:
    """The tool error of a service error."""
    return error_result(error.code, error.message, next_step(error), json_details(error))


def from_validation_error(tool: str, error: ValidationError) -> CallToolResult:
    """The tool error of arguments that do not match the input schema."""
    found = problems(error.errors(), limit=MAX_PROBLEMS, where="arguments", count_more=True)
    return error_result(
        InvalidArgument.code,
        f"invalid arguments for {tool}: " + "; ".join(found),
        "fix them as the tool's input schema says and call again",
        {"problems": found},
    )


def internal_error(tool: str, trace_id: str) -> CallToolResult:
    """An unexpected failure (a bug): no internals leak, the trace id finds the log entry."""
    return error_result(
        "INTERNAL",
        f"{tool} failed unexpectedly (trace {trace_id})",
        "retry later; report the trace id to the operator if it persists",
        {"trace_id": trace_id},
    )
