"""Typed arguments of the MCP tools (their ``inputSchema``), written for a model to fill in.

Limits and defaults come from the service (``service.reading.limits``, via ``edge.reading``), so
the schema an agent sees and the checks the service makes agree. Unknown arguments are refused,
and so is a value of another JSON type than the schema says — ``"2"`` for an integer, ``"yes"``
or ``1`` for a boolean — exactly as REST refuses it (one strictness on every surface): integers
are ``service.reading.request.JsonInt`` (a JSON integer, never a string or a boolean, as the REST
read request takes them) and booleans ``StrictBool``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from edge.reading import (
    DEFAULT_HOPS,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_NODES,
    DEFAULT_NEIGHBOURHOOD_HOPS,
    MAX_CHARS,
    MAX_HOPS,
    MAX_IDS,
    MAX_ITEMS,
    MAX_NODES,
)
from service.reading.request import JsonInt

_STRICT = ConfigDict(extra="forbid")

Repository = Field(
    description="Where to read: TENANT/ORG/REPO (e.g. acme/eng/platform), or TENANT/ORG for "
    "every repository of the organization you may read."
)
AsOf = Field(
    default=None,
    description="Answer as recorded at this instant (ISO-8601 with a zone, e.g. "
    "2026-01-31T12:00:00Z). Omit for now.",
)


class ReadArgs(BaseModel):
    """What ``memory.get_context`` and ``memory.explain`` take."""

    model_config = _STRICT
    repository: str = Repository
    query: str | None = Field(
        default=None, description="The question in plain words. Give this, or element_ids."
    )
    element_ids: list[str] = Field(
        default_factory=list, max_length=MAX_IDS, description="Fetch these elements (el_…)."
    )
    version_ids: list[str] = Field(
        default_factory=list, max_length=MAX_IDS, description="Fetch these exact versions."
    )
    selector: Literal["published", "head", "baseline_ref", "version_ref"] = Field(
        default="published",
        description="published = the approved truth (use this unless told otherwise); head = "
        "latest accepted, possibly unpublished; baseline_ref needs baseline_id; version_ref "
        "needs version_ids.",
    )
    baseline_id: str | None = Field(default=None, description="For selector baseline_ref.")
    as_of: str | None = AsOf
    valid_at: str | None = Field(
        default=None, description="Keep only versions effective at this instant (ISO-8601)."
    )
    include_evidence: StrictBool = Field(
        default=True, description="Also return ingested evidence (ranked below canonical)."
    )
    detail_level: Literal["titles", "excerpt", "full"] = Field(
        default="excerpt", description="titles (cheapest), excerpt (matching sections) or full."
    )
    max_items: JsonInt = Field(
        default=DEFAULT_MAX_ITEMS, ge=1, le=MAX_ITEMS, description="At most this many items."
    )
    max_chars: JsonInt = Field(
        default=DEFAULT_MAX_CHARS,
        ge=1,
        le=MAX_CHARS,
        description="At most this many characters of context.",
    )
    expand_hops: JsonInt = Field(
        default=DEFAULT_HOPS,
        ge=0,
        le=MAX_HOPS,
        description="Also follow relationships this many hops.",
    )
    relationship_types: list[str] = Field(
        default_factory=list, max_length=50, description="Only follow these relationship types."
    )
    purpose: str | None = Field(
        default=None, max_length=500, description="Why you ask (recorded in the access log)."
    )


class SearchArgs(BaseModel):
    """What ``memory.search`` takes."""

    model_config = _STRICT
    repository: str = Repository
    query: str = Field(description="What to look for, in plain words.")
    max_items: JsonInt = Field(
        default=10, ge=1, le=MAX_ITEMS, description="At most this many hits."
    )
    selector: Literal["published", "head"] = Field(
        default="published", description="published (approved truth) or head (latest accepted)."
    )
    include_evidence: StrictBool = Field(default=True, description="Also search ingested evidence.")
    as_of: str | None = AsOf
    purpose: str | None = Field(default=None, max_length=500, description="Why you ask.")


class ElementArgs(BaseModel):
    """What ``memory.get_element`` takes."""

    model_config = _STRICT
    element_id: str = Field(description="The element (el_…), e.g. from a context item.")
    version_id: str | None = Field(
        default=None, description="This exact version (ver_…) instead of the current head."
    )
    as_of: str | None = AsOf


class ExpandArgs(BaseModel):
    """What ``memory.expand`` takes."""

    model_config = _STRICT
    element_id: str = Field(description="Start here (el_…).")
    hops: JsonInt = Field(
        default=DEFAULT_NEIGHBOURHOOD_HOPS,
        ge=1,
        le=MAX_HOPS,
        description="How many relationship hops.",
    )
    max_nodes: JsonInt = Field(
        default=DEFAULT_MAX_NODES, ge=1, le=MAX_NODES, description="At most this many nodes."
    )
    relationship_types: list[str] = Field(
        default_factory=list, max_length=50, description="Only these types (default: all)."
    )
    as_of: str | None = AsOf


class HistoryArgs(BaseModel):
    """What ``memory.history`` takes."""

    model_config = _STRICT
    element_id: str = Field(description="The element (el_…) whose versions to list.")


class DriftArgs(BaseModel):
    """What ``memory.drift`` takes."""

    model_config = _STRICT
    repository: str = Field(description="The repository: TENANT/ORG/REPO.")


class GapsArgs(BaseModel):
    """What ``memory.gaps`` takes."""

    model_config = _STRICT
    repository: str = Field(description="The repository: TENANT/ORG/REPO.")
    topic: str | None = Field(
        default=None,
        max_length=200,
        description="Count only elements (and your questions) mentioning every word; omit for "
        "the whole repository.",
    )


class Span(BaseModel):
    """Where in a version's body a citation points."""

    model_config = _STRICT
    chunk_key: str | None = None
    start: JsonInt = Field(ge=0, description="Character offset (inclusive).")
    end: JsonInt = Field(ge=1, description="Character offset (exclusive).")


class CitationArg(BaseModel):
    """One citation as an agent made it (copy it from the context item's citations)."""

    model_config = _STRICT
    version_id: str
    element_id: str | None = None
    repository_id: str | None = None
    excerpt: Span | None = None


class VerifyArgs(BaseModel):
    """What ``memory.verify_citations`` takes."""

    model_config = _STRICT
    context_id: str = Field(description="The context_id memory.get_context returned (ctx_…).")
    citations: list[CitationArg] = Field(max_length=1000, description="The citations you made.")


class ProposeArgs(BaseModel):
    """What ``memory.propose`` takes."""

    model_config = _STRICT
    repository: str = Field(description="TENANT/ORG/REPO of the element.")
    summary: str = Field(description="One line: what changes and why.")
    body: str = Field(description="The complete new body (markdown), not a diff.")
    element_id: str | None = Field(default=None, description="UPDATE: the element to change.")
    target_version_id: str | None = Field(
        default=None,
        description="UPDATE: the version_id you read and based the body on (the pin).",
    )
    change_kind: Literal["UPDATE", "CREATE"] = Field(
        default="UPDATE", description="UPDATE an element, or CREATE a new one (needs title)."
    )
    title: str | None = Field(default=None, description="Required for CREATE.")
    client_request_id: str | None = Field(
        default=None,
        max_length=200,
        description="Your idempotency key: retrying with the same key and arguments returns "
        "the original proposal instead of opening a second one.",
    )
    metadata: dict[str, Any] | None = Field(default=None, description="Tags, status, …")


class NoArgs(BaseModel):
    """A tool without arguments."""

    model_config = _STRICT
