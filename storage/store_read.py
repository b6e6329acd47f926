"""Row mapping for the derived read side: chunks, the index outbox, stored read contexts."""

from __future__ import annotations

from sqlalchemy.engine import Connection


class ReadStore:
    """Mixin of ``Store`` (filled by the read-side work)."""

    conn: Connection
