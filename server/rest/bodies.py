"""Request bodies of the REST API (Pydantic at the edge, with the service's own input rules).

Fields left out take the service's defaults; unknown fields are refused (400), so a typo never
silently does something else. Ids, principals, scopes, enums and free text carry the domain's
patterns and caps (``server.rest.inputs``), so OpenAPI says what the service accepts.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, model_validator

from domain.errors import InvalidArgument
from domain.model import ChangeKind, SelectorKind, TargetSelector
from domain.values import (
    MAX_RATIONALE_CHARS,
    MAX_SUMMARY_CHARS,
    MAX_TITLE_CHARS,
    NOT_BLANK_PATTERN,
    validate_text,
)
from server.rest.inputs import (
    BaselineId,
    Body,
    ChangeKindName,
    ClassificationName,
    DelegationSubject,
    ElementId,
    ElementKindName,
    GrantScope,
    Principal,
    RelationshipKindName,
    RepositoryId,
    RoleName,
    SelectorName,
    TypeKey,
    VersionId,
    identifier,
    note_rule,
    note_schema,
    text_rule,
    text_schema,
)

Title = Annotated[str, text_rule("title", MAX_TITLE_CHARS), text_schema(MAX_TITLE_CHARS)]
OptionalTitle = Annotated[
    str,
    text_rule("title", MAX_TITLE_CHARS, required=False),
    text_schema(MAX_TITLE_CHARS, required=False),
]
Summary = Annotated[str, text_rule("summary", MAX_SUMMARY_CHARS), text_schema(MAX_SUMMARY_CHARS)]
Reason = Annotated[str, text_rule("reason", MAX_RATIONALE_CHARS), text_schema(MAX_RATIONALE_CHARS)]
Rationale = Annotated[
    str, text_rule("rationale", MAX_RATIONALE_CHARS), text_schema(MAX_RATIONALE_CHARS)
]
OptionalReason = Annotated[
    str, note_rule("reason", MAX_RATIONALE_CHARS), note_schema(MAX_RATIONALE_CHARS)
]
OptionalRationale = Annotated[
    str, note_rule("rationale", MAX_RATIONALE_CHARS), note_schema(MAX_RATIONALE_CHARS)
]
BaselineName = Annotated[
    str, text_rule("name", 200, required=False), text_schema(200, required=False)
]
ClientRequestId = Annotated[str, text_rule("client_request_id", 200), text_schema(200)]
Pins = Annotated[
    dict[ElementId, VersionId],
    Field(min_length=1),
    WithJsonSchema(
        {
            "type": "object",
            "minProperties": 1,
            "propertyNames": identifier("el", "element"),
            "additionalProperties": identifier("ver", "version"),
        }
    ),
]

_STRICT = ConfigDict(extra="forbid", strict=True)  # JSON types as written: 0 is no boolean


class CreateRepository(BaseModel):
    """A new repository."""

    model_config = _STRICT
    repository_id: RepositoryId


class GrantRequest(BaseModel):
    """A role on a scope."""

    model_config = _STRICT
    principal_id: Principal
    role: RoleName
    scope: GrantScope
    clearance: ClassificationName | None = Field(
        default=None, description="public, internal (default), confidential or restricted."
    )


class DelegationRequest(BaseModel):
    """Let a principal act on behalf of another on a scope."""

    model_config = _STRICT
    principal_id: Principal = Field(description="Who may act (a gateway, an agent).")
    on_behalf_of: DelegationSubject = Field(
        description="For whom: a principal, every principal of a kind (user:*) or anyone (*)."
    )
    scope: GrantScope


class TokenRequest(BaseModel):
    """Whom a new bearer token acts as."""

    model_config = _STRICT
    principal_id: Principal = Field(description="Yourself, or anyone if you are a global admin.")


class LegalHoldRequest(BaseModel):
    """Place or release a legal hold."""

    model_config = _STRICT
    held: bool


class CreateElement(BaseModel):
    """A canonical element with its version 1 (curator)."""

    model_config = _STRICT
    title: Title
    body: Body
    type_key: TypeKey | None = Field(default=None, description="Default ameide:doc.")
    element_kind: ElementKindName | None = Field(default=None, description="Default DOCUMENT.")
    classification: ClassificationName | None = Field(default=None, description="Default internal.")
    metadata: dict[str, Any] | None = None


class ReasonRequest(BaseModel):
    """An optional reason, recorded in the audit log."""

    model_config = _STRICT
    reason: OptionalReason | None = None


class EraseRequest(BaseModel):
    """Why a version's content is erased (required)."""

    model_config = _STRICT
    reason: Reason


class AddRelationship(BaseModel):
    """A relationship between two elements of one repository (curator)."""

    model_config = _STRICT
    source_element_id: ElementId
    target_element_id: ElementId
    relationship_kind: RelationshipKindName
    type_key: TypeKey = Field(description="Namespaced type, e.g. ameide:cites.")
    metadata: dict[str, Any] | None = Field(
        default=None, description="May pin a version: {target_version_id: ver_…}."
    )


_NOT_GIVEN: dict[str, Any] = {"type": "null"}
"""A property left out or ``null`` (a JSON Schema ``properties`` entry does not require it)."""
PROPOSE_RULES: dict[str, Any] = {
    "allOf": [
        {  # the service's TargetSelector rule
            "anyOf": [
                {
                    "required": ["selector", "baseline_id"],
                    "properties": {
                        "selector": {"const": SelectorKind.BASELINE_REF.value},
                        "baseline_id": {"type": "string"},
                    },
                },
                {
                    "properties": {
                        "selector": {"enum": [SelectorKind.PUBLISHED.value, None]},
                        "baseline_id": _NOT_GIVEN,
                    }
                },
            ]
        },
        {  # a CREATE has a title; an UPDATE is pinned to an element and a version
            "anyOf": [
                {
                    "required": ["change_kind", "title"],
                    "properties": {
                        "change_kind": {"const": ChangeKind.CREATE.value},
                        "title": {"type": "string", "pattern": NOT_BLANK_PATTERN},
                        "element_id": _NOT_GIVEN,  # a CREATE makes a new element
                        "target_version_id": _NOT_GIVEN,
                    },
                },
                {
                    "required": ["element_id", "target_version_id"],
                    "properties": {
                        "change_kind": {"enum": [ChangeKind.UPDATE.value, None]},
                        "element_id": {"type": "string"},
                        "target_version_id": {"type": "string"},
                    },
                },
            ]
        },
    ]
}


class ProposeRequest(BaseModel):
    """An UPDATE pinned to the version it was written against, or a CREATE."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=PROPOSE_RULES)
    body: Body = Field(description="The full proposed body.")
    summary: Summary = Field(description="One line: what changes and why.")
    change_kind: ChangeKindName | None = Field(
        default=None, description="UPDATE (default) or CREATE."
    )
    element_id: ElementId | None = Field(default=None, description="UPDATE: the element to change.")
    target_version_id: VersionId | None = Field(
        default=None, description="UPDATE: the version the body was written against (the pin)."
    )
    title: OptionalTitle | None = Field(default=None, description="Required for CREATE.")
    selector: SelectorName | None = Field(
        default=None, description="published (default) or baseline_ref."
    )
    baseline_id: BaselineId | None = Field(default=None, description="For selector baseline_ref.")
    metadata: dict[str, Any] | None = None
    client_request_id: ClientRequestId | None = Field(
        default=None, description="Idempotency key: a repeat returns the original proposal."
    )
    type_key: TypeKey | None = Field(default=None, description="CREATE: default ameide:doc.")
    element_kind: ElementKindName | None = Field(
        default=None, description="CREATE: default DOCUMENT."
    )
    classification: ClassificationName | None = Field(
        default=None, description="CREATE: default internal."
    )

    @model_validator(mode="after")
    def _pinned_or_created(self) -> ProposeRequest:
        """The rules of ``PROPOSE_RULES``, in the service's words (``TargetSelector``,
        ``propose``): checked here so the schema and the answer agree."""
        try:
            TargetSelector(SelectorKind(self.selector or SelectorKind.PUBLISHED), self.baseline_id)
            if (self.change_kind or ChangeKind.UPDATE) == ChangeKind.CREATE:
                validate_text(self.title, "title", MAX_TITLE_CHARS)
        except InvalidArgument as refused:
            raise ValueError(refused.message) from None
        if self.selector != SelectorKind.BASELINE_REF and self.baseline_id is not None:
            raise ValueError("target_selector published takes no baseline_id")
        if self.change_kind == ChangeKind.CREATE:
            return self
        if not self.element_id or not self.target_version_id:
            raise ValueError(
                "an UPDATE proposal must be pinned: give the target element "
                "and the target version it was written against"
            )
        return self


class ReviseRequest(BaseModel):
    """A clean replacement body for an OPEN proposal."""

    model_config = _STRICT
    body: Body
    summary: Summary | None = None
    title: OptionalTitle | None = None


class RationaleRequest(BaseModel):
    """An optional rationale, recorded in the decision artifact."""

    model_config = _STRICT
    rationale: OptionalRationale | None = None


class AcceptRequest(RationaleRequest):
    """An optional rationale, and the proposal version the curator reviewed."""

    expected_version_id: VersionId | None = Field(
        default=None,
        description="The proposal's body version you reviewed (its proposal_version_id): "
        "when the proposal was revised since, the accept is refused (409 CONFLICT).",
    )


class RejectRequest(BaseModel):
    """Why a proposal is rejected (required)."""

    model_config = _STRICT
    rationale: Rationale


class CreateBaseline(BaseModel):
    """A baseline: every canonical element at its head, or explicit pins."""

    model_config = _STRICT
    name: BaselineName | None = None
    pins: Pins | None = Field(default=None, description="{el_…: ver_…}; default all.")


class PromoteRequest(BaseModel):
    """Move the published pointer to a baseline (publisher)."""

    model_config = _STRICT
    baseline_id: BaselineId
    reason: OptionalReason | None = None
    expected_baseline_id: BaselineId | None = Field(
        default=None, description="Only if this is still the published baseline (CAS)."
    )


class RollbackRequest(BaseModel):
    """Publish an older baseline again."""

    model_config = _STRICT
    to: BaselineId | None = Field(
        default=None, description="Default: the previously published one."
    )
    reason: OptionalReason | None = None


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


class DriftReviewRequest(BaseModel):
    """Mark a drift reviewed (curator)."""

    model_config = _STRICT
    evidence_version_id: VersionId | None = Field(
        default=None, description="The evidence version reviewed; CONFLICT if it moved since."
    )
    note: OptionalRationale | None = None


class DriftProposeRequest(BaseModel):
    """Open a proposal on a drifted page."""

    model_config = _STRICT
    body: Body | None = Field(default=None, description="New body (default: the current one).")
    summary: Summary | None = None
