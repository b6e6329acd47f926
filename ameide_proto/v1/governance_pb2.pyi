from ameide_proto.v1 import common_pb2 as _common_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TargetSelector(_message.Message):
    __slots__ = ("kind", "baseline_id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    kind: str
    baseline_id: str
    def __init__(self, kind: _Optional[str] = ..., baseline_id: _Optional[str] = ...) -> None: ...

class Proposal(_message.Message):
    __slots__ = ("proposal_id", "repository_id", "proposal_element_id", "status", "change_kind", "summary", "proposed_by", "target_selector", "target_element_id", "target_version_id", "has_conflicts", "client_request_id", "rebased_from", "rebased_to", "result_version_id", "created_at", "decided_at", "decided_by", "title", "body", "metadata", "proposal_version_id", "current_head_version_id", "stale", "selected_version_id", "diff", "replay", "decision_element_id", "diff_against_head", "published_version_id", "diff_against_published")
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    PROPOSAL_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHANGE_KIND_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PROPOSED_BY_FIELD_NUMBER: _ClassVar[int]
    TARGET_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TARGET_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    HAS_CONFLICTS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REBASED_FROM_FIELD_NUMBER: _ClassVar[int]
    REBASED_TO_FIELD_NUMBER: _ClassVar[int]
    RESULT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROPOSAL_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    CURRENT_HEAD_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    SELECTED_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    DECISION_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    DIFF_AGAINST_HEAD_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    DIFF_AGAINST_PUBLISHED_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    repository_id: str
    proposal_element_id: str
    status: str
    change_kind: str
    summary: str
    proposed_by: _common_pb2.Provenance
    target_selector: TargetSelector
    target_element_id: str
    target_version_id: str
    has_conflicts: bool
    client_request_id: str
    rebased_from: str
    rebased_to: str
    result_version_id: str
    created_at: str
    decided_at: str
    decided_by: str
    title: str
    body: str
    metadata: _struct_pb2.Struct
    proposal_version_id: str
    current_head_version_id: str
    stale: bool
    selected_version_id: str
    diff: str
    replay: bool
    decision_element_id: str
    diff_against_head: str
    published_version_id: str
    diff_against_published: str
    def __init__(self, proposal_id: _Optional[str] = ..., repository_id: _Optional[str] = ..., proposal_element_id: _Optional[str] = ..., status: _Optional[str] = ..., change_kind: _Optional[str] = ..., summary: _Optional[str] = ..., proposed_by: _Optional[_Union[_common_pb2.Provenance, _Mapping]] = ..., target_selector: _Optional[_Union[TargetSelector, _Mapping]] = ..., target_element_id: _Optional[str] = ..., target_version_id: _Optional[str] = ..., has_conflicts: _Optional[bool] = ..., client_request_id: _Optional[str] = ..., rebased_from: _Optional[str] = ..., rebased_to: _Optional[str] = ..., result_version_id: _Optional[str] = ..., created_at: _Optional[str] = ..., decided_at: _Optional[str] = ..., decided_by: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., proposal_version_id: _Optional[str] = ..., current_head_version_id: _Optional[str] = ..., stale: _Optional[bool] = ..., selected_version_id: _Optional[str] = ..., diff: _Optional[str] = ..., replay: _Optional[bool] = ..., decision_element_id: _Optional[str] = ..., diff_against_head: _Optional[str] = ..., published_version_id: _Optional[str] = ..., diff_against_published: _Optional[str] = ...) -> None: ...

class ProposeRequest(_message.Message):
    __slots__ = ("repository_id", "change_kind", "element_id", "target_version_id", "title", "body", "summary", "target_selector", "metadata", "client_request_id", "type_key", "element_kind", "classification")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGE_KIND_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TARGET_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CLIENT_REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_KEY_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_KIND_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    change_kind: str
    element_id: str
    target_version_id: str
    title: str
    body: str
    summary: str
    target_selector: TargetSelector
    metadata: _struct_pb2.Struct
    client_request_id: str
    type_key: str
    element_kind: str
    classification: str
    def __init__(self, repository_id: _Optional[str] = ..., change_kind: _Optional[str] = ..., element_id: _Optional[str] = ..., target_version_id: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., summary: _Optional[str] = ..., target_selector: _Optional[_Union[TargetSelector, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., client_request_id: _Optional[str] = ..., type_key: _Optional[str] = ..., element_kind: _Optional[str] = ..., classification: _Optional[str] = ...) -> None: ...

class ListProposalsRequest(_message.Message):
    __slots__ = ("repository_id", "status", "element_id", "proposer", "stale", "conflicts", "since", "newest_first", "page_size", "page_token")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROPOSER_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    CONFLICTS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    NEWEST_FIRST_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    status: str
    element_id: str
    proposer: str
    stale: bool
    conflicts: bool
    since: str
    newest_first: bool
    page_size: int
    page_token: str
    def __init__(self, repository_id: _Optional[str] = ..., status: _Optional[str] = ..., element_id: _Optional[str] = ..., proposer: _Optional[str] = ..., stale: _Optional[bool] = ..., conflicts: _Optional[bool] = ..., since: _Optional[str] = ..., newest_first: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListProposalsResponse(_message.Message):
    __slots__ = ("proposals", "next_page_token")
    PROPOSALS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    proposals: _containers.RepeatedCompositeFieldContainer[Proposal]
    next_page_token: str
    def __init__(self, proposals: _Optional[_Iterable[_Union[Proposal, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetProposalRequest(_message.Message):
    __slots__ = ("proposal_id",)
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    def __init__(self, proposal_id: _Optional[str] = ...) -> None: ...

class ReviseProposalRequest(_message.Message):
    __slots__ = ("proposal_id", "body", "summary", "title")
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    body: str
    summary: str
    title: str
    def __init__(self, proposal_id: _Optional[str] = ..., body: _Optional[str] = ..., summary: _Optional[str] = ..., title: _Optional[str] = ...) -> None: ...

class AcceptProposalRequest(_message.Message):
    __slots__ = ("proposal_id", "rationale", "expected_version_id")
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    rationale: str
    expected_version_id: str
    def __init__(self, proposal_id: _Optional[str] = ..., rationale: _Optional[str] = ..., expected_version_id: _Optional[str] = ...) -> None: ...

class RejectProposalRequest(_message.Message):
    __slots__ = ("proposal_id", "rationale")
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    rationale: str
    def __init__(self, proposal_id: _Optional[str] = ..., rationale: _Optional[str] = ...) -> None: ...

class RebaseProposalRequest(_message.Message):
    __slots__ = ("proposal_id",)
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    def __init__(self, proposal_id: _Optional[str] = ...) -> None: ...

class ProposalRef(_message.Message):
    __slots__ = ("proposal_id", "status")
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    status: str
    def __init__(self, proposal_id: _Optional[str] = ..., status: _Optional[str] = ...) -> None: ...

class RebaseProposalResponse(_message.Message):
    __slots__ = ("proposal", "previous", "version")
    PROPOSAL_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    proposal: Proposal
    previous: ProposalRef
    version: _common_pb2.Version
    def __init__(self, proposal: _Optional[_Union[Proposal, _Mapping]] = ..., previous: _Optional[_Union[ProposalRef, _Mapping]] = ..., version: _Optional[_Union[_common_pb2.Version, _Mapping]] = ...) -> None: ...

class WithdrawProposalRequest(_message.Message):
    __slots__ = ("proposal_id", "rationale")
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    proposal_id: str
    rationale: str
    def __init__(self, proposal_id: _Optional[str] = ..., rationale: _Optional[str] = ...) -> None: ...

class Pin(_message.Message):
    __slots__ = ("element_id", "version_id")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    version_id: str
    def __init__(self, element_id: _Optional[str] = ..., version_id: _Optional[str] = ...) -> None: ...

class Baseline(_message.Message):
    __slots__ = ("baseline_id", "repository_id", "name", "created_at", "created_by", "parent_baseline_id", "pins", "published")
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    PARENT_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    PINS_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_FIELD_NUMBER: _ClassVar[int]
    baseline_id: str
    repository_id: str
    name: str
    created_at: str
    created_by: str
    parent_baseline_id: str
    pins: _containers.RepeatedCompositeFieldContainer[Pin]
    published: bool
    def __init__(self, baseline_id: _Optional[str] = ..., repository_id: _Optional[str] = ..., name: _Optional[str] = ..., created_at: _Optional[str] = ..., created_by: _Optional[str] = ..., parent_baseline_id: _Optional[str] = ..., pins: _Optional[_Iterable[_Union[Pin, _Mapping]]] = ..., published: _Optional[bool] = ...) -> None: ...

class CreateBaselineRequest(_message.Message):
    __slots__ = ("repository_id", "name", "pins")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PINS_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    name: str
    pins: _containers.RepeatedCompositeFieldContainer[Pin]
    def __init__(self, repository_id: _Optional[str] = ..., name: _Optional[str] = ..., pins: _Optional[_Iterable[_Union[Pin, _Mapping]]] = ...) -> None: ...

class GetBaselineRequest(_message.Message):
    __slots__ = ("baseline_id",)
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    baseline_id: str
    def __init__(self, baseline_id: _Optional[str] = ...) -> None: ...

class ListBaselinesRequest(_message.Message):
    __slots__ = ("repository_id",)
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    def __init__(self, repository_id: _Optional[str] = ...) -> None: ...

class BaselineSummary(_message.Message):
    __slots__ = ("baseline_id", "name", "created_at", "created_by", "published")
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_FIELD_NUMBER: _ClassVar[int]
    baseline_id: str
    name: str
    created_at: str
    created_by: str
    published: bool
    def __init__(self, baseline_id: _Optional[str] = ..., name: _Optional[str] = ..., created_at: _Optional[str] = ..., created_by: _Optional[str] = ..., published: _Optional[bool] = ...) -> None: ...

class ListBaselinesResponse(_message.Message):
    __slots__ = ("baselines",)
    BASELINES_FIELD_NUMBER: _ClassVar[int]
    baselines: _containers.RepeatedCompositeFieldContainer[BaselineSummary]
    def __init__(self, baselines: _Optional[_Iterable[_Union[BaselineSummary, _Mapping]]] = ...) -> None: ...

class PointerMove(_message.Message):
    __slots__ = ("move_id", "repository_id", "from_baseline_id", "to_baseline_id", "at", "by", "reason", "decision_element_id")
    MOVE_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    TO_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DECISION_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    move_id: str
    repository_id: str
    from_baseline_id: str
    to_baseline_id: str
    at: str
    by: str
    reason: str
    decision_element_id: str
    def __init__(self, move_id: _Optional[str] = ..., repository_id: _Optional[str] = ..., from_baseline_id: _Optional[str] = ..., to_baseline_id: _Optional[str] = ..., at: _Optional[str] = ..., by: _Optional[str] = ..., reason: _Optional[str] = ..., decision_element_id: _Optional[str] = ...) -> None: ...

class PromoteRequest(_message.Message):
    __slots__ = ("baseline_id", "repository_id", "reason", "expected_baseline_id")
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    baseline_id: str
    repository_id: str
    reason: str
    expected_baseline_id: str
    def __init__(self, baseline_id: _Optional[str] = ..., repository_id: _Optional[str] = ..., reason: _Optional[str] = ..., expected_baseline_id: _Optional[str] = ...) -> None: ...

class RollbackRequest(_message.Message):
    __slots__ = ("repository_id", "to_baseline_id", "reason")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    TO_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    to_baseline_id: str
    reason: str
    def __init__(self, repository_id: _Optional[str] = ..., to_baseline_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class GetPublishedRequest(_message.Message):
    __slots__ = ("repository_id", "as_of")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    as_of: str
    def __init__(self, repository_id: _Optional[str] = ..., as_of: _Optional[str] = ...) -> None: ...

class GetPublishedResponse(_message.Message):
    __slots__ = ("repository_id", "as_of", "baseline_id", "moves")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    as_of: str
    baseline_id: str
    moves: _containers.RepeatedCompositeFieldContainer[PointerMove]
    def __init__(self, repository_id: _Optional[str] = ..., as_of: _Optional[str] = ..., baseline_id: _Optional[str] = ..., moves: _Optional[_Iterable[_Union[PointerMove, _Mapping]]] = ...) -> None: ...

class AuditEvent(_message.Message):
    __slots__ = ("event_id", "chain_seq", "event_type", "occurred_at", "actor", "on_behalf_of", "purpose", "element_id", "version_id", "proposal_id", "baseline_id", "payload", "hash")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHAIN_SEQ_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    chain_seq: int
    event_type: str
    occurred_at: str
    actor: str
    on_behalf_of: str
    purpose: str
    element_id: str
    version_id: str
    proposal_id: str
    baseline_id: str
    payload: _struct_pb2.Struct
    hash: str
    def __init__(self, event_id: _Optional[int] = ..., chain_seq: _Optional[int] = ..., event_type: _Optional[str] = ..., occurred_at: _Optional[str] = ..., actor: _Optional[str] = ..., on_behalf_of: _Optional[str] = ..., purpose: _Optional[str] = ..., element_id: _Optional[str] = ..., version_id: _Optional[str] = ..., proposal_id: _Optional[str] = ..., baseline_id: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., hash: _Optional[str] = ...) -> None: ...

class GetHistoryRequest(_message.Message):
    __slots__ = ("repository_id", "since", "until", "element_id", "actor", "limit", "before", "after")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    since: str
    until: str
    element_id: str
    actor: str
    limit: int
    before: int
    after: int
    def __init__(self, repository_id: _Optional[str] = ..., since: _Optional[str] = ..., until: _Optional[str] = ..., element_id: _Optional[str] = ..., actor: _Optional[str] = ..., limit: _Optional[int] = ..., before: _Optional[int] = ..., after: _Optional[int] = ...) -> None: ...

class GetHistoryResponse(_message.Message):
    __slots__ = ("events", "prev_cursor", "next_cursor")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    PREV_CURSOR_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[AuditEvent]
    prev_cursor: int
    next_cursor: int
    def __init__(self, events: _Optional[_Iterable[_Union[AuditEvent, _Mapping]]] = ..., prev_cursor: _Optional[int] = ..., next_cursor: _Optional[int] = ...) -> None: ...

class AccessLogEntry(_message.Message):
    __slots__ = ("access_id", "at", "principal_id", "on_behalf_of", "purpose", "operation", "repository_id", "subject")
    ACCESS_ID_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    access_id: int
    at: str
    principal_id: str
    on_behalf_of: str
    purpose: str
    operation: str
    repository_id: str
    subject: _struct_pb2.Struct
    def __init__(self, access_id: _Optional[int] = ..., at: _Optional[str] = ..., principal_id: _Optional[str] = ..., on_behalf_of: _Optional[str] = ..., purpose: _Optional[str] = ..., operation: _Optional[str] = ..., repository_id: _Optional[str] = ..., subject: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class GetAccessLogRequest(_message.Message):
    __slots__ = ("repository_id", "limit")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    limit: int
    def __init__(self, repository_id: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class GetAccessLogResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[AccessLogEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[AccessLogEntry, _Mapping]]] = ...) -> None: ...

class VerifyAuditRequest(_message.Message):
    __slots__ = ("repository_id",)
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    def __init__(self, repository_id: _Optional[str] = ...) -> None: ...

class VerifyAuditResponse(_message.Message):
    __slots__ = ("repository_id", "chain", "ok", "events_checked", "first_broken_event_id", "reason")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    CHAIN_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    EVENTS_CHECKED_FIELD_NUMBER: _ClassVar[int]
    FIRST_BROKEN_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    chain: str
    ok: bool
    events_checked: int
    first_broken_event_id: int
    reason: str
    def __init__(self, repository_id: _Optional[str] = ..., chain: _Optional[str] = ..., ok: _Optional[bool] = ..., events_checked: _Optional[int] = ..., first_broken_event_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class CreateRepositoryRequest(_message.Message):
    __slots__ = ("repository_id",)
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    def __init__(self, repository_id: _Optional[str] = ...) -> None: ...

class Repository(_message.Message):
    __slots__ = ("repository_id", "tenant_id", "organization_id", "created_at")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    tenant_id: str
    organization_id: str
    created_at: str
    def __init__(self, repository_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., organization_id: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class RoleGrant(_message.Message):
    __slots__ = ("principal_id", "role", "scope", "clearance", "granted_at", "created_at", "created_by", "on_behalf_of")
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    CLEARANCE_FIELD_NUMBER: _ClassVar[int]
    GRANTED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    role: str
    scope: str
    clearance: str
    granted_at: str
    created_at: str
    created_by: str
    on_behalf_of: str
    def __init__(self, principal_id: _Optional[str] = ..., role: _Optional[str] = ..., scope: _Optional[str] = ..., clearance: _Optional[str] = ..., granted_at: _Optional[str] = ..., created_at: _Optional[str] = ..., created_by: _Optional[str] = ..., on_behalf_of: _Optional[str] = ...) -> None: ...

class GrantRoleRequest(_message.Message):
    __slots__ = ("principal_id", "role", "scope", "clearance", "on_behalf_of")
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    CLEARANCE_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    role: str
    scope: str
    clearance: str
    on_behalf_of: str
    def __init__(self, principal_id: _Optional[str] = ..., role: _Optional[str] = ..., scope: _Optional[str] = ..., clearance: _Optional[str] = ..., on_behalf_of: _Optional[str] = ...) -> None: ...

class RevokeRoleRequest(_message.Message):
    __slots__ = ("principal_id", "role", "scope", "on_behalf_of")
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    role: str
    scope: str
    on_behalf_of: str
    def __init__(self, principal_id: _Optional[str] = ..., role: _Optional[str] = ..., scope: _Optional[str] = ..., on_behalf_of: _Optional[str] = ...) -> None: ...

class RevokeRoleResponse(_message.Message):
    __slots__ = ("principal_id", "role", "scope", "revoked", "on_behalf_of")
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    role: str
    scope: str
    revoked: bool
    on_behalf_of: str
    def __init__(self, principal_id: _Optional[str] = ..., role: _Optional[str] = ..., scope: _Optional[str] = ..., revoked: _Optional[bool] = ..., on_behalf_of: _Optional[str] = ...) -> None: ...

class ListGrantsRequest(_message.Message):
    __slots__ = ("scope",)
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    scope: str
    def __init__(self, scope: _Optional[str] = ...) -> None: ...

class ListGrantsResponse(_message.Message):
    __slots__ = ("grants",)
    GRANTS_FIELD_NUMBER: _ClassVar[int]
    grants: _containers.RepeatedCompositeFieldContainer[RoleGrant]
    def __init__(self, grants: _Optional[_Iterable[_Union[RoleGrant, _Mapping]]] = ...) -> None: ...

class CreateTokenRequest(_message.Message):
    __slots__ = ("principal_id",)
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    def __init__(self, principal_id: _Optional[str] = ...) -> None: ...

class Token(_message.Message):
    __slots__ = ("token_id", "principal_id", "token", "created_at")
    TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    token_id: str
    principal_id: str
    token: str
    created_at: str
    def __init__(self, token_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., token: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class ListTokensRequest(_message.Message):
    __slots__ = ("principal_id",)
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    def __init__(self, principal_id: _Optional[str] = ...) -> None: ...

class TokenInfo(_message.Message):
    __slots__ = ("token_id", "principal_id", "created_at", "created_by", "parent_token_id", "revoked", "revoked_at", "revoked_by")
    TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    PARENT_TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_BY_FIELD_NUMBER: _ClassVar[int]
    token_id: str
    principal_id: str
    created_at: str
    created_by: str
    parent_token_id: str
    revoked: bool
    revoked_at: str
    revoked_by: str
    def __init__(self, token_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., created_at: _Optional[str] = ..., created_by: _Optional[str] = ..., parent_token_id: _Optional[str] = ..., revoked: _Optional[bool] = ..., revoked_at: _Optional[str] = ..., revoked_by: _Optional[str] = ...) -> None: ...

class ListTokensResponse(_message.Message):
    __slots__ = ("tokens",)
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    tokens: _containers.RepeatedCompositeFieldContainer[TokenInfo]
    def __init__(self, tokens: _Optional[_Iterable[_Union[TokenInfo, _Mapping]]] = ...) -> None: ...

class RevokeTokenRequest(_message.Message):
    __slots__ = ("token_id",)
    TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    token_id: str
    def __init__(self, token_id: _Optional[str] = ...) -> None: ...

class RevokeTokenResponse(_message.Message):
    __slots__ = ("token_id", "revoked")
    TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    token_id: str
    revoked: bool
    def __init__(self, token_id: _Optional[str] = ..., revoked: _Optional[bool] = ...) -> None: ...

class SetLegalHoldRequest(_message.Message):
    __slots__ = ("repository_id", "held")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    HELD_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    held: bool
    def __init__(self, repository_id: _Optional[str] = ..., held: _Optional[bool] = ...) -> None: ...

class LegalHold(_message.Message):
    __slots__ = ("repository_id", "legal_hold", "changed_at")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    LEGAL_HOLD_FIELD_NUMBER: _ClassVar[int]
    CHANGED_AT_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    legal_hold: bool
    changed_at: str
    def __init__(self, repository_id: _Optional[str] = ..., legal_hold: _Optional[bool] = ..., changed_at: _Optional[str] = ...) -> None: ...
