"""Row mapping for ingest: sources with their last ingested commit, and mirrored file paths."""

from __future__ import annotations

from sqlalchemy.engine import Connection


class IngestStore:
    """Mixin of ``Store`` (filled by the ingest work)."""

    conn: Connection
