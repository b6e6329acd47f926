"""Registered sources' queries: the registry, the schedule's lease, run records, deliveries.

The lease is a compare-and-set: ``lease_source`` updates the row only where no live lease is
held (and, for a scheduled run, only where the source is still due), in the caller's
transaction, so of several processes on one database exactly one gets ``True``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from storage.rows import dialect_insert
from storage.schema_sources import source_deliveries, source_runs, sources

_s, _r = sources.c, source_runs.c


def _lease_free(now: datetime) -> sa.ColumnElement[bool]:
    return sa.or_(_s.lease_until.is_(None), _s.lease_until < now)


def _due(now: datetime) -> sa.ColumnElement[bool]:
    return sa.or_(_s.queued_at.is_not(None), _s.next_run_at <= now)


class SourceStore:
    """Mixin of ``Store``: ``sources``, ``source_runs`` and ``source_deliveries``."""

    conn: Connection

    # -- the registry --------------------------------------------------------------------
    def insert_source(self, row: dict[str, Any]) -> None:
        """Register a source (``row`` has every column)."""
        self.conn.execute(sources.insert().values(**row))

    def get_source(self, source_id: str) -> dict[str, Any] | None:
        """One source by id (None when there is none)."""
        row = self.conn.execute(sa.select(sources).where(_s.source_id == source_id)).first()
        return dict(row._mapping) if row else None

    def find_source(self, repo_key: str, name: str) -> dict[str, Any] | None:
        """One source by its repository and name."""
        row = self.conn.execute(
            sa.select(sources).where(_s.repo_key == repo_key, _s.name == name)
        ).first()
        return dict(row._mapping) if row else None

    def list_sources(self, repo_key: str) -> list[dict[str, Any]]:
        """Every source registered for a repository, by name."""
        rows = self.conn.execute(
            sa.select(sources).where(_s.repo_key == repo_key).order_by(_s.name)
        )
        return [dict(r._mapping) for r in rows]

    def update_source(self, source_id: str, values: dict[str, Any]) -> bool:
        """Set columns of one source; False when it is gone."""
        done = self.conn.execute(sources.update().where(_s.source_id == source_id).values(**values))
        return bool(done.rowcount)

    def delete_source(self, source_id: str) -> bool:
        """Remove a source with its run records and deliveries."""
        self.conn.execute(source_runs.delete().where(_r.source_id == source_id))
        self.conn.execute(
            source_deliveries.delete().where(source_deliveries.c.source_id == source_id)
        )
        return bool(self.conn.execute(sources.delete().where(_s.source_id == source_id)).rowcount)

    # -- the schedule and its lease ------------------------------------------------------
    def due_sources(self, now: datetime, limit: int = 20) -> list[str]:
        """Sources due now (time or a queued webhook), not paused, with no live lease."""
        q = (
            sa.select(_s.source_id)
            .where(_s.paused.is_(False), _due(now), _lease_free(now))
            .order_by(_s.queued_at.is_(None), _s.next_run_at)
            .limit(limit)
        )
        return [r.source_id for r in self.conn.execute(q)]

    def lease_source(
        self, source_id: str, runner: str, now: datetime, until: datetime, *, due_only: bool
    ) -> bool:
        """Take the source's lease if nobody holds a live one (compare-and-set); with
        ``due_only`` also only if it is still due and not paused."""
        where = [_s.source_id == source_id, _lease_free(now)]
        if due_only:
            where += [_s.paused.is_(False), _due(now)]
        done = self.conn.execute(
            sources.update().where(*where).values(leased_by=runner, lease_until=until)
        )
        return bool(done.rowcount)

    def renew_lease(self, source_id: str, runner: str, until: datetime) -> bool:
        """Extend a lease this runner holds; False when it was lost."""
        done = self.conn.execute(
            sources.update()
            .where(_s.source_id == source_id, _s.leased_by == runner)
            .values(lease_until=until)
        )
        return bool(done.rowcount)

    def release_source(self, source_id: str, runner: str, values: dict[str, Any]) -> bool:
        """Drop this runner's lease and set the schedule's columns (``values``)."""
        done = self.conn.execute(
            sources.update()
            .where(_s.source_id == source_id, _s.leased_by == runner)
            .values(leased_by=None, lease_until=None, **values)
        )
        return bool(done.rowcount)

    def clear_queued(self, source_id: str, through: datetime) -> None:
        """Forget a queued webhook run that a run starting at ``through`` served."""
        self.conn.execute(
            sources.update()
            .where(_s.source_id == source_id, _s.queued_at <= through)
            .values(queued_at=None)
        )

    def queue_source(self, source_id: str, at: datetime) -> None:
        """Ask for a run as soon as possible (a webhook); an earlier request stays."""
        self.conn.execute(
            sources.update()
            .where(_s.source_id == source_id, _s.queued_at.is_(None))
            .values(queued_at=at)
        )

    def take_hook_token(
        self, source_id: str, now: datetime, capacity: float, per_second: float
    ) -> bool:
        """Take one token of the source's webhook bucket (refilled at ``per_second`` up to
        ``capacity``), by compare-and-set on the bucket; False when it is empty."""
        for _ in range(5):
            row = self.conn.execute(
                sa.select(_s.hook_tokens, _s.hook_refilled_at).where(_s.source_id == source_id)
            ).first()
            if row is None:
                return False
            last = row.hook_refilled_at
            elapsed = (now - last).total_seconds() if last is not None else capacity / per_second
            tokens = min(capacity, row.hook_tokens + max(0.0, elapsed) * per_second)
            if tokens < 1:
                return False
            same_time = (
                _s.hook_refilled_at.is_(None) if last is None else _s.hook_refilled_at == last
            )
            done = self.conn.execute(
                sources.update()
                .where(_s.source_id == source_id, _s.hook_tokens == row.hook_tokens, same_time)
                .values(hook_tokens=tokens - 1, hook_refilled_at=now)
            )
            if done.rowcount:
                return True
        return False

    # -- run records and deliveries ------------------------------------------------------
    def start_source_run(self, source_id: str, trigger: str, runner: str, at: datetime) -> int:
        """Record a run as started; returns its id."""
        done = self.conn.execute(
            source_runs.insert()
            .values(
                source_id=source_id, trigger=trigger, runner=runner, started_at=at, status="running"
            )
            .returning(_r.run_id)
        )
        return int(done.scalar_one())

    def abandon_source_runs(self, source_id: str, at: datetime, error: str) -> int:
        """Mark the source's runs still ``running`` as failed (their runner's lease expired:
        the caller holds the lease now, so nobody else is running it)."""
        done = self.conn.execute(
            source_runs.update()
            .where(_r.source_id == source_id, _r.status == "running")
            .values(status="failed", finished_at=at, error=error)
        )
        return int(done.rowcount)

    def finish_source_run(
        self,
        run_id: int,
        at: datetime,
        status: str,
        error: str | None,
        report: dict[str, Any] | None,
    ) -> None:
        """Record how a run ended."""
        self.conn.execute(
            source_runs.update()
            .where(_r.run_id == run_id)
            .values(finished_at=at, status=status, error=error, report=report)
        )

    def list_source_runs(self, source_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """The source's latest runs, newest first."""
        rows = self.conn.execute(
            sa.select(source_runs)
            .where(_r.source_id == source_id)
            .order_by(_r.run_id.desc())
            .limit(limit)
        )
        return [dict(r._mapping) for r in rows]

    def record_delivery(self, source_id: str, delivery_id: str, at: datetime) -> bool:
        """Remember a webhook delivery id; False when it was seen before (a redelivery)."""
        values = {"source_id": source_id, "delivery_id": delivery_id, "received_at": at}
        done = self.conn.execute(
            dialect_insert(self.conn, source_deliveries).values(**values).on_conflict_do_nothing()
        )
        return bool(done.rowcount)
