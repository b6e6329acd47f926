from ameide_proto.v1 import common_pb2 as _common_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Scope(_message.Message):
    __slots__ = ("tenant_id", "organization_id", "repository_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    organization_id: str
    repository_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., organization_id: _Optional[str] = ..., repository_id: _Optional[str] = ...) -> None: ...

class PrincipalBlock(_message.Message):
    __slots__ = ("principal_id", "roles", "purpose", "on_behalf_of")
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    roles: _containers.RepeatedScalarFieldContainer[str]
    purpose: str
    on_behalf_of: str
    def __init__(self, principal_id: _Optional[str] = ..., roles: _Optional[_Iterable[str]] = ..., purpose: _Optional[str] = ..., on_behalf_of: _Optional[str] = ...) -> None: ...

class Selector(_message.Message):
    __slots__ = ("kind", "baseline_id", "version_ids")
    KIND_FIELD_NUMBER: _ClassVar[int]
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_IDS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    baseline_id: str
    version_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, kind: _Optional[str] = ..., baseline_id: _Optional[str] = ..., version_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class Expand(_message.Message):
    __slots__ = ("hops", "relationship_types", "max_nodes")
    HOPS_FIELD_NUMBER: _ClassVar[int]
    RELATIONSHIP_TYPES_FIELD_NUMBER: _ClassVar[int]
    MAX_NODES_FIELD_NUMBER: _ClassVar[int]
    hops: int
    relationship_types: _containers.RepeatedScalarFieldContainer[str]
    max_nodes: int
    def __init__(self, hops: _Optional[int] = ..., relationship_types: _Optional[_Iterable[str]] = ..., max_nodes: _Optional[int] = ...) -> None: ...

class Budget(_message.Message):
    __slots__ = ("max_items", "max_chars")
    MAX_ITEMS_FIELD_NUMBER: _ClassVar[int]
    MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    max_items: int
    max_chars: int
    def __init__(self, max_items: _Optional[int] = ..., max_chars: _Optional[int] = ...) -> None: ...

class ReadContextRequest(_message.Message):
    __slots__ = ("scope", "principal", "selector", "query", "element_ids", "version_ids", "as_of", "valid_at", "include_evidence", "expand", "budget", "detail_level", "explain")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    VERSION_IDS_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    VALID_AT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    EXPAND_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    DETAIL_LEVEL_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    scope: Scope
    principal: PrincipalBlock
    selector: Selector
    query: str
    element_ids: _containers.RepeatedScalarFieldContainer[str]
    version_ids: _containers.RepeatedScalarFieldContainer[str]
    as_of: str
    valid_at: str
    include_evidence: bool
    expand: Expand
    budget: Budget
    detail_level: str
    explain: bool
    def __init__(self, scope: _Optional[_Union[Scope, _Mapping]] = ..., principal: _Optional[_Union[PrincipalBlock, _Mapping]] = ..., selector: _Optional[_Union[Selector, _Mapping]] = ..., query: _Optional[str] = ..., element_ids: _Optional[_Iterable[str]] = ..., version_ids: _Optional[_Iterable[str]] = ..., as_of: _Optional[str] = ..., valid_at: _Optional[str] = ..., include_evidence: _Optional[bool] = ..., expand: _Optional[_Union[Expand, _Mapping]] = ..., budget: _Optional[_Union[Budget, _Mapping]] = ..., detail_level: _Optional[str] = ..., explain: _Optional[bool] = ...) -> None: ...

class SelectorUsed(_message.Message):
    __slots__ = ("kind", "baseline_id", "as_of", "valid_at", "resolved_at", "baselines")
    class BaselinesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    KIND_FIELD_NUMBER: _ClassVar[int]
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    VALID_AT_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_AT_FIELD_NUMBER: _ClassVar[int]
    BASELINES_FIELD_NUMBER: _ClassVar[int]
    kind: str
    baseline_id: str
    as_of: str
    valid_at: str
    resolved_at: str
    baselines: _containers.ScalarMap[str, str]
    def __init__(self, kind: _Optional[str] = ..., baseline_id: _Optional[str] = ..., as_of: _Optional[str] = ..., valid_at: _Optional[str] = ..., resolved_at: _Optional[str] = ..., baselines: _Optional[_Mapping[str, str]] = ...) -> None: ...

class Excerpt(_message.Message):
    __slots__ = ("chunk_key", "start", "end")
    CHUNK_KEY_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    chunk_key: str
    start: int
    end: int
    def __init__(self, chunk_key: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("repository_id", "element_id", "version_id", "excerpt")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    EXCERPT_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    element_id: str
    version_id: str
    excerpt: Excerpt
    def __init__(self, repository_id: _Optional[str] = ..., element_id: _Optional[str] = ..., version_id: _Optional[str] = ..., excerpt: _Optional[_Union[Excerpt, _Mapping]] = ...) -> None: ...

class RelationshipStep(_message.Message):
    __slots__ = ("relationship_id", "type_key", "from_element_id", "to_element_id")
    RELATIONSHIP_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_KEY_FIELD_NUMBER: _ClassVar[int]
    FROM_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TO_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    relationship_id: str
    type_key: str
    from_element_id: str
    to_element_id: str
    def __init__(self, relationship_id: _Optional[str] = ..., type_key: _Optional[str] = ..., from_element_id: _Optional[str] = ..., to_element_id: _Optional[str] = ...) -> None: ...

class ContextItem(_message.Message):
    __slots__ = ("repository_id", "element_id", "version_id", "title", "content", "source_kind", "provenance", "why_included", "score", "citations", "relationship_path", "erased", "score_breakdown", "lifecycle")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    WHY_INCLUDED_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    RELATIONSHIP_PATH_FIELD_NUMBER: _ClassVar[int]
    ERASED_FIELD_NUMBER: _ClassVar[int]
    SCORE_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    element_id: str
    version_id: str
    title: str
    content: str
    source_kind: str
    provenance: _common_pb2.Provenance
    why_included: str
    score: float
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    relationship_path: _containers.RepeatedCompositeFieldContainer[RelationshipStep]
    erased: bool
    score_breakdown: _struct_pb2.Struct
    lifecycle: _struct_pb2.Struct
    def __init__(self, repository_id: _Optional[str] = ..., element_id: _Optional[str] = ..., version_id: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., source_kind: _Optional[str] = ..., provenance: _Optional[_Union[_common_pb2.Provenance, _Mapping]] = ..., why_included: _Optional[str] = ..., score: _Optional[float] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., relationship_path: _Optional[_Iterable[_Union[RelationshipStep, _Mapping]]] = ..., erased: _Optional[bool] = ..., score_breakdown: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., lifecycle: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReadContextResponse(_message.Message):
    __slots__ = ("context_id", "scope", "selector_used", "items", "context_block", "truncated", "trace")
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_USED_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_BLOCK_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    context_id: str
    scope: Scope
    selector_used: SelectorUsed
    items: _containers.RepeatedCompositeFieldContainer[ContextItem]
    context_block: str
    truncated: bool
    trace: _struct_pb2.Struct
    def __init__(self, context_id: _Optional[str] = ..., scope: _Optional[_Union[Scope, _Mapping]] = ..., selector_used: _Optional[_Union[SelectorUsed, _Mapping]] = ..., items: _Optional[_Iterable[_Union[ContextItem, _Mapping]]] = ..., context_block: _Optional[str] = ..., truncated: _Optional[bool] = ..., trace: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class VerifyCitationsRequest(_message.Message):
    __slots__ = ("context_id", "citations")
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    context_id: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    def __init__(self, context_id: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ...) -> None: ...

class CitationVerdict(_message.Message):
    __slots__ = ("citation", "valid", "reason")
    CITATION_FIELD_NUMBER: _ClassVar[int]
    VALID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    citation: Citation
    valid: bool
    reason: str
    def __init__(self, citation: _Optional[_Union[Citation, _Mapping]] = ..., valid: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class VerifyCitationsResponse(_message.Message):
    __slots__ = ("context_id", "all_valid", "valid", "invalid", "results")
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    ALL_VALID_FIELD_NUMBER: _ClassVar[int]
    VALID_FIELD_NUMBER: _ClassVar[int]
    INVALID_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    context_id: str
    all_valid: bool
    valid: int
    invalid: int
    results: _containers.RepeatedCompositeFieldContainer[CitationVerdict]
    def __init__(self, context_id: _Optional[str] = ..., all_valid: _Optional[bool] = ..., valid: _Optional[int] = ..., invalid: _Optional[int] = ..., results: _Optional[_Iterable[_Union[CitationVerdict, _Mapping]]] = ...) -> None: ...

class ReplayRequest(_message.Message):
    __slots__ = ("context_id", "as_recorded")
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    AS_RECORDED_FIELD_NUMBER: _ClassVar[int]
    context_id: str
    as_recorded: bool
    def __init__(self, context_id: _Optional[str] = ..., as_recorded: _Optional[bool] = ...) -> None: ...

class ReplayDifference(_message.Message):
    __slots__ = ("element_id", "change", "before_version_id", "before_rank", "after_version_id", "after_rank")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    BEFORE_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    BEFORE_RANK_FIELD_NUMBER: _ClassVar[int]
    AFTER_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_RANK_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    change: str
    before_version_id: str
    before_rank: int
    after_version_id: str
    after_rank: int
    def __init__(self, element_id: _Optional[str] = ..., change: _Optional[str] = ..., before_version_id: _Optional[str] = ..., before_rank: _Optional[int] = ..., after_version_id: _Optional[str] = ..., after_rank: _Optional[int] = ...) -> None: ...

class ReplaySelectors(_message.Message):
    __slots__ = ("before", "after")
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    before: SelectorUsed
    after: SelectorUsed
    def __init__(self, before: _Optional[_Union[SelectorUsed, _Mapping]] = ..., after: _Optional[_Union[SelectorUsed, _Mapping]] = ...) -> None: ...

class ReplayResponse(_message.Message):
    __slots__ = ("context_id", "replay_context_id", "replayed_as", "as_recorded", "identical", "differences", "selector_used", "error")
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    REPLAY_CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_AS_FIELD_NUMBER: _ClassVar[int]
    AS_RECORDED_FIELD_NUMBER: _ClassVar[int]
    IDENTICAL_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCES_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_USED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    context_id: str
    replay_context_id: str
    replayed_as: str
    as_recorded: bool
    identical: bool
    differences: _containers.RepeatedCompositeFieldContainer[ReplayDifference]
    selector_used: ReplaySelectors
    error: _common_pb2.ErrorInfo
    def __init__(self, context_id: _Optional[str] = ..., replay_context_id: _Optional[str] = ..., replayed_as: _Optional[str] = ..., as_recorded: _Optional[bool] = ..., identical: _Optional[bool] = ..., differences: _Optional[_Iterable[_Union[ReplayDifference, _Mapping]]] = ..., selector_used: _Optional[_Union[ReplaySelectors, _Mapping]] = ..., error: _Optional[_Union[_common_pb2.ErrorInfo, _Mapping]] = ...) -> None: ...

class DiffBaselinesRequest(_message.Message):
    __slots__ = ("from_baseline_id", "to_baseline_id")
    FROM_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    TO_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    from_baseline_id: str
    to_baseline_id: str
    def __init__(self, from_baseline_id: _Optional[str] = ..., to_baseline_id: _Optional[str] = ...) -> None: ...

class DiffSide(_message.Message):
    __slots__ = ("baseline_id", "version_id")
    BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    baseline_id: str
    version_id: str
    def __init__(self, baseline_id: _Optional[str] = ..., version_id: _Optional[str] = ...) -> None: ...

class DiffEntry(_message.Message):
    __slots__ = ("element_id", "title", "from_side", "to_side", "diff")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    FROM_SIDE_FIELD_NUMBER: _ClassVar[int]
    TO_SIDE_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    title: str
    from_side: DiffSide
    to_side: DiffSide
    diff: str
    def __init__(self, element_id: _Optional[str] = ..., title: _Optional[str] = ..., from_side: _Optional[_Union[DiffSide, _Mapping]] = ..., to_side: _Optional[_Union[DiffSide, _Mapping]] = ..., diff: _Optional[str] = ...) -> None: ...

class BaselineDiff(_message.Message):
    __slots__ = ("from_baseline_id", "to_baseline_id", "added", "changed", "removed")
    FROM_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    TO_BASELINE_ID_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    from_baseline_id: str
    to_baseline_id: str
    added: _containers.RepeatedCompositeFieldContainer[DiffEntry]
    changed: _containers.RepeatedCompositeFieldContainer[DiffEntry]
    removed: _containers.RepeatedCompositeFieldContainer[DiffEntry]
    def __init__(self, from_baseline_id: _Optional[str] = ..., to_baseline_id: _Optional[str] = ..., added: _Optional[_Iterable[_Union[DiffEntry, _Mapping]]] = ..., changed: _Optional[_Iterable[_Union[DiffEntry, _Mapping]]] = ..., removed: _Optional[_Iterable[_Union[DiffEntry, _Mapping]]] = ...) -> None: ...

class EvaluateRequest(_message.Message):
    __slots__ = ("repository_id", "dataset", "k", "selector", "include_per_query")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    DATASET_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_PER_QUERY_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    dataset: str
    k: int
    selector: str
    include_per_query: bool
    def __init__(self, repository_id: _Optional[str] = ..., dataset: _Optional[str] = ..., k: _Optional[int] = ..., selector: _Optional[str] = ..., include_per_query: _Optional[bool] = ...) -> None: ...

class EvaluateResponse(_message.Message):
    __slots__ = ("repository_id", "k", "selector", "queries", "pipelines", "per_query")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    PIPELINES_FIELD_NUMBER: _ClassVar[int]
    PER_QUERY_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    k: int
    selector: str
    queries: int
    pipelines: _struct_pb2.Struct
    per_query: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Struct]
    def __init__(self, repository_id: _Optional[str] = ..., k: _Optional[int] = ..., selector: _Optional[str] = ..., queries: _Optional[int] = ..., pipelines: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., per_query: _Optional[_Iterable[_Union[_struct_pb2.Struct, _Mapping]]] = ...) -> None: ...
