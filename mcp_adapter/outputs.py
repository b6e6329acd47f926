"""The one MCP-only result (its ``outputSchema``): ``memory.health``. Every other tool answers
with the service operation's own result model (``service.results*``), the very class its REST
operation documents, so nothing is renamed here."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from service.results import View


class Health(View):
    status: str = Field(description="ok, or degraded when the index lags behind.")
    principal: str
    index: dict[str, Any] | None
    repositories: list[str] = Field(
        description="The repositories you may read (TENANT/ORG/REPO): use them as repository."
    )
