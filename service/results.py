"""The shape of every service result, typed once: every operation of ``service.app`` returns
one of these models (or a list of them; the read side: ``service.reading.results``, discovery:
``service.admin.discovery_results``, the rest: ``service.results_ops``), REST declares it as the
``response_model``, MCP publishes its JSON Schema as the tool's ``outputSchema``, and every
adapter dumps it the same way at the edge (``edge.results.as_json``); gRPC maps that JSON to
its messages by field name (``server.grpc.convert``). ``service.views`` builds the parts of the
write side and administration.

Each model allows fields it does not name, so a field the service adds later passes through
instead of being dropped. Instants are ISO-8601 UTC text (``…Z``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class View(BaseModel):
    """Base of the response models: open to fields added later."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


class Repository(View):
    repository_id: str
    tenant_id: str
    organization_id: str
    created_at: str


_DELEGATION_CLEARANCE = "None for a delegation: acting for someone takes the lower of the two."
_SUBJECT = "With the role delegate: whom the principal may act for (a principal, user:* or *)."


class GrantMade(View):
    principal_id: str
    role: str
    scope: str
    clearance: str | None = Field(description=_DELEGATION_CLEARANCE)
    on_behalf_of: str | None = Field(default=None, description=_SUBJECT)
    granted_at: str


class GrantRow(View):
    principal_id: str
    role: str
    scope: str
    clearance: str | None = Field(description=_DELEGATION_CLEARANCE)
    on_behalf_of: str | None = Field(default=None, description=_SUBJECT)
    created_at: str
    created_by: str


class GrantRevoked(View):
    principal_id: str
    role: str
    scope: str
    on_behalf_of: str | None = Field(default=None, description=_SUBJECT)
    revoked: bool


class TokenMade(View):
    token_id: str
    principal_id: str
    token: str = Field(description="The secret; shown once, stored only as a hash.")
    created_at: str


class TokenRow(View):
    token_id: str
    principal_id: str
    created_at: str
    created_by: str
    parent_token_id: str | None = Field(
        description="The token this one was minted with (revoking it revokes this one)."
    )
    revoked: bool
    revoked_at: str | None
    revoked_by: str | None


class TokenRevoked(View):
    token_id: str
    revoked: bool


class LegalHold(View):
    repository_id: str
    legal_hold: bool
    changed_at: str


class IndexStatus(View):
    pending: int = Field(description="Committed changes not yet applied to the keyword index.")
    consistent: bool


class Element(View):
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
    retired_at_as_of: bool | None = None


class Provenance(View):
    actor_type: str
    actor_id: str
    tool_id: str | None = None
    source_repo: str | None = None
    commit_sha: str | None = None
    path: str | None = None
    on_behalf_of: str | None = Field(
        default=None, description="Whom the actor acted for (a delegation grant allowed it)."
    )


class Erasure(View):
    erased_at: str | None
    erased_by: str | None
    reason: str | None
    # the erase report, in the answer to erase_version only
    copies_erased: int | None = None
    derived_erased: int | None = None
    proposals_redacted: int | None = None
    proposals_withdrawn: int | None = None
    read_contexts_redacted: int | None = None
    not_erased: list[str] | None = None


class Version(View):
    version_id: str
    element_id: str
    seq: int
    parent_version_id: str | None
    title: str
    metadata: dict[str, Any]
    content_sha256: str
    recorded_at: str
    provenance: Provenance
    erased: bool
    erasure: Erasure | None = None
    body: str | None = Field(default=None, description="Omitted where only metadata is shown.")


class ElementWithVersion(View):
    element: Element
    version: Version | None


class ElementHistory(View):
    element: Element
    versions: list[Version]


class RetiredElement(View):
    element: Element


class Relationship(View):
    relationship_id: str
    repository_id: str
    relationship_kind: str
    type_key: str
    source_element_id: str
    target_element_id: str
    metadata: dict[str, Any]
    recorded_at: str
    recorded_by: str
    retired_at: str | None


class ProposedBy(View):
    actor_type: str
    actor_id: str
    tool_id: str | None
    on_behalf_of: str | None = Field(
        default=None,
        description="Whom the actor proposed for; that principal owns the proposal.",
    )


class Refusal(View):
    code: str = Field(description="The error accepting would give, e.g. STALE_PROPOSAL.")
    message: str


class AcceptPreview(View):
    proposal_id: str
    proposal_version_id: str = Field(description="Pass it to accept as expected_version_id.")
    would_accept: bool
    refusal: Refusal | None = Field(description="Why accepting would be refused (else null).")
    stale: bool
    has_conflicts: bool
    change_kind: str
    target_element_id: str | None
    head_version_id: str | None = Field(description="The head accepting would move from.")
    new_seq: int = Field(description="The sequence number the accepted version would get.")
    diff: str | None = Field(description="Unified diff against the pinned target.")


class TargetSelector(View):
    kind: str
    baseline_id: str | None


class Proposal(View):
    proposal_id: str
    repository_id: str
    proposal_element_id: str
    status: str = Field(description="OPEN, ACCEPTED, REJECTED, REBASED or WITHDRAWN.")
    change_kind: str
    summary: str
    proposed_by: ProposedBy
    target_selector: TargetSelector
    target_element_id: str | None
    target_version_id: str | None
    has_conflicts: bool
    client_request_id: str | None
    rebased_from: str | None
    rebased_to: str | None
    result_version_id: str | None
    created_at: str
    decided_at: str | None
    decided_by: str | None
    title: str
    metadata: dict[str, Any]
    proposal_version_id: str
    current_head_version_id: str | None
    stale: bool = Field(
        description="The pinned version is no longer the target's head: the element changed "
        "since your target version; read it again and propose against the new head."
    )
    selected_version_id: str | None = Field(
        description="What the proposal's target selector resolves to now."
    )
    body: str | None = Field(default=None, description="Omitted in the queue listing.")
    diff: str | None = Field(default=None, description="Unified diff against the pinned target.")
    diff_against_head: str | None = Field(
        default=None,
        description="Stale proposals only: unified diff from the target's current head to the "
        "proposal (what accepting after a rebase would change).",
    )
    published_version_id: str | None = Field(
        default=None,
        description="Stale proposals only: the target's version in the published baseline "
        "(null when the target is not published).",
    )
    diff_against_published: str | None = Field(
        default=None,
        description="Stale proposals only: unified diff from the published version to the "
        "proposal (null when the target is not published).",
    )
    replay: bool | None = Field(default=None, description="A repeat of a client_request_id.")
    decision_element_id: str | None = None
    rebased_from_view: dict[str, Any] | None = None
    version: Version | None = None


class Pin(View):
    element_id: str
    version_id: str


class Baseline(View):
    baseline_id: str
    repository_id: str
    name: str
    created_at: str
    created_by: str
    parent_baseline_id: str | None
    pins: list[Pin]
    published: bool | None = None


class BaselineRow(View):
    baseline_id: str
    name: str
    created_at: str
    created_by: str
    published: bool


class DiffSide(View):
    baseline_id: str
    version_id: str | None


class DiffEntry(View):
    element_id: str
    title: str
    from_: DiffSide = Field(alias="from")
    to: DiffSide
    diff: str


class BaselineDiff(View):
    from_baseline_id: str
    to_baseline_id: str
    added: list[DiffEntry]
    changed: list[DiffEntry]
    removed: list[DiffEntry]


class PointerMove(View):
    move_id: str
    repository_id: str
    from_: str | None = Field(alias="from")
    to: str
    at: str
    by: str
    reason: str | None
    decision_element_id: str | None = None


class Published(View):
    repository_id: str
    as_of: str | None
    baseline_id: str | None
    moves: list[PointerMove]


class AuditEvent(View):
    event_id: int
    chain_seq: int
    event_type: str
    occurred_at: str
    actor: str
    on_behalf_of: str | None
    purpose: str | None
    element_id: str | None
    version_id: str | None
    proposal_id: str | None
    baseline_id: str | None
    payload: dict[str, Any]
    hash: str | None


class AuditVerdict(View):
    repository_id: str | None
    chain: str
    ok: bool
    events_checked: int
    first_broken_event_id: int | None
    reason: str | None


class AccessRow(View):
    access_id: int
    at: str
    principal_id: str
    on_behalf_of: str | None
    purpose: str | None
    operation: str
    repository_id: str | None
    subject: Any
