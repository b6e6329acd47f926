"""The proposal queue's filters and paging: which proposals, in which order, a page at a time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.errors import InvalidArgument
from domain.model import Proposal
from domain.values import validate_id, validate_instant, validate_principal

MAX_LIMIT = 500


@dataclass(frozen=True)
class QueueFilter:
    """What a curator narrows the queue to: a target element, a proposer, stale or fresh,
    with or without conflicts, opened since an instant; oldest first (or newest), ``limit`` at a
    time, continuing after the proposal ``cursor`` names."""

    element_id: str | None = None
    proposer: str | None = None
    stale: bool | None = None
    conflicts: bool | None = None
    since: datetime | None = None
    limit: int | None = None
    cursor: str | None = None
    newest_first: bool = False

    def checked(self) -> QueueFilter:
        """The filter, each field validated (INVALID_ARGUMENT naming it)."""
        if self.element_id is not None:
            validate_id(self.element_id, "el", "element")
        if self.proposer is not None:
            validate_principal(self.proposer, "proposer")
        if self.cursor is not None:
            validate_id(self.cursor, "prop", "cursor")
        validate_instant(self.since, "since")
        if self.limit is not None and not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidArgument(f"limit must be 1-{MAX_LIMIT}", field="limit")
        return self

    def admits(self, p: Proposal) -> bool:
        """Whether ``p`` passes the filters its record answers (staleness needs the head)."""
        return (
            (self.element_id is None or p.target_element_id == self.element_id)
            and (
                self.proposer is None
                or self.proposer in (p.proposed_by.actor_id, p.proposed_by.subject)
            )
            and (self.conflicts is None or p.has_conflicts is self.conflicts)
            and (self.since is None or p.created_at >= self.since)
        )

    def page(
        self, views: Sequence[dict[str, Any]], after: tuple[datetime, str] | None = None
    ) -> list[dict[str, Any]]:
        """The views that pass the staleness filter, ordered by (opened at, id), from past the
        cursor's position ``after`` (the cursor proposal's own key: it need not be in the
        queue any more — accepted, rebased — for the walk to continue), at most ``limit``."""
        rows = [v for v in views if self.stale is None or v["stale"] is self.stale]
        rows.sort(key=_position, reverse=self.newest_first)
        if after is not None:
            rows = [
                v
                for v in rows
                if (_position(v) < after if self.newest_first else _position(v) > after)
            ]
        return rows[: self.limit] if self.limit is not None else rows


def _position(view: dict[str, Any]) -> tuple[datetime, str]:
    """Where a proposal stands in the queue: opened at (as an instant, not as text), then id."""
    return datetime.fromisoformat(view["created_at"]), view["proposal_id"]
