"""The audit trail of state changes and the access log of reads."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.audit import AuditEvent
from service.authz import Caller
from service.clock import Clock
from service.core import UnitOfWork


class AuditTrail:
    """Queues audit events into the unit of work; logs reads (who, for whom, why, what)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def event(
        self,
        uow: UnitOfWork,
        caller: Caller,
        chain_key: str,
        event_type: str,
        at: datetime,
        **fields: Any,
    ) -> None:
        """Queue one audit event for this state change."""
        payload = fields.pop("payload", {})
        uow.record(
            AuditEvent(
                chain_key=chain_key,
                event_type=event_type,
                occurred_at=at,
                actor=caller.principal_id,
                on_behalf_of=caller.on_behalf_of,
                purpose=caller.purpose,
                payload=payload,
                **fields,
            )
        )

    def log_read(
        self, uow: UnitOfWork, caller: Caller, operation: str, repo_key: str | None, **subject: Any
    ) -> None:
        """Record a read in the access log (who, for whom, why, what)."""
        uow.log_access(
            self.clock.now(),
            caller.principal_id,
            caller.on_behalf_of,
            caller.purpose,
            operation,
            repo_key,
            subject,
        )
