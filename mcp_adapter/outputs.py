"""Typed results of the MCP tools (their ``outputSchema``): the service's result shapes from
``service.results`` / ``service.results_read`` (the very models the REST API documents), plus
the MCP-only ``memory.health`` answer.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from service.results import ElementHistory, ElementWithVersion, Proposal, View
from service.results_drift import DriftList, GapsReport
from service.results_read import CitationsVerified, Neighborhood, ReadContext

Context = ReadContext
ElementResult = ElementWithVersion
History = ElementHistory
Verification = CitationsVerified
ProposalResult = Proposal
Drift = DriftList
Gaps = GapsReport

__all__ = [
    "Context",
    "Drift",
    "ElementResult",
    "Gaps",
    "Health",
    "History",
    "Neighborhood",
    "ProposalResult",
    "Verification",
]


class Health(View):
    status: str = Field(description="ok, or degraded when the index lags behind.")
    principal: str
    index: dict[str, Any] | None
    repositories: list[str] = Field(
        description="The repositories you may read (TENANT/ORG/REPO): use them as repository."
    )
