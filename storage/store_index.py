"""Index maintenance's queries: the outbox, indexable versions, stored chunk rows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from domain.records import IndexableVersion
from domain.values import Classification, SourceKind, higher_classification
from storage import schema as t
from storage.rows import dialect_insert

INDEXED_SOURCE_KINDS = (SourceKind.CANONICAL.value, SourceKind.INGESTED_EVIDENCE.value)

_later = t.element_versions.alias("later")
_REPLACED_AT = (
    sa.select(sa.func.min(_later.c.recorded_at))
    .where(
        _later.c.element_id == t.element_versions.c.element_id,
        _later.c.recorded_at > t.element_versions.c.recorded_at,
    )
    .scalar_subquery()
    .label("replaced_at")
)
"""When the element's next version was recorded (erased ones count: they were current then)."""


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
    t.element_versions.c.classification.label("version_classification"),
    _REPLACED_AT,
)


def _higher(element_level: str, version_level: str | None) -> str:
    """The level the index files a version under (see ``domain.model.version_classification``)."""
    own = Classification(version_level) if version_level else None
    return higher_classification(Classification(element_level), own).value


def _indexable(r: Any) -> IndexableVersion:
    return IndexableVersion(
        r.version_id, r.element_id, r.repo_key, r.source_kind, r.type_key,
        _higher(r.classification, r.version_classification),
        r.title, r.body, dict(r.metadata or {}), r.recorded_at, r.retired_at,
        r.erased_at is not None, r.replaced_at,
    )  # fmt: skip


class IndexStore:
    """Mixin of ``Store``."""

    conn: Connection

    def index_work_after(self, position: int, limit: int) -> list[tuple[int, str, str | None]]:
        """The oldest rows after ``position``: (outbox_id, element_id, version_id or None)."""
        c = t.index_outbox.c
        q = sa.select(c.outbox_id, c.element_id, c.version_id).where(c.outbox_id > position)
        rows = self.conn.execute(q.order_by(c.outbox_id).limit(limit))
        return [(r.outbox_id, r.element_id, r.version_id) for r in rows]

    def index_work_in(self, ranges: Sequence[tuple[int, int]]) -> list[tuple[int, str, str | None]]:
        """The outbox rows whose ids lie in the inclusive ``ranges`` (an index's gaps)."""
        c = t.index_outbox.c
        found = []
        for start in range(0, len(ranges), 100):
            part = ranges[start : start + 100]
            q = sa.select(c.outbox_id, c.element_id, c.version_id).where(
                sa.or_(*(c.outbox_id.between(low, high) for low, high in part))
            )
            found += [(r.outbox_id, r.element_id, r.version_id) for r in self.conn.execute(q)]
        return sorted(found)

    def index_work_count(self, position: int, ranges: Sequence[tuple[int, int]] = ()) -> int:
        """How many outbox rows lie after ``position`` or in ``ranges`` (an index's lag)."""
        c = t.index_outbox.c
        count = sa.select(sa.func.count()).select_from(t.index_outbox)
        total = int(self.conn.execute(count.where(c.outbox_id > position)).scalar_one())
        for start in range(0, len(ranges), 100):
            part = ranges[start : start + 100]
            cond = sa.or_(*(c.outbox_id.between(low, high) for low, high in part))
            total += int(self.conn.execute(count.where(cond)).scalar_one())
        return total

    def oldest_work_enqueued(
        self, position: int, ranges: Sequence[tuple[int, int]] = ()
    ) -> datetime | None:
        """When the oldest row after ``position`` or in ``ranges`` was enqueued (``None``: no
        such row) — how long an index's oldest pending work has waited."""
        c = t.index_outbox.c
        conds = [c.outbox_id > position]
        for start in range(0, len(ranges), 100):
            part = ranges[start : start + 100]
            conds.append(sa.or_(*(c.outbox_id.between(low, high) for low, high in part)))
        q = sa.select(sa.func.min(c.enqueued_at)).where(sa.or_(*conds))
        at: datetime | None = self.conn.execute(q).scalar()
        return at

    def outbox_ids_between(self, low: int, high: int) -> list[int]:
        """The outbox ids in ``[low, high]``, ascending."""
        c = t.index_outbox.c
        q = sa.select(c.outbox_id).where(c.outbox_id.between(low, high)).order_by(c.outbox_id)
        return [int(i) for i in self.conn.execute(q).scalars()]

    def max_outbox_id(self) -> int:
        """The newest outbox id (0 when empty)."""
        c = t.index_outbox.c
        return int(
            self.conn.execute(sa.select(sa.func.coalesce(sa.func.max(c.outbox_id), 0))).scalar_one()
        )

    def outbox_pruned_through(self) -> int:
        """The largest outbox id pruned so far (0 when nothing was)."""
        c = t.index_outbox_pruned.c
        q = sa.select(sa.func.coalesce(sa.func.max(c.pruned_through), 0))
        return int(self.conn.execute(q).scalar_one())

    def prune_index_outbox(self, enqueued_before: datetime, at: datetime) -> int:
        """Delete the outbox rows enqueued before ``enqueued_before`` (never the newest row, so
        ids keep growing on SQLite too) and record how far pruning went; returns that id, or 0
        when nothing new was pruned. Safe to run in several processes at once."""
        c = t.index_outbox.c
        old = sa.select(sa.func.max(c.outbox_id)).where(c.enqueued_at < enqueued_before)
        through = min(self.conn.execute(old).scalar() or 0, self.max_outbox_id() - 1)
        if through <= self.outbox_pruned_through():
            return 0
        self.conn.execute(t.index_outbox.delete().where(c.outbox_id <= through))
        marker = t.index_outbox_pruned
        self._insert_or_replace(marker, [{"pruned_through": through, "pruned_at": at}], keep=True)
        self.conn.execute(marker.delete().where(marker.c.pruned_through < through))
        return through

    def _insert_or_replace(
        self, table: sa.Table, rows: list[dict[str, Any]], *, keep: bool = False
    ) -> None:
        """Insert ``rows``; a row whose primary key exists replaces it (or, with ``keep``, is
        dropped). One statement, so concurrent writers of the same keys never collide."""
        if not rows:
            return
        stmt = dialect_insert(self.conn, table)
        keys = [col.name for col in table.primary_key.columns]
        if keep:
            stmt = stmt.on_conflict_do_nothing(index_elements=keys)
        else:
            values = {col.name: stmt.excluded[col.name] for col in table.c if col.name not in keys}
            stmt = stmt.on_conflict_do_update(index_elements=keys, set_=values)
        self.conn.execute(stmt, rows)

    def indexable_versions(
        self, *, version_ids: Sequence[str] = (), element_ids: Sequence[str] = ()
    ) -> list[IndexableVersion]:
        """The given versions, the versions they replaced (whose ``replaced_at`` they set), and
        every version of the given elements, if indexable."""
        v, e = t.element_versions.c, t.elements.c
        cond = sa.or_(
            v.version_id.in_(list(version_ids)) if version_ids else sa.false(),
            v.version_id.in_(self._replaced_by(version_ids)) if version_ids else sa.false(),
            v.element_id.in_(list(element_ids)) if element_ids else sa.false(),
        )
        q = (
            sa.select(*_COLUMNS)
            .join(t.elements, e.element_id == v.element_id)
            .where(cond, e.source_kind.in_(INDEXED_SOURCE_KINDS))
        )
        return [_indexable(r) for r in self.conn.execute(q)]

    @staticmethod
    def _replaced_by(version_ids: Sequence[str]) -> sa.Select[Any]:
        """The version each of ``version_ids`` replaced: its element's latest one before it,
        unless erased (no index holds it any more)."""
        new, old = t.element_versions.alias("new"), t.element_versions.alias("old")
        latest_before = (
            sa.select(sa.func.max(old.c.recorded_at))
            .where(old.c.element_id == new.c.element_id, old.c.recorded_at < new.c.recorded_at)
            .scalar_subquery()
        )
        previous = t.element_versions.alias("previous")
        return (
            sa.select(previous.c.version_id)
            .join(new, new.c.element_id == previous.c.element_id)
            .where(
                new.c.version_id.in_(list(version_ids)),
                previous.c.recorded_at == latest_before,
                previous.c.erased_at.is_(None),
            )
        )

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
        """Store the derived chunk rows of these versions (replacing earlier ones).

        Every index applying the outbox writes them, so they may be written by several
        processes at once: stale rows are deleted by id and the rest are upserted in key order
        (no unique violation, and no deadlock between two writers of the same rows)."""
        c = t.chunks.c
        keep = {r["chunk_id"] for r in rows}
        for start in range(0, len(version_ids), 500):
            part = list(version_ids[start : start + 500])
            existing = self.conn.execute(sa.select(c.chunk_id).where(c.version_id.in_(part)))
            stale = sorted(set(existing.scalars()) - keep)
            for low in range(0, len(stale), 500):
                self.conn.execute(t.chunks.delete().where(c.chunk_id.in_(stale[low : low + 500])))
        self._insert_or_replace(t.chunks, sorted(rows, key=lambda r: str(r["chunk_id"])))

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
