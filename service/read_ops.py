"""Use cases of the read side: read_context, citations, replay, the index (filled by its issue)."""

from __future__ import annotations

from service.core import ServiceCore


class ReadOps(ServiceCore):
    """Permission-trimmed, version-pinned reads."""
