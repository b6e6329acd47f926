"""Request bodies of the REST API (Pydantic at the edge; the service validates the values).

Fields left out take the service's defaults; unknown fields are refused (400), so a typo never
silently does something else.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_STRICT = ConfigDict(extra="forbid")


class CreateRepository(BaseModel):
    """A new repository."""

    model_config = _STRICT
    repository_id: str = Field(description="TENANT/ORG/REPO, e.g. acme/eng/platform.")


class GrantRequest(BaseModel):
    """A role on a scope."""

    model_config = _STRICT
    principal_id: str = Field(description="user:ID, agent:ID or service:ID.")
    role: str = Field(description="reader, agent, curator, publisher, ingestor, auditor, admin.")
    scope: str = Field(description="*, TENANT, TENANT/ORG or TENANT/ORG/REPO.")
    clearance: str | None = Field(
        default=None, description="public, internal (default), confidential or restricted."
    )


class TokenRequest(BaseModel):
    """Whom a new bearer token acts as."""

    model_config = _STRICT
    principal_id: str = Field(description="Yourself, or anyone if you are a global admin.")


class LegalHoldRequest(BaseModel):
    """Place or release a legal hold."""

    model_config = _STRICT
    held: bool


class CreateElement(BaseModel):
    """A canonical element with its version 1 (curator)."""

    model_config = _STRICT
    title: str
    body: str = Field(description="Markdown/text, at most 2 MiB.")
    type_key: str | None = Field(default=None, description="Default ameide:doc.")
    element_kind: str | None = Field(default=None, description="DOCUMENT (default), MODEL, …")
    classification: str | None = Field(default=None, description="Default internal.")
    metadata: dict[str, Any] | None = None


class ReasonRequest(BaseModel):
    """An optional reason, recorded in the audit log."""

    model_config = _STRICT
    reason: str | None = None


class EraseRequest(BaseModel):
    """Why a version's content is erased (required)."""

    model_config = _STRICT
    reason: str


class AddRelationship(BaseModel):
    """A relationship between two elements of one repository (curator)."""

    model_config = _STRICT
    source_element_id: str
    target_element_id: str
    relationship_kind: str = Field(description="SEMANTIC, CONTAINMENT or REFERENCE.")
    type_key: str = Field(description="Namespaced type, e.g. ameide:cites.")
    metadata: dict[str, Any] | None = Field(
        default=None, description="May pin a version: {target_version_id: ver_…}."
    )


class ProposeRequest(BaseModel):
    """An UPDATE pinned to the version it was written against, or a CREATE."""

    model_config = _STRICT
    body: str = Field(description="The full proposed body.")
    summary: str = Field(description="One line: what changes and why.")
    change_kind: str | None = Field(default=None, description="UPDATE (default) or CREATE.")
    element_id: str | None = Field(default=None, description="UPDATE: the element to change.")
    target_version_id: str | None = Field(
        default=None, description="UPDATE: the version the body was written against (the pin)."
    )
    title: str | None = Field(default=None, description="Required for CREATE.")
    selector: str | None = Field(default=None, description="published (default) or baseline_ref.")
    baseline_id: str | None = Field(default=None, description="For selector baseline_ref.")
    metadata: dict[str, Any] | None = None
    client_request_id: str | None = Field(
        default=None, description="Idempotency key: a repeat returns the original proposal."
    )
    type_key: str | None = Field(default=None, description="CREATE: default ameide:doc.")
    element_kind: str | None = Field(default=None, description="CREATE: default DOCUMENT.")
    classification: str | None = Field(default=None, description="CREATE: default internal.")


class ReviseRequest(BaseModel):
    """A clean replacement body for an OPEN proposal."""

    model_config = _STRICT
    body: str
    summary: str | None = None
    title: str | None = None


class RationaleRequest(BaseModel):
    """An optional rationale, recorded in the decision artifact."""

    model_config = _STRICT
    rationale: str | None = None


class RejectRequest(BaseModel):
    """Why a proposal is rejected (required)."""

    model_config = _STRICT
    rationale: str


class CreateBaseline(BaseModel):
    """A baseline: every canonical element at its head, or explicit pins."""

    model_config = _STRICT
    name: str | None = None
    pins: dict[str, str] | None = Field(default=None, description="{el_…: ver_…}; default all.")


class PromoteRequest(BaseModel):
    """Move the published pointer to a baseline (publisher)."""

    model_config = _STRICT
    baseline_id: str
    reason: str | None = None
    expected_baseline_id: str | None = Field(
        default=None, description="Only if this is still the published baseline (CAS)."
    )


class RollbackRequest(BaseModel):
    """Publish an older baseline again."""

    model_config = _STRICT
    to: str | None = Field(default=None, description="Default: the previously published one.")
    reason: str | None = None


class VerifyCitationsRequest(BaseModel):
    """Citations an agent made from a stored context."""

    model_config = _STRICT
    citations: list[Any] = Field(
        description="Objects like {version_id, element_id?, repository_id?, excerpt?}."
    )


class ReplayRequest(BaseModel):
    """How to replay a stored context."""

    model_config = _STRICT
    as_recorded: bool = Field(
        default=False, description="Pin the replay to the instant the context resolved."
    )
