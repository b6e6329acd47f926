"""The narrowing headers' names, one spelling for every surface and for the CLI's remote mode
(no imports: a client loads it without the service)."""

from __future__ import annotations

ON_BEHALF_OF_HEADER = "X-Ameide-On-Behalf-Of"
PURPOSE_HEADER = "X-Ameide-Purpose"
ROLES_HEADER = "X-Ameide-Roles"
"""The narrowing headers' names on HTTP (REST, MCP); gRPC metadata keys are the same, lower-case
(gRPC requires it): see :func:`metadata_key`."""


def metadata_key(header: str) -> str:
    """A narrowing header's gRPC metadata key (``x-ameide-purpose``)."""
    return header.lower()
