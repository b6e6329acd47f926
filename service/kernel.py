"""What every use case is handed."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from service.audit_trail import AuditTrail
from service.authz import Caller
from service.clock import Clock
from service.core import UowFactory
from service.gate import Gate

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Kernel:
    """The four things every use case uses, built once in ``runtime`` and passed in."""

    uow: UowFactory
    gate: Gate
    audit: AuditTrail
    clock: Clock


def acting(operation: Callable[P, R]) -> Callable[P, R]:
    """A use case that first refuses a caller naming another principal without a delegation
    grant for it — before it looks anything up, so the refusal is the same whether what it asks
    for exists or not (``Gate.delegations``). Every public use case of a group wears it."""

    @functools.wraps(operation)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        caller = args[1] if len(args) > 1 else kwargs.get("caller")
        if isinstance(caller, Caller) and caller.on_behalf_of:
            k: Kernel = getattr(args[0], "k")  # noqa: B009 - every group holds its kernel as k
            k.gate.check_caller(caller)
            with k.uow(readonly=True) as uow:
                k.gate.delegations(uow, caller)
        return operation(*args, **kwargs)

    return call
