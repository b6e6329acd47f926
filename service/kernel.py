"""What every use case is handed."""

from __future__ import annotations

from dataclasses import dataclass

from service.audit_trail import AuditTrail
from service.clock import Clock
from service.core import UowFactory
from service.gate import Gate


@dataclass(frozen=True)
class Kernel:
    """The four things every use case uses, built once in ``runtime`` and passed in."""

    uow: UowFactory
    gate: Gate
    audit: AuditTrail
    clock: Clock
