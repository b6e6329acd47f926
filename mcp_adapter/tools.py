"""The MCP tools: name, description, input and output schema, hints, and the one service call.

Each ``run`` turns the validated arguments into one ``MemoryService`` call; nothing here decides
what an agent may see or do (the service does, for every surface alike).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mcp_types import ToolAnnotations
from pydantic import BaseModel

from domain.values import parse_instant
from edge import reading
from mcp_adapter import inputs, outputs
from service.app import MemoryService
from service.authz import Caller
from service.freshness.results import DriftList, GapsReport
from service.reading.request import ReadRequest
from service.reading.results import CitationsVerified, Neighborhood, ReadContext
from service.results import ElementHistory, ElementWithVersion, Proposal

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
PROPOSE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

Run = Callable[[MemoryService, Caller, Any], Any]


@dataclass(frozen=True)
class ToolSpec:
    """One tool as published in ``tools/list`` and run by ``tools/call``."""

    name: str
    title: str
    description: str
    input: type[BaseModel]
    output: type[BaseModel]
    annotations: ToolAnnotations
    run: Run
    hint: Callable[[Any], str | None] | None = None
    """A ``Next:`` line for a result that succeeded but needs acting on (a stale proposal),
    sent as a text block of its own so it is not buried in the JSON."""

    def published_name(self, style: str) -> str:
        """``memory.get_context``, or ``memory_get_context`` for clients that reject dots."""
        return self.name.replace(".", "_") if style == "underscore" else self.name


def instant(value: str | None, field: str = "as_of") -> datetime | None:
    """An ISO-8601 instant with a zone (``Z`` or an offset; the rule of ``domain.values``)."""
    if value is None:
        return None
    malformed = "{name} {text!r} is not ISO-8601; use e.g. 2026-01-31T12:00:00Z"
    return parse_instant(value, field, field=field, malformed=malformed)


def read_request(a: inputs.ReadArgs, *, explain: bool) -> ReadRequest:
    """The docs/product.md §4 request for ``get_context`` / ``explain`` (``edge.reading``)."""
    return reading.read_request(
        a.repository,
        a.query,
        selector=a.selector,
        baseline_id=a.baseline_id,
        element_ids=a.element_ids,
        version_ids=a.version_ids,
        as_of=a.as_of,
        valid_at=a.valid_at,
        include_evidence=a.include_evidence,
        hops=a.expand_hops,
        relationship_types=a.relationship_types,
        max_items=a.max_items,
        max_chars=a.max_chars,
        detail_level=a.detail_level,
        explain=explain,
        purpose=a.purpose,
    )


def search_request(a: inputs.SearchArgs) -> ReadRequest:
    """The cheap read behind ``memory.search``: titles and first sentences only."""
    return reading.read_request(
        a.repository,
        a.query,
        selector=a.selector,
        as_of=a.as_of,
        include_evidence=a.include_evidence,
        max_items=a.max_items,
        detail_level="titles",
        purpose=a.purpose,
    )


def _health(svc: MemoryService, caller: Caller, _: inputs.NoArgs) -> dict[str, Any]:
    health = svc.index.health()
    return {
        "status": "ok" if health.ready else "degraded",
        "principal": caller.principal_id,
        "index": health.index,
        "repositories": [r.repository_id for r in svc.discovery.list_repositories(caller)],
    }


def _propose(svc: MemoryService, caller: Caller, a: inputs.ProposeArgs) -> Any:
    given = a.model_dump(exclude_none=True, exclude={"repository"})
    return svc.curation.propose(caller, a.repository, **given)


def stale_hint(result: Any) -> str | None:
    """The next step after opening a proposal that is already stale, or None."""
    if not isinstance(result, dict) or not result.get("stale"):
        return None
    element, head = result.get("target_element_id"), result.get("current_head_version_id")
    return (
        f"STALE: proposal {result.get('proposal_id')} is pinned to "
        f"{result.get('target_version_id')}, but {element} has changed since: its head is "
        f"{head}. A curator cannot accept it as it is. Next: read the element again with "
        f"memory.get_element (element_id {element}), merge your change into that body, and "
        f"propose again with target_version_id {head}."
    )


CITE = (
    " Cite what you use by version_id (plus the excerpt span) from items[].citations, and keep "
    "context_id for memory.verify_citations."
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "memory.get_context",
        "Get governed context",
        "Get trusted, permission-checked context to answer a question from the governed "
        "knowledge base. By default reads the published (approved) truth; canonical content "
        "ranks above ingested evidence. Give repository plus query (or element_ids)." + CITE,
        inputs.ReadArgs,
        ReadContext,
        READ_ONLY,
        lambda svc, caller, a: svc.reading.read_context(caller, read_request(a, explain=False)),
    ),
    ToolSpec(
        "memory.search",
        "Search titles",
        "Cheap search: returns only titles and first sentences of matching elements, about "
        "10x smaller than memory.get_context. Use it to find element_ids, then call "
        "memory.get_context or memory.get_element for the content.",
        inputs.SearchArgs,
        ReadContext,
        READ_ONLY,
        lambda svc, caller, a: svc.reading.read_context(caller, search_request(a)),
    ),
    ToolSpec(
        "memory.get_element",
        "Get an element",
        "Get one element with the full body of its current head version (or of version_id, "
        "or as it was at as_of). Use the version_id it returns as target_version_id when you "
        "propose a change.",
        inputs.ElementArgs,
        ElementWithVersion,
        READ_ONLY,
        lambda svc, caller, a: svc.elements.get_element(
            caller, a.element_id, a.version_id, instant(a.as_of)
        ),
    ),
    ToolSpec(
        "memory.expand",
        "Expand relationships",
        "List the elements related to one element (its relationship neighbourhood, up to "
        "hops away), only through elements you may read. Use it to find linked SOPs, sources "
        "and evidence.",
        inputs.ExpandArgs,
        Neighborhood,
        READ_ONLY,
        lambda svc, caller, a: svc.reading.expand(
            caller,
            a.element_id,
            hops=a.hops,
            relationship_types=tuple(a.relationship_types),
            max_nodes=a.max_nodes,
            as_of=instant(a.as_of),
        ),
    ),
    ToolSpec(
        "memory.explain",
        "Explain a context",
        "Like memory.get_context, but also returns why each item was chosen: per-item score "
        "breakdowns and a trace (query terms, filters, candidates, drops with reasons). Use it "
        "when results look wrong or you must justify them. A curated item whose cited evidence "
        "changed since carries evidence_drift: hedge, or see memory.drift." + CITE,
        inputs.ReadArgs,
        ReadContext,
        READ_ONLY,
        lambda svc, caller, a: svc.reading.read_context(caller, read_request(a, explain=True)),
    ),
    ToolSpec(
        "memory.history",
        "Element history",
        "List every version of an element, oldest first (ids, titles, who and when; no "
        "bodies). Use memory.get_element with a version_id to read one.",
        inputs.HistoryArgs,
        ElementHistory,
        READ_ONLY,
        lambda svc, caller, a: svc.elements.element_history(caller, a.element_id),
    ),
    ToolSpec(
        "memory.verify_citations",
        "Verify citations",
        "Check that the citations in your answer point into what a memory.get_context call "
        "returned (same version, excerpt inside a returned span). Call it before answering; "
        "drop or fix any citation reported invalid.",
        inputs.VerifyArgs,
        CitationsVerified,
        READ_ONLY,
        lambda svc, caller, a: svc.reading.verify_citations(
            caller, a.context_id, [c.model_dump(exclude_none=True) for c in a.citations]
        ),
    ),
    ToolSpec(
        "memory.drift",
        "Drifted pages",
        "List curated pages that cite evidence which changed (or was retired) since the "
        "version they pin: the evidence, pinned and current versions, a diff and since when. "
        "Hedge an answer that relies on such a page, or propose an update to it.",
        inputs.DriftArgs,
        DriftList,
        READ_ONLY,
        lambda svc, caller, a: svc.drift.drift_list(caller, a.repository),
    ),
    ToolSpec(
        "memory.gaps",
        "Knowledge gaps",
        "Counts and dates of what the memory holds on a topic (or a whole repository): curated "
        "vs evidence, retired, superseded, newest times, drifted pages, and your questions that "
        "got no curated answer. Use it to tell where knowledge is thin or stale.",
        inputs.GapsArgs,
        GapsReport,
        READ_ONLY,
        lambda svc, caller, a: svc.gaps.gaps(caller, a.repository, a.topic),
    ),
    ToolSpec(
        "memory.propose",
        "Propose a change",
        "Propose a change for a curator to review; it never edits published truth directly. "
        "UPDATE: give element_id, the version_id you read as target_version_id, and the "
        "complete new body. CREATE: give title and body. Pass a client_request_id so a retry "
        "returns the same proposal. If the result says stale: true, the element changed since "
        "your version: read it again and propose against the new head.",
        inputs.ProposeArgs,
        Proposal,
        PROPOSE,
        _propose,
        stale_hint,
    ),
    ToolSpec(
        "memory.health",
        "Health",
        "Check that the memory server answers, who you are connected as, which repositories "
        "you may read, and whether the search index is up to date (status ok or degraded).",
        inputs.NoArgs,
        outputs.Health,
        READ_ONLY,
        _health,
    ),
)
