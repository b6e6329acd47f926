"""Use cases of ingest: apply a backlog plan as evidence (filled by its issue)."""

from __future__ import annotations

from service.element_ops import ElementOps


class IngestOps(ElementOps):
    """Mirror markdown backlogs in as evidence."""
