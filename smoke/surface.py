"""The operations the scenario needs, as one interface over every way of reaching the service.

``Surface`` is what ``smoke.scenario`` is written against: phase 1 drives it in-process
(``ServiceSurface``, calling ``MemoryService`` directly), phase 2 over the network
(``smoke.network.NetworkSurface``: gRPC and MCP). Results are plain dicts with docs/product.md field
names; failures are ``SurfaceError`` with the taxonomy's code, whatever the transport.

Principals are named by id (``agent:smoke-agent``); a surface turns one into a ``Caller`` or a
bearer token.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from domain.errors import AmeideError
from edge.results import as_json
from service.authz import Caller

T = TypeVar("T")
TOOL_ID = "ameide-smoke"


class SurfaceError(Exception):
    """A refused call: the taxonomy's ``code``, its message, and the transport's own status
    (a gRPC status name, ``isError`` for an MCP tool error, None in-process)."""

    def __init__(self, code: str, message: str, status: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Read:
    """A read_context request as the scenario states it (each surface spells it its way)."""

    repo: str
    query: str
    as_of: str | None = None
    max_items: int = 8
    selector: str = "published"

    def request(self) -> dict[str, Any]:
        """The docs/product.md §4 request."""
        tenant, org, repo = self.repo.split("/")
        req: dict[str, Any] = {
            "scope": {"tenant_id": tenant, "organization_id": org, "repository_id": repo},
            "selector": {"kind": self.selector},
            "query": self.query,
            "budget": {"max_items": self.max_items},
        }
        if self.as_of is not None:
            req["as_of"] = self.as_of
        return req


class Surface(Protocol):
    """What the scenario calls; ``via`` picks one of ``readers`` / ``proposers``."""

    label: str
    readers: tuple[str, ...]
    proposers: tuple[str, ...]

    def setup(self, repo: str) -> str: ...
    def ingest(self, repo: str, source: Path) -> dict[str, Any] | None: ...
    def sync_and_drift(self, repo: str, source: Path, page_id: str) -> str | None: ...
    def check_index(self) -> str: ...
    def create_element(
        self, who: str, repo: str, title: str, body: str, type_key: str
    ) -> dict[str, Any]: ...
    def create_baseline(self, who: str, repo: str, name: str) -> dict[str, Any]: ...
    def promote(self, who: str, baseline_id: str, repo: str, reason: str) -> dict[str, Any]: ...
    def published(self, who: str, repo: str, as_of: str | None = None) -> dict[str, Any]: ...
    def read_context(self, who: str, read: Read, via: str) -> dict[str, Any]: ...
    def version_body(self, who: str, element_id: str, version_id: str, via: str) -> str: ...
    def propose(
        self,
        who: str,
        repo: str,
        element_id: str,
        target_version_id: str,
        body: str,
        summary: str,
        via: str,
    ) -> dict[str, Any]: ...
    def proposal_show(
        self, who: str, proposal_id: str, on_behalf_of: str | None = None
    ) -> dict[str, Any]: ...
    def accept(self, who: str, proposal_id: str, rationale: str) -> dict[str, Any]: ...
    def rebase(self, who: str, proposal_id: str) -> dict[str, Any]: ...
    def verify_citations(
        self, who: str, context_id: str, citations: list[dict[str, Any]], via: str
    ) -> dict[str, Any]: ...


def guarded(call: Callable[[], object]) -> Any:
    """Run a service call, turning its typed error into a ``SurfaceError``; its answer as the
    JSON every surface emits (``edge.results.as_json``), like the other surfaces'."""
    try:
        return as_json(call())
    except AmeideError as exc:
        raise SurfaceError(exc.code, exc.message) from None


class ServiceSurface:
    """Phase 1: the scenario in-process, one ``MemoryService`` call per operation."""

    label = "service"
    readers: tuple[str, ...] = ("service",)
    proposers: tuple[str, ...] = ("service",)

    def __init__(self, instance: Any) -> None:
        self.instance = instance  # smoke.embedded.EmbeddedInstance
        self.svc = instance.service

    @staticmethod
    def caller(who: str) -> Caller:
        """The service's view of a principal."""
        return Caller(who, purpose="ameide test", tool_id=TOOL_ID)

    def setup(self, repo: str) -> str:
        """Create the repository and grant the cast their roles (as the embedded admin)."""
        return str(self.instance.setup(repo))

    def ingest(self, repo: str, source: Path) -> dict[str, Any] | None:
        """Mirror the backlog into ``repo`` as the ingestor."""
        return guarded(lambda: self.instance.ingest(repo, source))  # type: ignore[no-any-return]

    def sync_and_drift(self, repo: str, source: Path, page_id: str) -> str | None:
        """Register ``source`` as a source, change a file ``page_id`` cites, sync, see drift."""
        return guarded(lambda: self.instance.sync_and_drift(repo, source, page_id))  # type: ignore[no-any-return]

    def check_index(self) -> str:
        """The index is on disk and has applied every commit."""
        return str(self.instance.check_index())

    def create_element(
        self, who: str, repo: str, title: str, body: str, type_key: str
    ) -> dict[str, Any]:
        """A curator writes a canonical element."""
        caller = self.caller(who)
        return guarded(
            lambda: self.svc.elements.create_element(
                caller, repo, title=title, body=body, type_key=type_key
            )
        )

    def create_baseline(self, who: str, repo: str, name: str) -> dict[str, Any]:
        """Pin every head."""
        return guarded(lambda: self.svc.publishing.create_baseline(self.caller(who), repo, name))

    def promote(self, who: str, baseline_id: str, repo: str, reason: str) -> dict[str, Any]:
        """Move the published pointer."""
        return guarded(
            lambda: self.svc.publishing.promote(self.caller(who), baseline_id, repo, reason)
        )

    def published(self, who: str, repo: str, as_of: str | None = None) -> dict[str, Any]:
        """The published baseline now or at ``as_of``."""
        instant = datetime.fromisoformat(as_of.replace("Z", "+00:00")) if as_of else None
        return guarded(lambda: self.svc.publishing.published(self.caller(who), repo, instant))

    def read_context(self, who: str, read: Read, via: str) -> dict[str, Any]:
        """read_context with the §4 request."""
        return guarded(lambda: self.svc.reading.read_context(self.caller(who), read.request()))

    def version_body(self, who: str, element_id: str, version_id: str, via: str) -> str:
        """The body of one version."""
        got = guarded(
            lambda: self.svc.elements.get_element(self.caller(who), element_id, version_id)
        )
        return str(got["version"]["body"])

    def propose(
        self,
        who: str,
        repo: str,
        element_id: str,
        target_version_id: str,
        body: str,
        summary: str,
        via: str,
    ) -> dict[str, Any]:
        """An UPDATE proposal pinned to ``target_version_id``."""
        return guarded(
            lambda: self.svc.curation.propose(
                self.caller(who),
                repo,
                body=body,
                summary=summary,
                element_id=element_id,
                target_version_id=target_version_id,
            )
        )

    def proposal_show(
        self, who: str, proposal_id: str, on_behalf_of: str | None = None
    ) -> dict[str, Any]:
        """A proposal with its staleness (as ``who`` acting for ``on_behalf_of``, if given)."""
        caller = replace(self.caller(who), on_behalf_of=on_behalf_of)
        return guarded(lambda: self.svc.curation.proposal_show(caller, proposal_id))

    def accept(self, who: str, proposal_id: str, rationale: str) -> dict[str, Any]:
        """Accept a proposal."""
        return guarded(lambda: self.svc.review.accept(self.caller(who), proposal_id, rationale))

    def rebase(self, who: str, proposal_id: str) -> dict[str, Any]:
        """Rebase; the new proposal."""
        return guarded(lambda: self.svc.review.rebase(self.caller(who), proposal_id))

    def verify_citations(
        self, who: str, context_id: str, citations: list[dict[str, Any]], via: str
    ) -> dict[str, Any]:
        """Which citations were in the context."""
        return guarded(
            lambda: self.svc.reading.verify_citations(self.caller(who), context_id, citations)
        )
