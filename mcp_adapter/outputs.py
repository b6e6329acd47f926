"""Typed results of the MCP tools (their ``outputSchema``): the service's JSON, documented.

Every model accepts fields it does not name, so a field the service adds later reaches the
agent instead of failing the schema. Instants are ISO-8601 UTC text.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Out(BaseModel):
    """Base of the result models."""

    model_config = ConfigDict(extra="allow")


class Excerpt(Out):
    chunk_key: str
    start: int
    end: int


class Citation(Out):
    repository_id: str
    element_id: str
    version_id: str
    excerpt: Excerpt | None = None


class ContextItem(Out):
    repository_id: str
    element_id: str
    version_id: str = Field(description="Cite this exact version.")
    title: str
    content: str
    source_kind: str = Field(description="CANONICAL (trusted) or INGESTED_EVIDENCE.")
    provenance: dict[str, Any]
    why_included: str
    score: float
    citations: list[Citation]
    relationship_path: list[dict[str, Any]]
    lifecycle: dict[str, Any] | None = Field(
        default=None,
        description="state: current, draft or superseded (prefer current pages when asked "
        "what is current), the evidence line, and source_time.",
    )


class SelectorUsed(Out):
    kind: str
    baseline_id: str | None
    as_of: str | None


class Context(Out):
    context_id: str = Field(description="Keep it: memory.verify_citations checks against it.")
    scope: dict[str, Any]
    selector_used: SelectorUsed
    items: list[ContextItem]
    context_block: str = Field(description="Ready-to-use text with [n] citation markers.")
    truncated: bool
    trace: dict[str, Any] | None = Field(description="memory.explain only: how it was built.")


class Element(Out):
    element_id: str
    repository_id: str
    element_kind: str
    type_key: str
    source_kind: str
    classification: str
    created_at: str
    created_by: str
    head_version_id: str | None
    retired_at: str | None


class Version(Out):
    version_id: str
    element_id: str
    seq: int
    parent_version_id: str | None
    title: str
    metadata: dict[str, Any]
    content_sha256: str
    recorded_at: str
    provenance: dict[str, Any]
    erased: bool


class ElementResult(Out):
    element: Element
    version: Version | None


class History(Out):
    element: Element
    versions: list[Version]


class Node(Element):
    version_id: str | None
    title: str | None
    retired: bool


class Edge(Out):
    relationship_id: str
    type_key: str
    source_element_id: str
    target_element_id: str


class Neighborhood(Out):
    element_id: str
    as_of: str | None
    nodes: list[Node]
    edges: list[Edge]


class Verdict(Out):
    citation: Any
    valid: bool
    reason: str = Field(description="in_context, within_returned_excerpt, not_in_context, …")


class Verification(Out):
    context_id: str
    all_valid: bool
    valid: int
    invalid: int
    results: list[Verdict]


class ProposalResult(Out):
    proposal_id: str
    repository_id: str
    status: str
    change_kind: str
    summary: str
    target_element_id: str | None
    target_version_id: str | None
    current_head_version_id: str | None
    stale: bool = Field(description="True when the element changed since your target version.")
    has_conflicts: bool
    replay: bool = Field(description="True when client_request_id repeated an earlier call.")
    client_request_id: str | None
    title: str
    diff: str | None = None


class Health(Out):
    status: str = Field(description="ok, or degraded when the index lags behind.")
    principal: str
    index: dict[str, Any] | None
