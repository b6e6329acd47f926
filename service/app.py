"""The service: each use-case group as a plain attribute, so an adapter's call reads as the path
to its use case (``svc.curation.propose(...)`` is ``service.governance.curation.Curation.propose``).

The groups are built in ``runtime`` with what they use and handed in; none inherits another.
Adapters (CLI, MCP, REST, gRPC, console) call only these groups' public methods, each of which
refuses a caller acting for someone without a delegation grant before anything else
(``service.kernel.acting``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields

from service.admin.discovery import Discovery
from service.admin.tenancy import Admin
from service.admin.tokens import TokenRegistry
from service.audit.erasure import Erasure
from service.audit.history import History
from service.freshness.drift import Drift
from service.freshness.gaps import Gaps
from service.governance.curation import Curation
from service.governance.elements import Elements
from service.governance.publishing import Publishing
from service.governance.review import Review
from service.indexing.maintenance import IndexAdmin
from service.ingesting.backlog import Ingest
from service.ingesting.sources import Sources
from service.reading.context import Reading
from service.reading.evaluation import Evaluation


@dataclass(frozen=True)
class MemoryService:
    """Every use case, written once, grouped by capability; CLI, MCP, REST and gRPC call these."""

    elements: Elements
    curation: Curation
    review: Review
    publishing: Publishing
    history: History
    admin: Admin
    discovery: Discovery
    tokens: TokenRegistry
    index: IndexAdmin
    erasure: Erasure
    reading: Reading
    evaluation: Evaluation
    ingest: Ingest
    drift: Drift
    gaps: Gaps
    sources: Sources


def _groups() -> dict[str, type]:
    """Each group's attribute name → its class."""
    return {
        f.name: f.type if isinstance(f.type, type) else globals()[str(f.type)]
        for f in fields(MemoryService)
    }


def operations() -> list[str]:
    """Every operation as ``group.method``, in the order the groups are declared."""
    return [
        f"{group}.{name}"
        for group, cls in _groups().items()
        for name, member in vars(cls).items()
        if not name.startswith("_") and inspect.isfunction(member)
    ]


def use_case(operation: str) -> Callable[..., object]:
    """The use case ``group.method`` names, as written (without ``acting``'s wrapper)."""
    group, method = operation.split(".")
    return inspect.unwrap(vars(_groups()[group])[method])  # type: ignore[no-any-return]
