"""Row mapping for index maintenance: the outbox, indexable versions, stored chunk rows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from domain.values import SourceKind
from storage import schema as t

INDEXED_SOURCE_KINDS = (SourceKind.CANONICAL.value, SourceKind.INGESTED_EVIDENCE.value)


@dataclass(frozen=True)
class IndexableVersion:
    """A version with the element attributes the index filters and ranks on."""

    version_id: str
    element_id: str
    repo_key: str
    source_kind: str
    type_key: str
    classification: str
    title: str
    body: str
    metadata: dict[str, Any]
    recorded_at: datetime
    retired_at: datetime | None
    erased: bool


_COLUMNS = (
    t.element_versions.c.version_id,
    t.element_versions.c.element_id,
    t.elements.c.repo_key,
    t.elements.c.source_kind,
    t.elements.c.type_key,
    t.elements.c.classification,
    t.element_versions.c.title,
    t.element_versions.c.body,
    t.element_versions.c.metadata,
    t.element_versions.c.recorded_at,
    t.elements.c.retired_at,
    t.element_versions.c.erased_at,
)


def _indexable(r: Any) -> IndexableVersion:
    return IndexableVersion(
        r.version_id, r.element_id, r.repo_key, r.source_kind, r.type_key, r.classification,
        r.title, r.body, dict(r.metadata or {}), r.recorded_at, r.retired_at,
        r.erased_at is not None,
    )  # fmt: skip


class IndexStore:
    """Mixin of ``Store``."""

    conn: Connection

    def pending_index_work(self, limit: int) -> list[tuple[int, str, str | None]]:
        """The oldest outbox rows: (outbox_id, element_id, version_id or None)."""
        c = t.index_outbox.c
        rows = self.conn.execute(
            sa.select(c.outbox_id, c.element_id, c.version_id).order_by(c.outbox_id).limit(limit)
        )
        return [(r.outbox_id, r.element_id, r.version_id) for r in rows]

    def pending_index_count(self) -> int:
        """How much index work is waiting (the index lag)."""
        return int(
            self.conn.execute(sa.select(sa.func.count()).select_from(t.index_outbox)).scalar_one()
        )

    def max_outbox_id(self) -> int:
        """The newest outbox id (0 when empty)."""
        c = t.index_outbox.c
        return int(
            self.conn.execute(sa.select(sa.func.coalesce(sa.func.max(c.outbox_id), 0))).scalar_one()
        )

    def delete_index_work(self, outbox_ids: Sequence[int]) -> None:
        """Forget applied outbox rows."""
        if outbox_ids:
            self.conn.execute(
                t.index_outbox.delete().where(t.index_outbox.c.outbox_id.in_(outbox_ids))
            )

    def delete_index_work_up_to(self, outbox_id: int) -> None:
        """Forget every outbox row up to ``outbox_id`` (a rebuild covered them)."""
        self.conn.execute(t.index_outbox.delete().where(t.index_outbox.c.outbox_id <= outbox_id))

    def indexable_versions(
        self, *, version_ids: Sequence[str] = (), element_ids: Sequence[str] = ()
    ) -> list[IndexableVersion]:
        """The given versions plus every version of the given elements, if indexable."""
        v, e = t.element_versions.c, t.elements.c
        cond = sa.or_(
            v.version_id.in_(list(version_ids)) if version_ids else sa.false(),
            v.element_id.in_(list(element_ids)) if element_ids else sa.false(),
        )
        q = (
            sa.select(*_COLUMNS)
            .join(t.elements, e.element_id == v.element_id)
            .where(cond, e.source_kind.in_(INDEXED_SOURCE_KINDS))
        )
        return [_indexable(r) for r in self.conn.execute(q)]

    def all_indexable_versions(self, batch: int = 500) -> Iterator[IndexableVersion]:
        """Every indexable version, streamed in batches (for a rebuild)."""
        v, e = t.element_versions.c, t.elements.c
        after = ""
        while True:
            q = (
                sa.select(*_COLUMNS)
                .join(t.elements, e.element_id == v.element_id)
                .where(e.source_kind.in_(INDEXED_SOURCE_KINDS), v.version_id > after)
                .order_by(v.version_id)
                .limit(batch)
            )
            rows = [_indexable(r) for r in self.conn.execute(q)]
            if not rows:
                return
            yield from rows
            after = rows[-1].version_id

    def replace_chunk_rows(self, version_ids: Sequence[str], rows: list[dict[str, Any]]) -> None:
        """Store the derived chunk rows of these versions (replacing earlier ones)."""
        if version_ids:
            self.conn.execute(t.chunks.delete().where(t.chunks.c.version_id.in_(list(version_ids))))
        if rows:
            self.conn.execute(t.chunks.insert(), rows)

    def clear_chunk_rows(self) -> None:
        """Drop every chunk row (a rebuild writes them all again)."""
        self.conn.execute(t.chunks.delete())

    def chunk_count(self) -> int:
        """Stored chunk rows."""
        return int(self.conn.execute(sa.select(sa.func.count()).select_from(t.chunks)).scalar_one())

    def indexable_version_count(self) -> int:
        """Versions the index should hold (indexable, not erased)."""
        v, e = t.element_versions.c, t.elements.c
        q = (
            sa.select(sa.func.count())
            .select_from(t.element_versions.join(t.elements, e.element_id == v.element_id))
            .where(e.source_kind.in_(INDEXED_SOURCE_KINDS), v.erased_at.is_(None))
        )
        return int(self.conn.execute(q).scalar_one())
