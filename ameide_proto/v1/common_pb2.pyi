from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Provenance(_message.Message):
    __slots__ = ("actor_type", "actor_id", "tool_id", "source_repo", "commit_sha", "path", "on_behalf_of")
    ACTOR_TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REPO_FIELD_NUMBER: _ClassVar[int]
    COMMIT_SHA_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    actor_type: str
    actor_id: str
    tool_id: str
    source_repo: str
    commit_sha: str
    path: str
    on_behalf_of: str
    def __init__(self, actor_type: _Optional[str] = ..., actor_id: _Optional[str] = ..., tool_id: _Optional[str] = ..., source_repo: _Optional[str] = ..., commit_sha: _Optional[str] = ..., path: _Optional[str] = ..., on_behalf_of: _Optional[str] = ...) -> None: ...

class Element(_message.Message):
    __slots__ = ("element_id", "repository_id", "element_kind", "type_key", "source_kind", "classification", "created_at", "created_by", "head_version_id", "retired_at", "retired_at_as_of")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_KIND_FIELD_NUMBER: _ClassVar[int]
    TYPE_KEY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    HEAD_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    RETIRED_AT_FIELD_NUMBER: _ClassVar[int]
    RETIRED_AT_AS_OF_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    repository_id: str
    element_kind: str
    type_key: str
    source_kind: str
    classification: str
    created_at: str
    created_by: str
    head_version_id: str
    retired_at: str
    retired_at_as_of: bool
    def __init__(self, element_id: _Optional[str] = ..., repository_id: _Optional[str] = ..., element_kind: _Optional[str] = ..., type_key: _Optional[str] = ..., source_kind: _Optional[str] = ..., classification: _Optional[str] = ..., created_at: _Optional[str] = ..., created_by: _Optional[str] = ..., head_version_id: _Optional[str] = ..., retired_at: _Optional[str] = ..., retired_at_as_of: _Optional[bool] = ...) -> None: ...

class Erasure(_message.Message):
    __slots__ = ("erased_at", "erased_by", "reason", "copies_erased", "derived_erased", "proposals_redacted", "proposals_withdrawn", "read_contexts_redacted", "not_erased")
    ERASED_AT_FIELD_NUMBER: _ClassVar[int]
    ERASED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    COPIES_ERASED_FIELD_NUMBER: _ClassVar[int]
    DERIVED_ERASED_FIELD_NUMBER: _ClassVar[int]
    PROPOSALS_REDACTED_FIELD_NUMBER: _ClassVar[int]
    PROPOSALS_WITHDRAWN_FIELD_NUMBER: _ClassVar[int]
    READ_CONTEXTS_REDACTED_FIELD_NUMBER: _ClassVar[int]
    NOT_ERASED_FIELD_NUMBER: _ClassVar[int]
    erased_at: str
    erased_by: str
    reason: str
    copies_erased: int
    derived_erased: int
    proposals_redacted: int
    proposals_withdrawn: int
    read_contexts_redacted: int
    not_erased: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, erased_at: _Optional[str] = ..., erased_by: _Optional[str] = ..., reason: _Optional[str] = ..., copies_erased: _Optional[int] = ..., derived_erased: _Optional[int] = ..., proposals_redacted: _Optional[int] = ..., proposals_withdrawn: _Optional[int] = ..., read_contexts_redacted: _Optional[int] = ..., not_erased: _Optional[_Iterable[str]] = ...) -> None: ...

class Version(_message.Message):
    __slots__ = ("version_id", "element_id", "seq", "parent_version_id", "title", "metadata", "content_sha256", "recorded_at", "provenance", "erased", "erasure", "body")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    PARENT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SHA256_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    ERASED_FIELD_NUMBER: _ClassVar[int]
    ERASURE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    element_id: str
    seq: int
    parent_version_id: str
    title: str
    metadata: _struct_pb2.Struct
    content_sha256: str
    recorded_at: str
    provenance: Provenance
    erased: bool
    erasure: Erasure
    body: str
    def __init__(self, version_id: _Optional[str] = ..., element_id: _Optional[str] = ..., seq: _Optional[int] = ..., parent_version_id: _Optional[str] = ..., title: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., content_sha256: _Optional[str] = ..., recorded_at: _Optional[str] = ..., provenance: _Optional[_Union[Provenance, _Mapping]] = ..., erased: _Optional[bool] = ..., erasure: _Optional[_Union[Erasure, _Mapping]] = ..., body: _Optional[str] = ...) -> None: ...

class Relationship(_message.Message):
    __slots__ = ("relationship_id", "repository_id", "relationship_kind", "type_key", "source_element_id", "target_element_id", "metadata", "recorded_at", "recorded_by", "retired_at")
    RELATIONSHIP_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    RELATIONSHIP_KIND_FIELD_NUMBER: _ClassVar[int]
    TYPE_KEY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    RECORDED_BY_FIELD_NUMBER: _ClassVar[int]
    RETIRED_AT_FIELD_NUMBER: _ClassVar[int]
    relationship_id: str
    repository_id: str
    relationship_kind: str
    type_key: str
    source_element_id: str
    target_element_id: str
    metadata: _struct_pb2.Struct
    recorded_at: str
    recorded_by: str
    retired_at: str
    def __init__(self, relationship_id: _Optional[str] = ..., repository_id: _Optional[str] = ..., relationship_kind: _Optional[str] = ..., type_key: _Optional[str] = ..., source_element_id: _Optional[str] = ..., target_element_id: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., recorded_at: _Optional[str] = ..., recorded_by: _Optional[str] = ..., retired_at: _Optional[str] = ...) -> None: ...

class ErrorInfo(_message.Message):
    __slots__ = ("code", "message", "details")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    details: _struct_pb2.Struct
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ..., details: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
