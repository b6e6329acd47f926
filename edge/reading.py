"""Reading from a command line or a tool call: the scope text and the defaults of a read.

The caps and defaults themselves are the service's (``service.read_limits``; the request model
``service.read_request`` applies them to every request); they are named here so an adapter that
shows a default — a CLI option, an MCP input schema — shows the very value the service would
use, without loading the request model.
"""

from __future__ import annotations

from typing import Any

from domain.errors import InvalidArgument
from service.read_limits import (
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
    "read_scope",
]


def read_scope(text: str, *, field: str, malformed: str) -> dict[str, Any]:
    """``TENANT/ORG/REPO`` or ``TENANT/ORG`` → the ``scope`` block of a read request.

    Blanks around the text are ignored; each segment must be non-empty (the service checks the
    rest). ``malformed`` words the refusal for the surface that asked (formatted with
    ``text``); ``field`` goes into the error's details.
    """
    parts = text.strip().split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise InvalidArgument(malformed.format(text=text), field=field)
    return {
        "tenant_id": parts[0],
        "organization_id": parts[1],
        "repository_id": parts[2] if len(parts) == 3 else None,
    }
