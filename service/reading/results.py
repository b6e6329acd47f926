"""Result shapes of the read side: read_context (docs/product.md §4), citations, replay, versions,
neighbourhoods — typed once for REST and MCP (see ``service.results``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from service.results import Element, Version, View

JSON_TYPES = ("object", "array", "string", "number", "boolean", "null")
"""Any JSON value, said so (a schema without a keyword constrains nothing, and strict clients
warn about it)."""


class ErrorDetail(BaseModel):
    """What went wrong, in the taxonomy shared by every surface."""

    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="INVALID_ARGUMENT, NOT_FOUND, STALE_PROPOSAL, …")
    message: str = Field(description="One line for a human or an agent.")
    details: dict[str, Any] = Field(description="Machine-readable specifics (field, ids, …).")


class ScopeEcho(View):
    tenant_id: str
    organization_id: str
    repository_id: str | None


class SelectorUsed(View):
    kind: str
    baseline_id: str | None = Field(description="The baseline the selector resolved to.")
    as_of: str | None
    valid_at: str | None = None
    resolved_at: str | None = None
    baselines: dict[str, str | None] | None = Field(
        default=None,
        description="Per repository, when the scope spans an organization (null: none published).",
    )


class Excerpt(View):
    chunk_key: str
    start: int = Field(description="Character offset into the version body (inclusive).")
    end: int = Field(description="Character offset into the version body (exclusive).")


class Citation(View):
    repository_id: str
    element_id: str
    version_id: str
    excerpt: Excerpt | None = None


class ItemProvenance(View):
    actor_id: str | None = None
    source_repo: str | None = None
    commit_sha: str | None = None
    path: str | None = None


class ContextItem(View):
    repository_id: str
    element_id: str
    version_id: str = Field(description="Cite this exact version.")
    title: str
    content: str
    source_kind: str = Field(
        description="CANONICAL (trusted) or INGESTED_EVIDENCE (evidence, ranked below)."
    )
    provenance: ItemProvenance
    why_included: str = Field(description="keyword_match, relationship_path or direct_fetch.")
    score: float
    citations: list[Citation]
    relationship_path: list[dict[str, Any]]
    erased: bool | None = None
    lifecycle: dict[str, Any] | None = Field(
        default=None,
        description="state (current, draft, superseded or null when unstated; prefer current "
        "pages when asked what is current), the evidence line or field, and source_time (when "
        "the source last changed).",
    )
    score_breakdown: dict[str, Any] | None = Field(default=None, description="With explain.")


class ReadContext(View):
    context_id: str = Field(
        description="Stored: keep it to verify citations (memory.verify_citations) or replay it."
    )
    scope: ScopeEcho
    selector_used: SelectorUsed
    items: list[ContextItem]
    context_block: str = Field(description="Ready-to-use text with [n] citation markers.")
    truncated: bool
    trace: dict[str, Any] | None = Field(description="With explain: how the answer was built.")


class CitationVerdict(View):
    citation: Annotated[Any, WithJsonSchema({"anyOf": [{"type": t} for t in JSON_TYPES]})] = Field(
        description="The citation as it was sent (an object when well-formed; checked as is)."
    )
    valid: bool
    reason: str = Field(description="in_context, within_returned_excerpt, not_in_context, …")


class CitationsVerified(View):
    context_id: str
    all_valid: bool
    valid: int
    invalid: int
    results: list[CitationVerdict]


class Replay(View):
    context_id: str
    identical: bool
    replay_context_id: str | None = None
    replayed_as: str | None = None
    as_recorded: bool | None = None
    differences: list[dict[str, Any]] | None = None
    selector_used: dict[str, Any] | None = None
    error: ErrorDetail | None = Field(default=None, description="Why the replay could not run.")


class Chunk(View):
    chunk_key: str
    heading_path: str
    start: int
    end: int


class VersionWithChunks(View):
    element: Element
    version: Version
    chunks: list[Chunk]


class Node(Element):
    version_id: str | None
    title: str | None
    retired: bool


class Edge(View):
    relationship_id: str
    type_key: str
    source_element_id: str
    target_element_id: str


class Neighborhood(View):
    element_id: str
    as_of: str | None
    nodes: list[Node]
    edges: list[Edge]
