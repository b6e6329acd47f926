"""Reading from a command line, a tool call or a form: one builder of the service's read request
(``read_request``) that the CLI, MCP and the console call with what their users typed, so a bad
repository, instant or selector is refused with the same code and words on every surface —
REST and gRPC send the request's own structure, which the same model validates.

The caps and defaults themselves are the service's (``service.reading.limits``; the request model
``service.reading.request`` applies them to every request); they are named here so an adapter that
shows a default — a CLI option, an MCP input schema — shows the very value the service would
use. The request model (pydantic) is imported by the first read, not with this module: the
CLI's ``--help`` and start-up stay fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from domain.errors import InvalidArgument
from service.reading.limits import (
    DEFAULT_HOPS,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_NODES,
    DEFAULT_NEIGHBOURHOOD_HOPS,
    MAX_CHARS,
    MAX_HOPS,
    MAX_IDS,
    MAX_ITEMS,
    MAX_NODES,
)

__all__ = [
    "DEFAULT_HOPS",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_NODES",
    "DEFAULT_NEIGHBOURHOOD_HOPS",
    "MAX_CHARS",
    "MAX_HOPS",
    "MAX_IDS",
    "MAX_ITEMS",
    "MAX_NODES",
    "read_request",
    "read_scope",
]

if TYPE_CHECKING:
    from service.reading.request import ReadRequest

SCOPE_FIELD = "repository"
MALFORMED_SCOPE = "malformed repository {text!r}: expected TENANT/ORG/REPO or TENANT/ORG"


def read_scope(text: str) -> dict[str, Any]:
    """``TENANT/ORG/REPO`` or ``TENANT/ORG`` → the ``scope`` block of a read request.

    Blanks around the text are ignored; each segment must be non-empty (the request model
    checks the rest). Anything else is one ``INVALID_ARGUMENT`` (:data:`MALFORMED_SCOPE`,
    ``details.field`` ``repository``), the same on every surface.
    """
    parts = text.strip().split("/") if isinstance(text, str) else []
    if len(parts) not in (2, 3) or not all(parts):
        raise InvalidArgument(MALFORMED_SCOPE.format(text=text), field=SCOPE_FIELD)
    return {
        "tenant_id": parts[0],
        "organization_id": parts[1],
        "repository_id": parts[2] if len(parts) == 3 else None,
    }


def read_request(
    repository: str,
    query: str | None = None,
    *,
    selector: str | None = None,
    baseline_id: str | None = None,
    element_ids: Sequence[str] = (),
    version_ids: Sequence[str] = (),
    as_of: str | None = None,
    valid_at: str | None = None,
    include_evidence: bool | None = None,
    hops: int | None = None,
    relationship_types: Sequence[str] = (),
    max_nodes: int | None = None,
    max_items: int | None = None,
    max_chars: int | None = None,
    detail_level: str | None = None,
    explain: bool | None = None,
    purpose: str | None = None,
) -> ReadRequest:
    """The service's read request from what a user typed: the repository (or organization) as
    text, instants as ISO-8601 text (blank: none), the selector's kind, the caps.

    Whatever is left as None takes the service's default. Validated here, once, by the
    request model itself (``service.reading.request.parse_request``): every problem of the
    request in one ``INVALID_ARGUMENT`` whose message is the same whichever surface asked —
    and the same REST answers for the same values in a request body."""
    from service.reading.request import parse_request  # pydantic: on the first read only

    chosen = {"kind": selector, "baseline_id": baseline_id or None}
    given: dict[str, Any] = {
        "scope": read_scope(repository),
        "principal": {"purpose": purpose} if purpose is not None else None,
        "selector": _given(chosen) or None,
        "query": query,
        "element_ids": list(element_ids) or None,
        "version_ids": list(version_ids) or None,
        "as_of": _instant_text(as_of),
        "valid_at": _instant_text(valid_at),
        "include_evidence": include_evidence,
        "expand": _given(
            {
                "hops": hops,
                "relationship_types": list(relationship_types) or None,
                "max_nodes": max_nodes,
            }
        )
        or None,
        "budget": _given({"max_items": max_items, "max_chars": max_chars}) or None,
        "detail_level": detail_level,
        "explain": explain,
    }
    return parse_request(_given(given))


def _given(values: dict[str, Any]) -> dict[str, Any]:
    """The entries a caller gave (None: left to the service's default)."""
    return {name: value for name, value in values.items() if value is not None}


def _instant_text(text: str | None) -> str | None:
    """An instant as typed; a blank one (an empty form field) is none."""
    return text if text is None or text.strip() else None
